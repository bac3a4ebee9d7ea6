"""The versions page's container-to-release map: data from the backend's branch Dockerfiles, rendered."""

from __future__ import annotations

import pytest
import yaml

from site_build import ROOT
from specdec_guide import container_map
from specdec_guide.diagnostics import UserError
from specdec_guide.validate.schema import Registry


def test_snippet_is_the_render_of_the_data():
    assert (ROOT / container_map.SNIPPET).read_text() == container_map.markdown(), \
        "snippets/versions/container_map.md is stale: python -m specdec_guide.container_map --write"
    page = (ROOT / "docs/speculative_decoding/versions.md").read_text()
    assert '--8<-- "snippets/versions/container_map.md"' in page


def test_each_track_container_ships_its_release():
    """The container each track names ships that track's TensorRT-LLM, per the branch Dockerfile."""
    rows = {f"nvcr.io/nvidia/tritonserver:{r['tag']}": r for r in container_map.load()}
    for track in Registry().tracks:
        row = rows.get(track.container)
        assert row, f"{track.id}: {track.container} is not in the container map"
        assert row["tensorrt_llm"] == track.trtllm_version, f"{track.container} ships {row['tensorrt_llm']}"


def test_rows_are_classified_and_release_candidates_named():
    text = container_map.markdown()
    assert "| `25.12-trtllm-python-py3` | 1.1.0 | `release/1.1` | track 1.1.0 |" in text
    assert "| `26.03-trtllm-python-py3` | 1.2.0rc8 | `release/1.2` | a release candidate: neither track (" in text
    assert "| `26.04-trtllm-python-py3` | 1.2.1 | `release/1.2.1` | track 1.2.1 (" in text
    # From r26.03 a build secret can replace the pinned wheel: those rows say they give the fallback.
    for row in container_map.load():
        fallback = "fallback pin" in (row.get("note") or "")
        assert fallback is (row["tag"] >= "26.03"), row["tag"]
    for row in container_map.load():
        assert len(row["commit"]) == 40 and row["branch"] == "r" + row["tag"].split("-")[0]


def test_a_row_without_its_source_is_refused(tmp_path):
    bad = tmp_path / "containers.yaml"
    bad.write_text(yaml.safe_dump({"containers": [{"tag": "25.12-trtllm-python-py3", "tensorrt_llm": "1.1.0"}]}))
    with pytest.raises(UserError, match=r"containers\[0\] lacks branch, commit, app_files_from"):
        container_map.load(bad)
