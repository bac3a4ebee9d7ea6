"""Per-track snippets that differ only in the release are written from one template (snippets/PER_TRACK.yaml).

The written copies are current; a change to a template or to a track's entry shows as stale; a snippet
kept as a file per track that is only a copy with the release swapped is reported (it belongs in the
templates); a placeholder the module does not know is a located error.
"""

from __future__ import annotations

import dataclasses
import re
import shutil
from pathlib import Path

import pytest

from specdec_guide.diagnostics import UserError
from specdec_guide.regen import hint
from specdec_guide.site import track_snippets
from registry import registry

ROOT = Path(__file__).resolve().parents[1]
#: Folders holding one subfolder of snippets per track.
PER_TRACK_SNIPPET_DIRS = ("llm_api", "quickstart")


def test_the_written_snippets_are_their_templates():
    stale = track_snippets.stale(ROOT, registry())
    assert not stale, f"written from snippets/PER_TRACK.yaml but stale: {stale} (regenerate: {hint('track-snippets')})"
    assert len(track_snippets.expected(ROOT, registry())) == len(track_snippets.load(ROOT)) * len(registry().tracks)


def _copy_snippets(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "snippets", tmp_path / "snippets")
    return tmp_path


def test_a_changed_template_or_track_entry_is_stale_until_written(tmp_path):
    root = _copy_snippets(tmp_path)
    reg = registry()
    first = reg.tracks[0]
    assert track_snippets.stale(root, reg) == []
    # The track's container changes in tracks.yaml: its docker_run.sh is stale, the other tracks' are not.
    moved = dataclasses.replace(first, container="nvcr.io/nvidia/tritonserver:99.01-trtllm-python-py3")
    other = type("R", (), {"tracks": [moved, *reg.tracks[1:]]})()
    assert track_snippets.stale(root, other) == [f"snippets/quickstart/{first.id}/docker_run.sh"]
    assert track_snippets.write(root, other) == [f"snippets/quickstart/{first.id}/docker_run.sh"]
    assert "tritonserver:99.01-trtllm" in (root / f"snippets/quickstart/{first.id}/docker_run.sh").read_text()
    # A template edited: every track's copy is stale.
    manifest = root / track_snippets.MANIFEST
    manifest.write_text(manifest.read_text().replace("num_nextn_predict_layers: 3", "num_nextn_predict_layers: 2"))
    assert track_snippets.stale(root, reg)[:len(reg.tracks)] == [f"snippets/llm_api/{t.id}/mtp.yaml" for t in reg.tracks]
    # A written copy edited by hand: stale.
    (root / f"snippets/llm_api/{first.id}/serve.sh").write_text("trtllm-serve x\n")
    assert f"snippets/llm_api/{first.id}/serve.sh" in track_snippets.stale(root, reg)


def test_an_unknown_placeholder_is_a_located_error(tmp_path):
    root = _copy_snippets(tmp_path)
    manifest = root / track_snippets.MANIFEST
    text = manifest.read_text()
    manifest.write_text(text.replace("trtllm={{id}}", "trtllm={{track}}", 1))
    line = next(n for n, ln in enumerate(manifest.read_text().splitlines(), 1) if "{{track}}" in ln)
    with pytest.raises(UserError, match=rf"PER_TRACK.yaml:{line}:1: .*unknown placeholder \{{\{{track\}}\}}"):
        track_snippets.load(root)
    assert track_snippets.main(["--root", str(root)]) == 2


def _normalised(text: str, track) -> str:
    for value in sorted({track.container, track.trtllm_version, track.id} - {""}, key=len, reverse=True):
        text = text.replace(value, "<release>")
    return text


@pytest.mark.parametrize("area", PER_TRACK_SNIPPET_DIRS)
def test_no_per_track_snippet_is_a_copy_with_the_release_swapped(area):
    """A file that every track holds and that reads the same once each track's id, version and container
    are blanked out is a template's job (snippets/PER_TRACK.yaml), not a copy per track."""
    tracks = registry().tracks
    templated = {k.replace("{track}", "*") for k in track_snippets.load(ROOT)}
    first = ROOT / "snippets" / area / tracks[0].id
    copies = []
    for path in sorted(p for p in first.rglob("*") if p.is_file()):
        rel = path.relative_to(first).as_posix()
        if f"{area}/*/{rel}" in templated:
            continue
        others = [ROOT / "snippets" / area / t.id / rel for t in tracks[1:]]
        if others and all(o.is_file() for o in others):
            texts = {_normalised(p.read_text(encoding="utf-8"), t)
                     for p, t in zip([path, *others], tracks)}
            if len(texts) == 1:
                copies.append(f"snippets/{area}/{{track}}/{rel}")
    assert not copies, f"copies that differ only in the release: make each a template in snippets/PER_TRACK.yaml: {copies}"


def test_the_templates_name_only_known_fields():
    for key, body in track_snippets.load(ROOT).items():
        assert set(re.findall(r"\{\{\s*(\w+)\s*\}\}", body)) <= set(track_snippets.FIELDS), key
