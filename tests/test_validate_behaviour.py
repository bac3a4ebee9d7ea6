"""Rules the behaviour record makes checkable from a file (specdec_guide.validate.behaviour_rules, pbtxt).

A hub id as the draft or EAGLE-3 head is an error at its line:col on a track whose record says the
release does not download it (1.1.0), and passes where it does (1.2.1); an llmapi repository whose
config.pbtxt and model.yaml disagree on decoupled is reported at config.pbtxt's line. Each planted
fixture has a valid twin that passes, and the rules follow the record, not a version number.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from specdec_guide.validate.runner import validate_paths
from specdec_guide.releases.tracks import Registry
from registry import tracks

ROOT = Path(__file__).resolve().parents[1]
FIX = Path(__file__).parent / "fixtures" / "validate"
HEAD = "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"
DRAFT = "meta-llama/Llama-3.2-1B-Instruct"


def _problems(path: Path, root: Path, trtllm: str | None = None, registry: Registry | None = None) -> list:
    report = validate_paths([path], trtllm=trtllm, root=root, registry=registry or Registry(),
                            is_verified=lambda p: True)
    assert report.results, "nothing was checked"
    return report.diagnostics


def _hub_errors(diags) -> list:
    return [d for d in diags if "a Hugging Face hub id" in d.message]


# Spelled in two parts so that `validate .` does not read this test file's own strings as a pin.
DIRECTIVE = "# specdec-guide: trtllm" + "="

EAGLE_YAML = f"""\
{DIRECTIVE}TRACK
disable_overlap_scheduler: true
speculative_config:
  decoding_type: Eagle
  max_draft_len: 3
  speculative_model_dir: {HEAD}
  eagle3_one_model: false
"""

PY_CALLS = f"""\
{DIRECTIVE}TRACK
from tensorrt_llm import LLM
from tensorrt_llm.llmapi import DraftTargetDecodingConfig, EagleDecodingConfig

head = EagleDecodingConfig(max_draft_len=3, speculative_model_dir="{HEAD}", eagle3_one_model=False)
llm = LLM(model="meta-llama/Llama-3.1-8B-Instruct",
          speculative_config=DraftTargetDecodingConfig(max_draft_len=4, speculative_model_dir="{DRAFT}"))
"""

MODEL_YAML = f"""\
{DIRECTIVE}TRACK
model: meta-llama/Llama-3.1-8B-Instruct
backend: pytorch
speculative_config:
  decoding_type: DraftTarget
  max_draft_len: 4
  speculative_model_dir: {DRAFT}
disable_overlap_scheduler: true
triton_config:
  max_batch_size: 0
  decoupled: false
