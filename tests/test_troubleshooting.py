"""The troubleshooting page's reproductions, run on the CPU.

Each entry that can be reproduced without a GPU has a reproduction under snippets/troubleshooting/:
configuration mistakes run ``check_yaml.sh`` (show the file, then ``specdec-guide validate``) on
the YAML the upstream report used, kept as test data in tests/fixtures/troubleshooting/ because
it is wrong on purpose and must not sit among the guide's snippets; request mistakes run
against a real tritonserver serving the CPU stand-in of TensorRT-LLM's llmapi model. The page shows each snippet and, from snippets/troubleshooting/out/, the output
it printed. These tests run every snippet and compare its output with that file, so the page
can only show what the tools really print.

After a deliberate change (a new message wording), regenerate the files with
``make regen WHAT=test-outputs:tests/test_troubleshooting.py`` and review the diff.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import stored_output
import yaml
from stand_in import LATER_DRAFT_TARGET, NO_POLICY

from specdec_guide import templates

ROOT = Path(__file__).resolve().parents[1]
SNIPPETS = ROOT / "snippets" / "troubleshooting"
OUT = SNIPPETS / "out"
WRONG_YAML = ROOT / "tests" / "fixtures" / "troubleshooting"


def _run(path: Path, cwd: Path, **env) -> str:
    """Run a snippet as a reader would: bash for .sh, python for .py; stdout, then stderr."""
    cmd = ["bash", str(path)] if path.suffix == ".sh" else [sys.executable, str(path)]
    # The reader's PATH has the venv's bin (specdec-guide, python3) first.
    path_env = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=180,
                          env=dict(os.environ, PATH=path_env, **env))
    return done.stdout + done.stderr


def _compare(name: str, output: str) -> None:
    stored_output.check(OUT / f"{name}.txt", output)


# ---- configuration mistakes: the validator ---------------------------------------------------
@pytest.mark.parametrize("name, must_say", [
    ("docs_yaml_on_1.1.0", ["unknown key 'speculative_config.speculative_model'", "speculative_model_dir"]),
    ("eagle3_value", ["'Eagle3' is not a decoding_type in TRT-LLM 1.1.0"]),
    ("old_key_names", ["unknown key 'use_cuda_graph'", "unknown key 'speculative_config.pytorch_weights_path'"]),
])
def test_configuration_mistake_is_reported_by_the_validator(name, must_say, tmp_path):
    shutil.copyfile(WRONG_YAML / f"{name}.yaml", tmp_path / "extra_llm_api_options.yaml")
    output = _run(SNIPPETS / "check_yaml.sh", tmp_path)
    assert output.startswith((WRONG_YAML / f"{name}.yaml").read_text()), output  # the file as the report wrote it
    for text in must_say:
        assert text in output, output
    assert output.rstrip().endswith(("problems", "problem")), output
    _compare(name, output)


# ---- request mistakes: a real tritonserver with the CPU stand-in -------------------------------
@pytest.fixture(scope="module")
def server(stand_in_server):
    """The session's tritonserver (tests/stand_in.py): tensorrt_llm, decoupled (the templates'
    default), and tensorrt_llm_sync, decoupled false, are the two this module sends mistakes to."""
    return stand_in_server


@pytest.mark.triton
@pytest.mark.parametrize("name, model, must_say", [
    ("max_tokens_ignored", "tensorrt_llm", ["max_tokens: 32 characters", "sampling_param_max_tokens: 8 characters"]),
    ("infer_unknown_input", "tensorrt_llm_sync", ["unexpected inference input 'max_tokens'"]),
    ("stream_not_decoupled", "tensorrt_llm_sync", ["Streaming is only supported in decoupled mode."]),
    ("http_infer_decoupled", "tensorrt_llm", ["doesn't support models with decoupled transaction policy"]),
])
def test_request_mistake_on_the_cpu_stand_in(name, model, must_say, server, tmp_path):
    snippet = next(SNIPPETS.glob(f"{name}.*"))
    output = _run(snippet, tmp_path, TRITON_HTTP=server.http_address, TRITON_MODEL=model)
    for text in must_say:
        assert text in output, output
    _compare(name, output)


def test_every_reproduction_has_its_output_and_a_test():
    """No orphan: each output file belongs to a wrong configuration or a request snippet run above."""
    snippets = {p.stem for p in SNIPPETS.iterdir() if p.is_file()}
    assert snippets == {"check_yaml", "max_tokens_ignored", "infer_unknown_input", "stream_not_decoupled",
                        "http_infer_decoupled"}
    configs = {p.stem for p in WRONG_YAML.glob("*.yaml")}
    assert configs == {"docs_yaml_on_1.1.0", "eagle3_value", "old_key_names"}
    assert {p.stem for p in OUT.glob("*.txt")} == (snippets - {"check_yaml"}) | configs


# ---- the container's launcher and the templates' decoupled setting ----------------------------
@pytest.mark.triton
def test_launcher_without_auto_complete_needs_the_policy_in_config_pbtxt(server, tmp_path, tiny_models):
    """launch_triton_server.py passes --disable-auto-complete-config to tritonserver, so the
    llmapi model's auto_complete_config never copies triton_config.decoupled from model.yaml.
    Served that way from a config.pbtxt without the policy (as upstream's llmapi folder ships it) the model runs
    non-decoupled; the release's model.py checks streaming against model.yaml, so the request is
    accepted and answered once (behaviour: llmapi_decoupled_from_model_yaml). One event per step
    (a release after TRT-LLM PR #14079, shown here with the stand-in's stream_per_step) needs the
    policy in config.pbtxt, which `repo render` writes.
    On the session server (tests/stand_in.py): NO_POLICY is the baseline without the policy, as
    copied; LATER_DRAFT_TARGET is rendered (the policy is in config.pbtxt) and streams per step."""
    target, _ = tiny_models
    as_copied = templates.render("baseline", model=str(target), out=tmp_path / "repo", force=True)
    policy = "model_transaction_policy {\n  decoupled: true\n}\n"
    config = as_copied / "config.pbtxt"
    assert policy in config.read_text()  # the templates carry it; upstream's llmapi folder does not
    served = {name: (server.repo / name / "config.pbtxt").read_text() for name in (NO_POLICY, LATER_DRAFT_TARGET)}
    assert policy not in served[NO_POLICY] and served[NO_POLICY] == config.read_text().replace(policy, "").replace(
        'name: "tensorrt_llm"', f'name: "{NO_POLICY}"')
    assert policy in served[LATER_DRAFT_TARGET]
    assert "stream_per_step" in yaml.safe_load((server.repo / LATER_DRAFT_TARGET / "1/model.yaml").read_text())[
        "triton_config"]["cpu_behaviour"]
    assert not server.auto_complete  # as the container's launcher runs it
    as_rendered = _run(SNIPPETS / "stream_not_decoupled.sh", tmp_path, TRITON_HTTP=server.http_address,
                       TRITON_MODEL=NO_POLICY)
    fixed = _run(SNIPPETS / "stream_not_decoupled.sh", tmp_path, TRITON_HTTP=server.http_address,
                 TRITON_MODEL=LATER_DRAFT_TARGET)
    once = [line for line in as_rendered.splitlines() if line.startswith("data: ")]
    assert len(once) == 1 and '"text_output"' in once[0], as_rendered
    events = [line for line in fixed.splitlines() if line.startswith("data: ")]
    assert len(events) > 1 and all('"text_output"' in e for e in events), fixed
