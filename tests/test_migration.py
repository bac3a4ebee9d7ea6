"""The migration map: both sides of every row agree with the snapshots, and the page shows it.

snippets/migration/map.yaml is the single source of the table on
docs/speculative_decoding/migration.md (rendered by the site hook). The legacy side of each row is
checked against the TensorRT-LLM 1.1.0 snapshot (flags, fill_template.py keys), each LLM API side
against the snapshot of its release.
"""

from __future__ import annotations

import shutil

import pytest

from site_build import ROOT
from specdec_guide import migration


def test_every_row_is_confirmed_by_the_snapshots():
    rows, problems = migration.check(ROOT)
    assert len(rows) >= 10
    assert not problems, "\n".join(map(str, problems))


def test_medusa_lookahead_and_redrafter_have_no_pytorch_equivalent_and_name_what_to_use():
    rows, _ = migration.load(ROOT)
    for method in ("medusa", "lookahead_decoding", "explicit_draft_tokens"):
        row = next(r for r in rows if f"--speculative_decoding_mode {method}" in r.legacy)
        for tid in migration.TRACKS:
            assert row.tracks[tid].get("none") and row.tracks[tid].get("instead"), (method, tid)


@pytest.fixture()
def copy_root(tmp_path):
    (tmp_path / "snippets/migration").mkdir(parents=True)
    shutil.copy2(ROOT / migration.MAP_PATH, tmp_path / migration.MAP_PATH)
    return tmp_path


@pytest.mark.parametrize("old,new,expect", [
    ("speculative_model_dir: /models/draft", "speculative_model: /models/draft", "speculative_model"),
    ("decoding_type: DraftTarget\n            max_draft_len: 4\n            speculative_model_dir",
     "decoding_type: Eagle3\n            max_draft_len: 4\n            speculative_model_dir", "Eagle3"),
    ("eagle_choices:x", "eagle_choice:x", "eagle_choice"),
    ("engine_only: MedusaDecodingConfig", "engine_only: NGramDecodingConfig", "TensorRT-engine only"),
])
def test_a_wrong_side_is_reported_with_its_row(copy_root, old, new, expect):
    path = copy_root / migration.MAP_PATH
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    _, problems = migration.check(copy_root)
    assert any(expect in p.message and p.path == migration.MAP_PATH and p.line > 1 for p in problems), problems


def test_the_page_carries_the_generated_table():
    from specdec_guide.site.hooks import on_page_markdown

    page = (ROOT / "docs/speculative_decoding/migration.md").read_text()
    assert migration.TABLE_MARKER in page
    rendered = on_page_markdown(page, None, {"config_file_path": str(ROOT / "mkdocs.yml")}, None)
    assert migration.TABLE_MARKER not in rendered
    for row in migration.load(ROOT)[0]:
        assert row.what in rendered