"""


def test_hub_id_in_llm_api_yaml_is_an_error_on_1_1_0_at_its_value(tmp_path):
    f = tmp_path / "eagle3.llm_api.yaml"
    f.write_text(EAGLE_YAML.replace("TRACK", "1.1.0"))
    errs = _hub_errors(_problems(f, tmp_path))
    assert [(d.line, d.col) for d in errs] == [(6, 26)], errs
    msg = errs[0].message
    assert "'speculative_config.speculative_model_dir'" in msg and "TRT-LLM 1.1.0 does not download" in msg
    assert f"snapshot_download('{HEAD}'" in msg and "pass that directory" in msg
    assert "1.2.1 does" in msg  # read from the other track's record


def test_the_same_yaml_passes_on_1_2_1(tmp_path):
    f = tmp_path / "eagle3.llm_api.yaml"
    f.write_text(EAGLE_YAML.replace("TRACK", "1.2.1"))
    assert _problems(f, tmp_path) == []


@pytest.mark.parametrize("value", ["./yuhuili/EAGLE3", "/models/eagle3", "~/heads/eagle3", "$HEAD_DIR",
                                   "${HEAD_DIR}", "heads/eagle3"])
def test_local_paths_pass_on_1_1_0(tmp_path, value):
    (tmp_path / "heads/eagle3").mkdir(parents=True)  # an org/name-shaped folder that exists is local
    f = tmp_path / "eagle3.llm_api.yaml"
    f.write_text(EAGLE_YAML.replace("TRACK", "1.1.0").replace(HEAD, value))
    assert _hub_errors(_problems(f, tmp_path)) == []


def test_hub_ids_in_python_calls_are_errors_on_1_1_0(tmp_path):
    f = tmp_path / "spec.py"
    f.write_text(PY_CALLS.replace("TRACK", "1.1.0"))
    errs = _hub_errors(_problems(f, tmp_path))
    assert [(d.line, d.col) for d in errs] == [(5, 67), (7, 95)], errs
    assert f"'{HEAD}'" in errs[0].message and f"'{DRAFT}'" in errs[1].message
    f.write_text(PY_CALLS.replace("TRACK", "1.2.1"))
    assert _problems(f, tmp_path) == []


def test_hub_id_in_a_triton_model_yaml_is_an_error_on_1_1_0(tmp_path):
    model = tmp_path / "repo/tensorrt_llm/1/model.yaml"
    model.parent.mkdir(parents=True)
    model.write_text(MODEL_YAML.replace("TRACK", "1.1.0"))
    errs = _problems(model, tmp_path)
    assert [(d.line, d.col, "a Hugging Face hub id" in d.message) for d in errs] == [(7, 26, True)], errs
    model.write_text(MODEL_YAML.replace("TRACK", "1.2.1"))
    assert _problems(model, tmp_path) == []


def _schemas_with_fact(tmp_path: Path, fact: str, value: bool) -> Registry:
    """The small fixture snapshots, with a behaviour record for 1.2.0 that says ``fact: value``."""
    schemas = tmp_path / "schemas"
    shutil.copytree(FIX / "schemas", schemas)
    folder = schemas / "1.2.0" / "behaviour"
    folder.mkdir()
    (folder / "t.yaml").write_text(
        'version: "1.2.0"\nsources:\n  s: {repo: o/r, path: a.py, commit: "' + "0" * 40 + '"}\n'
        f"facts:\n  {fact}: {{claim: x, value: {str(value).lower()}, source: s, confidence: likely}}\n")
    return Registry(schemas)


@pytest.mark.parametrize("value, flagged", [(False, True), (True, False)])
def test_the_hub_rule_follows_the_record_not_the_version(tmp_path, value, flagged):
    registry = _schemas_with_fact(tmp_path, "hub_id_as_speculative_model", value)
    f = tmp_path / "eagle3.llm_api.yaml"
    f.write_text(EAGLE_YAML.replace("TRACK", "1.2.0").replace("  eagle3_one_model: false\n", ""))
    errs = _hub_errors(_problems(f, tmp_path, registry=registry))
    assert bool(errs) is flagged, errs
    if flagged:
        assert "behaviour hub_id_as_speculative_model: false, likely" in errs[0].message
    # A track whose record is silent (the fixture's 1.1.0) reports nothing.
    f.write_text(EAGLE_YAML.replace("TRACK", "1.1.0"))
    assert _hub_errors(_problems(f, tmp_path, registry=registry)) == []


CONFIG = """\
name: "tensorrt_llm"
backend: "python"
max_batch_size: 0
POLICY
input [
  { name: "text_input" data_type: TYPE_STRING dims: [ -1 ] }
]
output [
  { name: "text_output" data_type: TYPE_STRING dims: [ -1 ] }
]
"""


def _llmapi_repo(tmp_path: Path, policy: str, decoupled: bool) -> Path:
    folder = tmp_path / "repo" / "tensorrt_llm"
    (folder / "1").mkdir(parents=True, exist_ok=True)
    (folder / "config.pbtxt").write_text(CONFIG.replace("POLICY", policy))
    (folder / "1" / "model.yaml").write_text(
        f"model: /models/t\ntriton_config:\n  max_batch_size: 0\n  decoupled: {str(decoupled).lower()}\n")
    return folder / "config.pbtxt"


@pytest.mark.parametrize("track", tracks())
@pytest.mark.parametrize("policy, decoupled, where", [
    ("model_transaction_policy { decoupled: false }", True, (4, 39)),
    ("model_transaction_policy { decoupled: true }", False, (4, 39)),
    ("", True, (1, 1)),
])
def test_decoupled_disagreement_is_reported_at_config_pbtxt(tmp_path, track, policy, decoupled, where):
    cfg = _llmapi_repo(tmp_path, policy, decoupled)
    diags = _problems(cfg, tmp_path, trtllm=track)
    assert [(d.line, d.col) for d in diags] == [where], diags
    msg = diags[0].message
    assert "config.pbtxt" in msg and "launch_triton_server.py" in msg and "--disable-auto-complete-config" in msg


@pytest.mark.parametrize("track", tracks())
@pytest.mark.parametrize("policy, decoupled", [("model_transaction_policy { decoupled: true }", True),
                                               ("model_transaction_policy { decoupled: false }", False),
                                               ("", False)])
def test_agreeing_repositories_pass(tmp_path, track, policy, decoupled):
    assert _problems(_llmapi_repo(tmp_path, policy, decoupled), tmp_path, trtllm=track) == []


@pytest.mark.parametrize("value, flagged", [(True, True), (False, False)])
def test_a_missing_policy_follows_the_launcher_fact(tmp_path, value, flagged):
    """Where the record says the launcher keeps auto-complete on, model.py fills the policy in."""
    registry = _schemas_with_fact(tmp_path, "launcher_disables_auto_complete", value)
    cfg = _llmapi_repo(tmp_path, "", True)
    diags = _problems(cfg, tmp_path, trtllm="1.2.0", registry=registry)
    assert bool(diags) is flagged, diags
    if flagged:
        assert "behaviour launcher_disables_auto_complete: true, likely" in diags[0].message


COUNTERS = f"""\
{DIRECTIVE}TRACK
from tensorrt_llm import LLM, SamplingParams

