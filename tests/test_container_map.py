"""The versions page's container-to-release map: data from the backend's branch Dockerfiles, rendered."""

from __future__ import annotations

import pytest
import yaml

from site_build import ROOT
from specdec_guide.releases import containers
from specdec_guide.diagnostics import UserError
from specdec_guide.regen import hint
from specdec_guide.releases.tracks import Registry


def test_snippet_is_the_render_of_the_data():
    assert (ROOT / containers.SNIPPET).read_text() == containers.markdown(), \
        f"snippets/versions/container_map.md is stale: {hint('container-map')}"
    page = (ROOT / "docs/speculative_decoding/versions.md").read_text()
    assert '--8<-- "snippets/versions/container_map.md"' in page


def test_each_track_container_ships_its_release():
    """The container each track names ships that track's TensorRT-LLM, per the branch Dockerfile and
    per Triton's own compatibility matrix."""
    rows = {f"nvcr.io/nvidia/tritonserver:{r['tag']}": r for r in containers.load()}
    for track in Registry().tracks:
        row = rows.get(track.container)
        assert row, f"{track.id}: {track.container} is not in the container map"
        assert row["tensorrt_llm"] == track.trtllm_version, f"{track.container} ships {row['tensorrt_llm']}"
        assert row["matrix_tensorrt_llm"] == track.trtllm_version, f"Triton's matrix: {row['matrix_tensorrt_llm']}"


def test_rows_are_classified_and_release_candidates_named():
    text = containers.markdown()
    assert "| `25.12-trtllm-python-py3` | 1.1.0 | 1.1.0 | `release/1.1` | track 1.1.0 |" in text
    assert "| `26.04-trtllm-python-py3` | 1.2.1 | 1.2.1 | `release/1.2.1` | track 1.2.1 (" in text
    # From r26.03 a build secret can replace the pinned wheel: those rows say they give the fallback.
    for row in containers.load():
        fallback = "fallback pin" in (row.get("note") or "") + (row.get("matrix_note") or "")
        assert fallback is (row["tag"] >= "26.03"), row["tag"]
    for row in containers.load():
        assert len(row["commit"]) == 40 and row["branch"] == "r" + row["tag"].split("-")[0]


# Triton's compatibility matrix (server docs/introduction/compatibility.md at the commit containers.yaml
# records) gives, for these two tags, another TensorRT-LLM than the backend Dockerfile's default.
MATRIX_DIFFERS = {"25.11-trtllm-python-py3": ("1.0.3.2510", "1.2.0rc2"), "26.03-trtllm-python-py3": ("1.2.0", "1.2.0rc8")}


def test_the_map_agrees_with_tritons_matrix_or_says_why_not():
    src = containers.matrix_source()
    assert src["repo"] == "triton-inference-server/server" and src["path"] == "docs/introduction/compatibility.md"
    rows = containers.load()
    differ = {r["tag"]: (r["matrix_tensorrt_llm"], r["tensorrt_llm"]) for r in rows
              if r["matrix_tensorrt_llm"] != r["tensorrt_llm"]}
    assert differ == MATRIX_DIFFERS
    text = containers.markdown()
    assert f"/blob/{src['commit']}/docs/introduction/compatibility.md" in text
    for tag, (shipped, pinned) in MATRIX_DIFFERS.items():
        assert f"| `{tag}` | {shipped} | {pinned} | " in text and f"- `{tag}`: " in text
        assert "no track (the two columns differ" in text.split(f"| `{tag}` |")[1].split("\n")[0]


@pytest.mark.parametrize("change,message", [
    ({"matrix_tensorrt_llm": "1.2.0rc2"}, "matrix_note on a row where"),
    ({"matrix_note": None}, "say where and why in matrix_note"),
])
def test_a_difference_without_its_note_is_refused(tmp_path, change, message):
    data = yaml.safe_load(containers.DATA.read_text())
    row = next(r for r in data["containers"] if r["tag"] == "25.11-trtllm-python-py3")
    row.update(change)
    bad = tmp_path / "containers.yaml"
    bad.write_text(yaml.safe_dump(data))
    with pytest.raises(UserError, match=message):
        containers.load(bad)


def test_a_row_without_its_source_is_refused(tmp_path):
    bad = tmp_path / "containers.yaml"
    bad.write_text(yaml.safe_dump({"containers": [{"tag": "25.12-trtllm-python-py3", "tensorrt_llm": "1.1.0"}]}))
    with pytest.raises(UserError, match=r"containers\[0\] lacks branch, commit, matrix_tensorrt_llm, app_files_from"):
        containers.load(bad)
