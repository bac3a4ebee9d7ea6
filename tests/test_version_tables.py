"""The versions page's LLM-API tables are rendered from the schema snapshots, not typed."""

from __future__ import annotations

from pathlib import Path

from specdec_guide.site.hooks import expand_markers
from specdec_guide.site.version_tables import MARKER, decoding_rows, markdown
from specdec_guide.releases.tracks import Registry

ROOT = Path(__file__).resolve().parents[1]


def test_versions_page_carries_the_marker():
    page = (ROOT / "docs" / "speculative_decoding" / "versions.md").read_text()
    assert MARKER in page
    assert "`Eagle3` |" not in page  # the spelling table is generated, never typed into the page


def test_tables_follow_the_snapshots():
    registry = Registry()
    tracks = [registry.resolve("1.1.0"), registry.resolve("1.2.1")]
    rows = {r[0]: r[1:] for r in decoding_rows(tracks)}
    assert rows["`DraftTarget`"] == ["accepted: `DraftTargetDecodingConfig`"] * 2
    assert all(cell.startswith("**refused**") for cell in rows["`Eagle3`"])
    assert rows["`SaveState`"][0].startswith("**refused**") and rows["`SaveState`"][1].startswith("accepted")
    text = expand_markers(f"before\n{MARKER}\nafter\n", "page.md", ROOT, registry)
    assert MARKER not in text and "`speculative_model` (alias `speculative_model_dir`)" in text
    text = markdown(registry)
    assert text.count("gh-pages `") == len(registry.tracks)  # one source cell per track
    row = next(line for line in text.splitlines() if line.startswith("| `DraftTargetDecodingConfig` |"))
    assert "needs `speculative_model_dir`" in row and "needs `speculative_model`;" in row
    assert "| `SaveHiddenStatesDecodingConfig` | not in this release |" in text
