"""The support matrices (schemas/<track>/support.yaml) and their page.

Every pinned track has a file; every cell other than unknown names a source of its file; values
come from each table's vocabulary; the page renders a tab per track whose every cell links to its
numbered note.
"""

from __future__ import annotations

import re
import shutil

import pytest
import yaml

from registry import tracks
from specdec_guide.diagnostics import UserError
from specdec_guide.site import support


@pytest.mark.parametrize("track", tracks())
def test_every_track_has_matrices_and_every_cell_a_source_or_unknown(track):
    data = support.load(track)
    cells = [(s, row[support.ROW_KEY[s]], m, row["cells"][m]) for s in support.VALUES
             for row in data[s] for m in data["methods"]]
    assert len(cells) >= 6 * (10 + 10 + 10)
    for section, row, method, cell in cells:
        assert cell["value"] in support.VALUES[section], (section, row, method)
        if cell["value"] != "unknown":
            assert cell.get("source"), (section, row, method)
            assert all(k in data["sources"] for k in cell["source"]), (section, row, method)


def test_the_matrices_cover_what_readers_bring():
    data = support.load(tracks()[0])
    targets = " ".join(r["target"] for r in data["targets"])
    for name in ("Llama 3", "Qwen3", "Gemma", "Mistral", "DeepSeek", "gpt-oss"):
        assert name.lower() in targets.lower(), name
    features = " ".join(r["feature"] for r in data["features"]).lower()
    for name in ("guided", "logprob", "block reuse", "chunked", "cuda graph", "overlap", "disaggregated"):
        assert name in features, name
    knobs = {r["knob"] for r in data["knobs"]}
    assert {"max_concurrency", "eagle3_one_model", "is_public_pool", "eagle_choices"} <= knobs


@pytest.mark.parametrize("change, message", [
    (lambda d: d["targets"][0]["cells"]["ngram"].update(value="maybe"), "value must be one of"),
    (lambda d: d["targets"][0]["cells"]["ngram"].update(value="supported", source=[]),
     "a cell other than unknown names its source"),
    (lambda d: d["knobs"][0]["cells"]["mtp"].update(source=["nowhere"]), "sources nowhere are not in"),
])
def test_a_cell_without_a_source_or_with_a_bad_value_is_refused(tmp_path, monkeypatch, change, message):
    track = tracks()[0]
    into = tmp_path / track
    into.mkdir()
    data = yaml.safe_load(support.path_for(track).read_text())
    change(data)
    (into / "support.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    monkeypatch.setattr(support, "SCHEMAS", tmp_path)
    with pytest.raises(UserError, match=message):
        support.load(track)


def test_the_page_has_a_tab_per_track_and_every_cell_links_to_its_note():
    page = support.markdown()
    for track in tracks():
        assert f'=== "TensorRT-LLM {track}"' in page
        prefix = "s" + track.replace(".", "")
        links = set(re.findall(rf"\(#({prefix}-\d+)\)", page))
        notes = set(re.findall(rf'<span id="({prefix}-\d+)"></span>', page))
        assert links and links == notes, track
