"""The per-method GPU notebooks (04-07), checked on the CPU beyond their cells' schema check.

The cell checker (tests/test_gpu_notebooks_static.py) compares every cell with the release's
snapshot. These tests add what it does not know:

* every ``%%writefile`` file is byte for byte a snippet of the guide, so the YAML a page shows
  and the YAML a notebook runs are one file (and that file is validated on its own), and the
  gRPC client a notebook writes is the one the CPU tests run;
* every request a notebook sends to Triton (curl ``-d`` bodies, ``post_json`` dicts) parses
  and names only inputs of the llmapi model of the notebook's release, since the generate
  endpoint silently drops any other key;
* each notebook reports where greedy output parts from its baseline (failing only inside the first
  10 tokens) and measures acceptance from the iteration statistics, not from counters 1.1.0 leaves
  at zero; no 1.1.0 draft or head is a hub id;
* the header names the container and release that tracks.yaml pairs;
* the Triton repository is the container's own ``/app/all_models/llmapi`` with a ``model.yaml``
  that holds the keys of the method's template (the notebooks need only their container, so they
  no longer render the template), and ``config.pbtxt`` is given the same ``triton_config`` values.
* every curl cell runs as written (address aside) against the CPU stand-in of the llmapi model.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import jupytext
import pytest
import yaml

from site_build import ROOT
from specdec_guide.releases import methods as methods_registry
from specdec_guide.notebooks import read_meta
from specdec_guide.validate import kinds
from specdec_guide.releases.tracks import Registry

METHOD_NOTEBOOKS = sorted(ROOT / m.teaches for m in methods_registry.load() if m.teaches.startswith("notebooks/"))
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
        candidates = [ROOT / "snippets/notebooks" / path.stem / name, ROOT / "snippets/llm_api" / track.id / name,
                      ROOT / "snippets/triton" / name]
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


def _checks(text: str) -> dict[str, list[str]]:
    return {name: re.findall(rf"^\s*{name}\((.*)$", text, re.M)
            for name in ("report_greedy", "check_accepted", "per_request_counters")}


@pytest.mark.parametrize("path", METHOD_NOTEBOOKS, ids=lambda p: p.name)
def test_each_notebook_checks_greedy_output_and_acceptance_as_its_release_allows(path):
    """Greedy output is compared by reporting the first divergent token (failing only where upstream's
    tests would: the first 10 tokens of two runs with the same settings); acceptance is measured from
    the LLM's iteration statistics, which need enable_iter_perf_stats and a get_stats() before shutdown;
    the per-request counters, zero on 1.1.0/1.2.1 with TorchSampler (PR #17082), are printed, never
    asserted above zero; a Triton text is compared by report, never by equality."""
    text = "\n".join(_code_cells(path))
    calls = _checks(text)
    assert calls["report_greedy"], f"{path.name}: the output is not compared with the baseline"
    # Upstream asserts identical text (10-32 tokens, same settings) for NGram and EAGLE-3 only; its
    # Draft/Target test leaves the assertion commented out, and no MTP equality test was read.
    strict = any("exact_prefix=10" in c for c in calls["report_greedy"])
    assert strict == (path.stem in ("04_ngram", "06_eagle3")), \
        f"{path.name}: a failing 10-token check belongs exactly to the methods whose upstream tests assert it"
    assert calls["check_accepted"] and all("acceptance_from_stats(" in c for c in calls["check_accepted"]), \
        f"{path.name}: acceptance is not measured from the iteration statistics"
    assert "enable_iter_perf_stats=True" in text and "llm.get_stats(" in text, f"{path.name}: no iteration statistics"
    assert any(c.startswith('"') and "triton[" in c for c in calls["per_request_counters"]), \
        f"{path.name}: the Triton per-request counters are not printed"
    assert not re.search(r"assert .*total_accepted_draft_tokens", text), \
        f"{path.name}: asserts a per-request counter that 1.1.0 leaves at zero"
    assert not re.search(r"assert \w+\.token_ids == \w+\.token_ids", text), f"{path.name}: a bare greedy-equality assertion"
    assert not re.search(r'assert triton\["text_output"\] ==', text), f"{path.name}: Triton's text asserted equal"


def test_a_bare_counter_assertion_is_caught(tmp_path):
    """The check above can fail: the old assertion on the per-request counter is reported."""
    text = (ROOT / "notebooks/04_ngram.py").read_text() + '\n# %%\nassert int(triton["total_accepted_draft_tokens"]) > 0\n'
    bad = tmp_path / "04_ngram.py"
    bad.write_text(text)
    assert re.search(r"assert .*total_accepted_draft_tokens", "\n".join(_code_cells(bad)))


@pytest.mark.parametrize("path", METHOD_NOTEBOOKS, ids=lambda p: p.name)
def test_no_draft_or_head_is_a_hub_id_where_the_release_reads_folders_only(path):
    """1.1.0 does not download a hub id given as speculative_model_dir (PR #10099 came with 1.2): every
    draft or head a cell of such a track passes (its behaviour record's hub_id_as_speculative_model is
    false, so a new track is covered by its record) is a local path or a variable holding one."""
    for cell in _code_cells(path):
        if _track(path, cell).behaviour.value("hub_id_as_speculative_model") is not False:
            continue
        for value in re.findall(r"speculative_model_dir[=:]\s*['\"]?([^,)\s'\"]+)", cell):
            assert value.startswith("/") or value.isidentifier(), f"{path.name}: {value} is not a local directory"
            if value.isidentifier():
                assert re.search(rf"^{value} = snapshot_download\(|^\s*{value} = snapshot_download\(", "\n".join(_code_cells(path)), re.M), \
                    f"{path.name}: {value} is not the result of snapshot_download"
        for value in re.findall(r"--draft-model\s+(\S+)", cell):
            assert value.startswith("/"), f"{path.name}: repo render --draft-model {value} is not a local directory"


@pytest.mark.parametrize("path", METHOD_NOTEBOOKS, ids=lambda p: p.name)
def test_header_pins_a_known_release_and_its_container(path):
    meta = read_meta(path)
    assert meta["tier"] == "gpu" and meta["track"] == meta["trtllm_version"]
    track = REG.resolve(meta["trtllm_version"])
    assert meta["container"] == track.container, f"{path.name}: {meta['container']} is not {track.id}'s container"


_REPO_MODEL_YAML = re.compile(r"cat > (repo_\w+)/tensorrt_llm/1/model\.yaml <<'EOF'\n(.*?)\nEOF\n", re.S)
#: What a notebook's Triton model.yaml sets beyond its method's template: 07 serves DeepSeek-R1 on eight GPUs,
#: with one MTP module (the template has 3) as its LLM API and trtllm-serve runs use.
BEYOND_TEMPLATE = {"07_mtp": {"tensor_parallel_size": 8, "moe_expert_parallel_size": 8, "trust_remote_code": True,
                              "speculative_config": {"decoding_type": "MTP", "num_nextn_predict_layers": 1}}}


@pytest.mark.parametrize("path", METHOD_NOTEBOOKS, ids=lambda p: p.name)
def test_the_triton_repository_is_the_containers_with_the_templates_keys(path):
    """The repository cell copies the container's llmapi model and writes model.yaml: the keys and values of
    the guide's template for the method (the model and the local draft or head in place of its markers),
    and config.pbtxt gets triton_config's max_batch_size and decoupled policy, which the launcher's
    --disable-auto-complete-config keeps Triton from reading in model.yaml."""
    method = next(m for m in methods_registry.load() if m.teaches == f"notebooks/{path.name}")
    code = "\n".join(_code_cells(path))
    cells = [c for c in _code_cells(path) if c.startswith("%%bash") and "/app/all_models/llmapi" in c]
    assert len(cells) == 1, f"{path.name}: expected one cell that copies /app/all_models/llmapi"
    cell = cells[0]
    found = _REPO_MODEL_YAML.search(cell)
    assert found, f"{path.name}: the repository cell writes no model.yaml"
    repo, body = found.groups()
    assert f"rm -rf {repo}\ncp -R /app/all_models/llmapi {repo}\n" in cell
    assert f'--model_repo "$PWD/{repo}"' in code, f"{path.name}: Triton is not started on {repo}"
    served = yaml.safe_load(body)
    template = yaml.safe_load((ROOT / "model_repo_templates/llmapi" / method.template / "tensorrt_llm/1/model.yaml").read_text())
    expected = {**template, **BEYOND_TEMPLATE.get(path.stem, {}), "model": served.get("model")}
    assert f'"{served["model"]}"' in code, f"{path.name}: model.yaml serves a model the LLM API cells do not run"
    if "speculative_model_dir" in template["speculative_config"]:
        local = served["speculative_config"].get("speculative_model_dir")
        assert f'local_dir="{local}"' in code, f"{path.name}: {local} is not where a cell downloads the draft or head"
        expected["speculative_config"] = {**template["speculative_config"], "speculative_model_dir": local}
    assert served == expected, f"{path.name}: {repo}/tensorrt_llm/1/model.yaml differs from the {method.id} template"
    pbtxt = f"{repo}/tensorrt_llm/config.pbtxt"
    settings = served["triton_config"]
    assert f"grep -q '^max_batch_size' {pbtxt} || \\\n  printf '\\nmax_batch_size: {settings['max_batch_size']}\\n'" in cell
    policy = "true" if settings["decoupled"] else "false"
    assert (f"grep -q '^model_transaction_policy' {pbtxt} || \\\n"
            f"  printf '\\nmodel_transaction_policy {{\\n  decoupled: {policy}\\n}}\\n'") in cell


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
            assert events and all("text_output" in e for e in events), done.stdout
            # The release's llmapi model.py streams one event per step only where the behaviour record says
            # so (llmapi_model_streams_per_step; the pinned releases send one event, PR #14079 came after).
            per_step = Registry().resolve(_track(path).id).behaviour.value("llmapi_model_streams_per_step", None)
            if per_step is not None:
                assert (len(events) > 1) == per_step, done.stdout
        else:
            reply = json.loads(done.stdout)
            assert reply["text_output"] and int(reply["total_draft_tokens"]) >= int(reply["total_accepted_draft_tokens"])