llm = LLM(model="/models/t"SAMPLER)
out = llm.generate(["hi"], SamplingParams(max_tokens=8, return_perf_metrics=True))[0]
metrics = out.outputs[0].request_perf_metrics.speculative_decoding
print(metrics.total_accepted_draft_tokens, metrics.acceptance_rate)
assert metrics.total_accepted_draft_tokens > 0
"""


@pytest.mark.parametrize("track", tracks())
def test_asserting_the_per_request_counters_is_an_error_where_they_read_zero(tmp_path, track):
    f = tmp_path / "counters.py"
    f.write_text(COUNTERS.replace("TRACK", track).replace("SAMPLER", ""))
    diags = _problems(f, tmp_path)
    assert [(d.line, d.col) for d in diags] == [(8, 1)], diags  # the print on line 7 is fine
    assert "'total_accepted_draft_tokens'" in diags[0].message and "TorchSampler" in diags[0].message
    assert "tokens per decoding step or iteration stats" in diags[0].message
    # The twin that picks the sampler that fills them passes.
    f.write_text(COUNTERS.replace("TRACK", track).replace("SAMPLER", ', sampler_type="TRTLLMSampler"'))
    assert _problems(f, tmp_path) == []


@pytest.mark.parametrize("value, flagged", [("{TorchSampler: false, TRTLLMSampler: true}", True), ("true", False)])
def test_the_counter_rule_follows_the_record(tmp_path, value, flagged):
    schemas = tmp_path / "schemas"
    shutil.copytree(FIX / "schemas", schemas)
    (schemas / "1.2.0" / "behaviour").mkdir()
    (schemas / "1.2.0" / "behaviour" / "t.yaml").write_text(
        'sources:\n  s: {pr: 1}\nfacts:\n  per_request_draft_counters_filled: '
        f'{{claim: x, value: {value}, source: s, confidence: likely}}\n')
    f = tmp_path / "counters.py"
    f.write_text(COUNTERS.replace("TRACK", "1.2.0").replace("SAMPLER", ""))
    diags = [d for d in _problems(f, tmp_path, registry=Registry(schemas)) if "draft counter" in d.message]
    assert bool(diags) is flagged, diags
