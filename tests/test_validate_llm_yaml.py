"""LLM API YAML (model.yaml and trtllm-serve option files) against the fixture snapshots."""

from pathlib import Path

import pytest

from specdec_guide.validate import llm_yaml
from specdec_guide.validate.runner import validate_paths
from specdec_guide.releases.tracks import Registry

FIX = Path(__file__).parent / "fixtures" / "validate"
REG = Registry(FIX / "schemas")


def problems(rel: str, trtllm: str | None = None) -> list[str]:
    report = validate_paths([FIX / rel], trtllm=trtllm, root=FIX, registry=REG, is_verified=lambda p: True)
    return [str(d) for d in report.diagnostics]


@pytest.mark.parametrize("rel,prefix,fragment", [
    ("bad/model_yaml_unknown/model.yaml", "bad/model_yaml_unknown/model.yaml:5:3:",
     "unknown key 'kv_cache_config.free_gpu_mem_fraction'"),
    ("bad/model_yaml_type/model.yaml", "bad/model_yaml_type/model.yaml:2:17:", "'max_batch_size' must be int | null"),
    ("bad/max_draft_len_zero.llm_api.yaml", "bad/max_draft_len_zero.llm_api.yaml:4:18:",
     "'speculative_config.max_draft_len' must be > 0 (got 0)"),
    ("bad/eagle3_on_110.llm_api.yaml", "bad/eagle3_on_110.llm_api.yaml:2:18:",
     "'Eagle3' is not a decoding_type in TRT-LLM 1.1.0 (known: DraftTarget, Draft_Target, Eagle, NGram, "
     "UserProvided, User_Provided); it exists in 1.2.0"),
    ("bad/drafter_in_yaml.llm_api.yaml", "bad/drafter_in_yaml.llm_api.yaml:4:3:",
     "'speculative_config.drafter' cannot be set in YAML"),
    ("bad/yaml_syntax.llm_api.yaml", "bad/yaml_syntax.llm_api.yaml:3:17:", "YAML syntax error"),
    ("bad/missing_required.yaml", "bad/missing_required.yaml:3:3:",
     "missing required key 'speculative_config.max_draft_len'"),
])
def test_broken_yaml_rejected_at_its_position(rel, prefix, fragment):
    found = problems(rel)
    assert len(found) == 1, found
    assert found[0].startswith(prefix + " "), found[0]
    assert fragment in found[0], found[0]


def test_did_you_mean_hint():
    assert "did you mean 'free_gpu_memory_fraction'" in problems("bad/model_yaml_unknown/model.yaml")[0]


def test_eagle3_is_fine_on_latest_and_old_key_is_an_alias():
    assert problems("bad/eagle3_on_110.llm_api.yaml", trtllm="latest") == []
    assert problems("clean/snippets/serve/eagle3.yaml") == []  # declares trtllm=latest, uses the alias


def test_clean_files_pass():
    assert problems("clean/snippets/serve/ngram.llm_api.yaml") == []
    assert problems("clean/model_repo_templates/llmapi/ngram/tensorrt_llm/1/model.yaml") == []


def check(text: str, model_yaml: bool = True, track: str = "1.1.0") -> list:
    return llm_yaml.check(text, REG.resolve(track), REG, model_yaml=model_yaml)


def test_model_yaml_requires_model_but_option_files_do_not():
    assert check("max_batch_size: 4\n") == [(1, 1, "missing required key 'model' (TorchLlmArgs)")]
    assert check("max_batch_size: 4\n", model_yaml=False) == []


def test_triton_config_only_in_model_yaml():
    assert check("model: m\ntriton_config: {decoupled: yes}\n") == []
    assert check("model: m\ntriton_config: {decoupled: 3, streaming: true}\n") == [
        (2, 28, "'triton_config.decoupled' must be bool, got 3"),
        (2, 31, "unknown key 'triton_config.streaming': the llmapi model.py of TRT-LLM 1.1.0 reads only "
                "max_batch_size, decoupled"),
    ]
    found = check("triton_config: {decoupled: true}\n", model_yaml=False)
    assert found[0][:2] == (1, 1) and "unknown key 'triton_config'" in found[0][2]


