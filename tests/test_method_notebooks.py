"""The per-method GPU notebooks (04-07), checked on the CPU beyond their cells' schema check.

The cell checker (tests/test_gpu_notebooks_static.py) compares every cell with the release's
snapshot. These tests add what it does not know:

* every ``%%writefile`` config is byte for byte a snippet of the guide, so the YAML a page
  shows and the YAML a notebook runs are one file (and that file is validated on its own);
* every request a notebook sends to Triton (curl ``-d`` bodies, ``post_json`` dicts) parses
  and names only inputs of the llmapi model of the notebook's release, since the generate
  endpoint silently drops any other key;
* each notebook asserts greedy identity with its baseline and accepted drafts > 0;
* the header names the container and release that tracks.yaml pairs.
* every curl cell runs as written (address aside) against the CPU stand-in of the llmapi model.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import jupytext
import pytest

from site_build import ROOT
from specdec_guide.notebooks import read_meta
from specdec_guide.validate import kinds
from specdec_guide.validate.schema import Registry

METHOD_NOTEBOOKS = sorted(p for p in (ROOT / "notebooks").glob("0[4-7]_*.py"))
REG = Registry()
_CURL_BODY = re.compile(r"-d\s+'(\{.*?\})'", re.S)


def _code_cells(path: Path) -> list[str]:
    return [c.source for c in jupytext.read(path).cells if c.cell_type == "code"]


def _track(path: Path, text: str = ""):
    return REG.resolve(kinds.declared_track(text) or read_meta(path)["trtllm_version"])


def test_the_four_method_notebooks_exist():
    assert [p.stem for p in METHOD_NOTEBOOKS] == ["04_ngram", "05_draft_target", "06_eagle3", "07_mtp"]


@pytest.mark.parametrize("path", METHOD_NOTEBOOKS, ids=lambda p: p.name)
def test_written_configs_are_the_guides_snippets(path):
    written = [c for c in _code_cells(path) if c.startswith("%%writefile ")]
    assert written, f"{path.name} writes no configuration file"
    for cell in written:
        head, _, body = cell.partition("\n")
        name = head.split()[-1]
        track = _track(path, body)
        candidates = [ROOT / "snippets/notebooks" / path.stem / name, ROOT / "snippets/llm_api" / track.id / name]
        found = [c for c in candidates if c.is_file()]
        assert found, f"{path.name}: {name} is not one of the guide's snippets ({', '.join(map(str, candidates))})"
        assert body.strip("\n") == found[0].read_text().strip("\n"), f"{path.name}: {name} differs from {found[0]}"


def _request_bodies(path: Path) -> list[dict]:
    bodies = []
    for cell in _code_cells(path):
        if cell.startswith("%%bash"):
            for raw in _CURL_BODY.findall(cell):
                bodies.append(json.loads(raw))  # a body the shell passes verbatim must be valid JSON
        elif not cell.startswith("%%"):
            for node in ast.walk(ast.parse(cell)):
                if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "post_json" \
                        and "/v2/models/" in ast.literal_eval(node.args[0]) and isinstance(node.args[1], ast.Dict):
                    bodies.append({ast.literal_eval(k): None for k in node.args[1].keys})
    return bodies


@pytest.mark.parametrize("path", METHOD_NOTEBOOKS, ids=lambda p: p.name)
def test_triton_requests_name_only_inputs_of_the_llmapi_model(path):
    inputs = {i["name"] for i in _track(path).triton["llmapi_model"]["inputs"]}
    bodies = _request_bodies(path)
    assert len(bodies) >= 3, f"{path.name}: expected curl generate, curl generate_stream and a post_json request"
    for body in bodies:
        unknown = sorted(set(body) - inputs)
        assert not unknown, f"{path.name}: {unknown} would be silently ignored by the generate endpoint"
        assert "text_input" in body and "sampling_param_max_tokens" in body


def test_a_wrong_request_key_is_caught(tmp_path):
    """The check above can fail: a notebook sending the OpenAI-style max_tokens is reported."""
    bad = tmp_path / "nb.py"
    bad.write_text((ROOT / "notebooks/04_ngram.py").read_text().replace('"sampling_param_max_tokens": 64', '"max_tokens": 64'))
    inputs = {i["name"] for i in _track(ROOT / "notebooks/04_ngram.py").triton["llmapi_model"]["inputs"]}
    assert any("max_tokens" in set(b) - inputs for b in _request_bodies(bad))


@pytest.mark.parametrize("path", METHOD_NOTEBOOKS, ids=lambda p: p.name)
def test_each_notebook_asserts_greedy_identity_and_accepted_drafts(path):
    text = "\n".join(_code_cells(path))
    assert re.search(r"assert \w+\.token_ids == \w+\.token_ids", text), f"{path.name}: no greedy-identity assertion"
    assert re.search(r"assert .*total_accepted_draft_tokens.* > 0", text), f"{path.name}: no accepted-drafts assertion"
    assert re.search(r'assert int\(triton\["total_accepted_draft_tokens"\]\) > 0', text), \
        f"{path.name}: the Triton per-request acceptance counters are not asserted"


@pytest.mark.parametrize("path", METHOD_NOTEBOOKS, ids=lambda p: p.name)
def test_header_pins_a_known_release_and_its_container(path):
    meta = read_meta(path)
    assert meta["tier"] == "gpu" and meta["track"] == meta["trtllm_version"]
    track = REG.resolve(meta["trtllm_version"])
    assert meta["container"] == track.container, f"{path.name}: {meta['container']} is not {track.id}'s container"


# ---- the notebooks' curl cells, run against the CPU stand-in ----------------------------------
@pytest.fixture(scope="module")
def stand_in(stand_in_server):
    """The session's tritonserver (tests/stand_in.py): its ``ngram`` model is the NGram template on
    the CPU engine, rendered as the notebooks' is; the cells' URLs are pointed at it below."""
    return stand_in_server


@pytest.mark.triton
@pytest.mark.parametrize("path", METHOD_NOTEBOOKS, ids=lambda p: p.name)
def test_curl_cells_run_against_the_cpu_stand_in(path, stand_in, tmp_path):
    """Every curl cell of the notebook, as written, with only the address changed: the request is
    accepted, /generate answers with text and the draft counters, /generate_stream with events."""
    import subprocess

    cells = [c.split("\n", 1)[1] for c in _code_cells(path) if c.startswith("%%bash") and "curl " in c]
    assert len(cells) == 2, f"{path.name}: expected a generate and a generate_stream curl cell"
    for cell in cells:
        # The address, and the model: the notebooks serve NGram as tensorrt_llm, the session's server as ngram.
        assert "127.0.0.1:8000/v2/models/tensorrt_llm/" in cell, f"{path.name}: the URL changed; update this test"
        script = cell.replace("127.0.0.1:8000/v2/models/tensorrt_llm/", f"{stand_in.http_address}/v2/models/ngram/")
        done = subprocess.run(["bash", "-e", "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, f"{path.name}: {done.stdout}\n{done.stderr}"
        if "/generate_stream" in cell:
            events = [json.loads(line[len("data: "):]) for line in done.stdout.splitlines() if line.startswith("data: ")]
            assert len(events) > 1 and all("text_output" in e for e in events), done.stdout
        else:
            reply = json.loads(done.stdout)
            assert reply["text_output"] and int(reply["total_draft_tokens"]) >= int(reply["total_accepted_draft_tokens"])
