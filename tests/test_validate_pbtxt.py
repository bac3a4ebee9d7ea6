"""config.pbtxt: protobuf syntax, duplicate tensors, the llmapi model's inputs and agreement."""

from pathlib import Path

import pytest

from specdec_guide.validate.runner import validate_paths
from specdec_guide.releases.tracks import Registry

FIX = Path(__file__).parent / "fixtures" / "validate"


def problems(rel: str, trtllm: str | None = None) -> list[str]:
    report = validate_paths([FIX / rel], trtllm=trtllm, root=FIX, registry=Registry(FIX / "schemas"),
                            is_verified=lambda p: True)
    return [str(d) for d in report.diagnostics]


def only(rel: str, prefix: str, fragment: str, trtllm: str | None = None) -> None:
    found = problems(rel, trtllm)
    assert len(found) == 1, found
    assert found[0].startswith(prefix + " "), found[0]
    assert fragment in found[0], found[0]


def test_syntax_error_reports_protobuf_position():
    only("bad/pbtxt_syntax/config.pbtxt", "bad/pbtxt_syntax/config.pbtxt:5:35:", "no value named TYPE_STRNG")


def test_duplicate_input_name():
    only("bad/dup_input/config.pbtxt", "bad/dup_input/config.pbtxt:6:11:", "duplicate input name 'text_input'")


def test_llmapi_input_with_wrong_type():
    only("bad/llmapi_dtype/tensorrt_llm/config.pbtxt", "bad/llmapi_dtype/tensorrt_llm/config.pbtxt:7:50:",
         "'sampling_param_max_tokens' must have data_type TYPE_INT32")


def test_decoupled_must_agree_with_model_yaml():
    only("bad/llmapi_decoupled/tensorrt_llm/config.pbtxt", "bad/llmapi_decoupled/tensorrt_llm/config.pbtxt:5:14:",
         "triton_config.decoupled is true")


def test_clean_llmapi_template_passes():
    assert problems("clean/model_repo_templates/llmapi/ngram/tensorrt_llm/config.pbtxt") == []


def write_llmapi(tmp_path: Path, config: str, model_yaml: str) -> Path:
    folder = tmp_path / "tensorrt_llm"
    (folder / "1").mkdir(parents=True)
    (folder / "config.pbtxt").write_text(config)
    (folder / "1" / "model.yaml").write_text(model_yaml)
    return folder / "config.pbtxt"


CONFIG = """name: "tensorrt_llm"
backend: "python"
max_batch_size: 8
input [
  { name: "text_input" data_type: TYPE_STRING dims: [ -1 ] },
  { name: "max_tokens" data_type: TYPE_INT32 dims: [ 1 ] }
]
"""


def test_unknown_input_missing_required_and_batch_size(tmp_path):
    cfg = write_llmapi(tmp_path, CONFIG.replace('"text_input"', '"prompt"'),
                       "model: /m\ntriton_config:\n  max_batch_size: 4\n")
    report = validate_paths([cfg], root=tmp_path, registry=Registry(FIX / "schemas"), is_verified=lambda p: True)
    got = [str(d) for d in report.diagnostics]
    assert any(g.startswith("tensorrt_llm/config.pbtxt:3:17: config.pbtxt says max_batch_size: 8") for g in got), got
    assert any(g.startswith("tensorrt_llm/config.pbtxt:4:1: required input 'text_input'") for g in got), got
    assert any(g.startswith("tensorrt_llm/config.pbtxt:6:11: input 'max_tokens' is not one the llmapi model.py")
               for g in got), got
    assert len(got) == 4, got  # 'prompt' is unknown too


@pytest.mark.parametrize("track,expected", [("1.1.0", 1), ("latest", 0)])
def test_input_known_only_in_newer_track(tmp_path, track, expected):
    cfg = write_llmapi(tmp_path, CONFIG.replace('"max_tokens" data_type: TYPE_INT32',
                                                '"return_perf_metrics" data_type: TYPE_BOOL'),
                       "model: /m\n")
    report = validate_paths([cfg], trtllm=track, root=tmp_path, registry=Registry(FIX / "schemas"),
                            is_verified=lambda p: True)
    assert len(report.diagnostics) == expected, report.diagnostics
    if expected:
        assert "it exists in 1.2.0" in report.diagnostics[0].message


def test_fill_template_placeholders_are_parsed_and_checked(tmp_path):
    folder = tmp_path / "tensorrt_llm"
    folder.mkdir()
    (folder / "config.pbtxt").write_text(
        'name: "tensorrt_llm"\nbackend: "${triton_backend}"\nmax_batch_size: ${triton_max_batch_size}\n'
        'model_transaction_policy { decoupled: ${decoupled_mode} }\n'
        'parameters { key: "gpt_model_path" value: { string_value: "${engine_path}" } }\n')
    report = validate_paths([folder / "config.pbtxt"], root=tmp_path, registry=Registry(FIX / "schemas"),
                            is_verified=lambda p: True)
    assert [str(d) for d in report.diagnostics] == [
        "tensorrt_llm/config.pbtxt:5:60: template key 'engine_path' is not a fill_template.py key of model "
        "'tensorrt_llm' in TRT-LLM 1.1.0"]