def test_nested_and_union_types():
    assert check("model: m\ncuda_graph_config:\n  batch_sizes: [1, two]\n") == [
        (3, 20, "'cuda_graph_config.batch_sizes[1]' must be int, got 'two'")]
    assert check("model: m\ncuda_graph_config: null\nspeculative_config: null\n") == []
    assert check("model: m\nspeculative_config:\n  max_draft_len: 2\n")[0][2].startswith(
        "'speculative_config' needs 'decoding_type'")
    assert check("model: m\nkv_cache_config:\n  free_gpu_memory_fraction: 1.5\n") == [
        (3, 29, "'kv_cache_config.free_gpu_memory_fraction' must be <= 1 (got 1.5)")]


def test_both_spellings_of_a_decoding_type_are_accepted():
    for spelling in ("DraftTarget", "Draft_Target"):
        text = f"model: m\nspeculative_config:\n  decoding_type: {spelling}\n  max_draft_len: 2\n" \
               "  speculative_model_dir: /d\n"
        assert check(text) == [], spelling


def test_engine_backend_uses_trt_args_where_it_exists():
    assert check("model: m\nbackend: tensorrt\nbuild_config: {max_batch_size: 8}\n") == []
    assert "unknown key 'build_config'" in check("model: m\nbackend: tensorrt\nbuild_config: {}\n", track="latest")[0][2]


@pytest.mark.parametrize("text", ["", "# only a comment\n"])
def test_empty_option_file_is_fine(text):
    assert check(text, model_yaml=False) == []


def test_top_level_list_is_rejected():
    assert check("- a\n- b\n") == [(1, 1, "an LLM API YAML file must be a mapping, got a list")]


def test_merge_keys_are_applied_like_safe_load():
    text = "model: m\nkv_cache_config:\n  <<: {enable_block_reuse: false}\n  free_gpu_memory_fraction: 0.5\n"
    assert check(text) == []


USER_PROVIDED = """\
model: /models/target
speculative_config:
  decoding_type: UserProvided
  max_draft_len: 4
triton_config:
  max_batch_size: 0
  decoupled: true
  cpu_drafter: my_drafters:PromptLookup
"""


def _check_model_yaml(tmp_path, text):
    (tmp_path / "m").mkdir(exist_ok=True)
    (tmp_path / "m/model.yaml").write_text(text)
    report = validate_paths([tmp_path / "m/model.yaml"], root=tmp_path, registry=REG, is_verified=lambda p: True)
    return [str(d) for d in report.diagnostics]


def test_user_provided_model_yaml_for_trtllm_is_rejected(tmp_path):
    found = _check_model_yaml(tmp_path, USER_PROVIDED)
    assert any(f.startswith("m/model.yaml:3:3: missing required key 'speculative_config.drafter'") for f in found), found
    assert any(f.startswith("m/model.yaml:8:3: unknown key 'triton_config.cpu_drafter'") for f in found), found


def test_cpu_engine_marker_admits_the_cpu_drafter_and_nothing_else(tmp_path):
    marked = "# specdec-guide: engine=cpu\n" + USER_PROVIDED
    assert _check_model_yaml(tmp_path, marked) == []
    typo = marked.replace("cpu_drafter", "cpu_drafer")
    found = _check_model_yaml(tmp_path, typo)
    assert len(found) == 2 and any("'triton_config.cpu_drafer'" in f for f in found), found


def test_a_repeated_key_is_reported_where_it_repeats(tmp_path):
    found = _check_model_yaml(tmp_path, "model: /a\nspeculative_config:\n  decoding_type: NGram\n"
                                        "  max_draft_len: 4\n  max_draft_len: 2\n  max_matching_ngram_size: 2\n")
    assert found == ["m/model.yaml:5:3: duplicate key 'max_draft_len'"], found
