"""model.yaml as the CPU engine reads it: what loads, and one located line for what does not."""

from __future__ import annotations

import textwrap

import pytest

from specdec_guide.engine.config import EAGLE_REFUSAL, ConfigError, load_config, load_triton_settings


def write(tmp_path, text: str):
    path = tmp_path / "model.yaml"
    path.write_text(textwrap.dedent(text).lstrip())
    return path


def error_of(tmp_path, text: str) -> str:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert "\n" not in message  # one line: that is what the Triton log shows
    return message.replace(str(path), "model.yaml")


def test_ngram_template_shape_loads(tmp_path):
    cfg = load_config(write(tmp_path, """
        model: /models/target
        backend: pytorch
        tensor_parallel_size: 1
        speculative_config:
          decoding_type: NGram
          max_draft_len: 4
          max_matching_ngram_size: 2
          is_keep_all: true
          is_use_oldest: false
          is_public_pool: false
        disable_overlap_scheduler: true
        kv_cache_config: {free_gpu_memory_fraction: 0.5}
        triton_config:
          max_batch_size: 0
          decoupled: true
        """))
    spec = cfg.speculative
    assert (spec.decoding_type, spec.max_draft_len, spec.max_matching_ngram_size) == ("NGram", 4, 2)
    assert (spec.is_keep_all, spec.is_use_oldest, spec.is_public_pool) == (True, False, False)
    assert cfg.triton.decoupled is True and cfg.triton.max_batch_size == 0
    assert set(cfg.ignored_keys) == {"tensor_parallel_size", "disable_overlap_scheduler", "kv_cache_config"}


def test_draft_target_takes_the_1_1_0_draft_model_key_only(tmp_path):
    cfg = load_config(write(tmp_path, """
        model: /t
        speculative_config:
          decoding_type: DraftTarget
          max_draft_len: 3
          speculative_model_dir: /d
        """))
    assert cfg.speculative.draft_model == "/d"
    # the later name is not a field in 1.1.0: the engine reads model.yaml as that release would,
    # so the draft path counts as missing (the first of the two findings)
    msg = error_of(tmp_path, """
        model: /t
        speculative_config:
          decoding_type: DraftTarget
          max_draft_len: 3
          speculative_model: /d
        """)
    assert msg.startswith("model.yaml:3:3: DraftTargetDecodingConfig needs 'speculative_config.speculative_model_dir'"), msg


def test_unknown_decoding_type_points_at_the_value(tmp_path):
    msg = error_of(tmp_path, """
        model: /t
        backend: pytorch
        speculative_config:
          max_draft_len: 4
          decoding_type: Foo
        """)
    assert msg.startswith("model.yaml:5:18: 'Foo' is not a decoding_type in TRT-LLM 1.1.0 (known: "), msg
    assert "DraftTarget" in msg and "NGram" in msg


def test_eagle_is_refused_with_one_line(tmp_path):
    msg = error_of(tmp_path, """
        model: /t
        speculative_config:
          decoding_type: Eagle
          max_draft_len: 3
          speculative_model_dir: /e
        """)
    assert msg.startswith(f"model.yaml:3:18: {EAGLE_REFUSAL}")


def test_eagle3_is_in_neither_pinned_release(tmp_path):
    # The 1.2.1 release source (schemas/1.2.1/llm_api.yaml, sources.llm_args) has no Eagle3 key either,
    # although Triton's guide for the 1.2.1 containers uses it: no "it exists in" hint may point there.
    msg = error_of(tmp_path, """
        model: /t
        speculative_config:
          decoding_type: Eagle3
          max_draft_len: 3
          speculative_model_dir: /e
        """)
    assert msg.startswith("model.yaml:3:18: 'Eagle3' is not a decoding_type in TRT-LLM 1.1.0"), msg
    assert "it exists in" not in msg


def test_mtp_and_class_literal_spellings(tmp_path):
    assert "MTP needs TensorRT-LLM on a GPU" in error_of(tmp_path, """
        model: /t
        speculative_config: {decoding_type: MTP, num_nextn_predict_layers: 3}
        """)
    msg = error_of(tmp_path, """
        model: /t
        speculative_config: {decoding_type: Draft_Target, max_draft_len: 2, speculative_model_dir: /d}
        """)
    assert "'Draft_Target' is not a decoding_type in TRT-LLM 1.1.0" in msg and "DraftTarget" in msg


@pytest.mark.parametrize(
    "body, where, reason",
    [
        ("model: /t\nspeculative_config:\n  decoding_type: NGram\n  max_draft_len: 4\n", "3:3",
         "NGramDecodingConfig needs 'speculative_config.max_matching_ngram_size'"),
        ("model: /t\nspeculative_config:\n  decoding_type: NGram\n  max_draft_len: 0\n"
         "  max_matching_ngram_size: 2\n", "4:18", "'speculative_config.max_draft_len' must be > 0"),
        ("model: /t\nspeculative_config:\n  decoding_type: NGram\n  max_draft_len: 4\n"
         "  max_matching_ngram_size: 2\n  is_keep_all: yes please\n", "6:16",
         "'speculative_config.is_keep_all' must be bool"),
        ("model: /t\nspeculative_config:\n  decoding_type: NGram\n  max_draft_len: 4\n"
         "  max_matching_ngram_size: 2\n  prompt_lookup_num_tokens: 4\n", "6:3", "unknown key"),
        ("model: /t\nspeculative_config:\n  decoding_type: DraftTarget\n  max_draft_len: 4\n", "3:3",
         "DraftTargetDecodingConfig needs 'speculative_config.speculative_model_dir'"),
        ("model: /t\nmax_tokens: 32\n", "2:1", "unknown key 'max_tokens'"),
        ("model: /t\nmodel: /u\n", "2:1", "duplicate key 'model'"),
        ("backend: pytorch\n", "1:1", "missing required key 'model'"),
        ("model: /t\nbackend: tensorrt\n", "2:10", "not emulated"),
        ("model: /t\ntriton_config:\n  decoupled: maybe\n", "3:14", "'triton_config.decoupled' must be bool"),
        ("model: /t\ntriton_config:\n  decopuled: true\n", "3:3", "unknown key 'triton_config.decopuled'"),
        ("model: /t\nspeculative_config:\n  decoding_type: [NGram\n", "4:1", "invalid YAML"),
        ("- model\n", "1:1", "must be a mapping"),
    ],
)
def test_errors_carry_line_and_column(tmp_path, body, where, reason):
    path = tmp_path / "model.yaml"
    path.write_text(body)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value).startswith(f"{path}:{where}: "), str(info.value)
    assert reason in str(info.value)


def test_user_provided_needs_our_drafter_key(tmp_path):
    msg = error_of(tmp_path, """
        model: /t
        speculative_config:
          decoding_type: UserProvided
          max_draft_len: 4
        """)
    assert "triton_config.cpu_drafter" in msg and msg.startswith("model.yaml:3:3:"), msg
    cfg = load_config(write(tmp_path, """
        model: /t
        speculative_config: {decoding_type: UserProvided, max_draft_len: 4}
        triton_config: {decoupled: false, cpu_drafter: "my_drafters:MyDrafter"}
        """))
    assert cfg.triton.cpu_drafter == "my_drafters:MyDrafter"
    assert "only used with" in error_of(tmp_path, """
        model: /t
        triton_config: {cpu_drafter: "a:B"}
        """)


def test_triton_settings_alone_and_defaults(tmp_path):
    assert load_triton_settings(write(tmp_path, "model: /t\n")).decoupled is False
    s = load_triton_settings(write(tmp_path, "model: /t\ntriton_config: {max_batch_size: 4, decoupled: true}\n"))
    assert (s.max_batch_size, s.decoupled) == (4, True)


def test_missing_file_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "nope.yaml")


# -- the track the file names, and the release's own reading of triton_config -------------------
DRAFT_121 = """
    # specdec-guide: trtllm={track}
    model: /models/target
    speculative_config:
      decoding_type: DraftTarget
      max_draft_len: 4
      speculative_model: /models/draft
    triton_config:
      max_batch_size: 0
      decoupled: true
    """


def test_a_121_file_loads_on_its_track_and_is_refused_on_110(tmp_path):
    """speculative_model came with 1.2 (PR #10099): checked against the snapshot the file names."""
    cfg = load_config(write(tmp_path, DRAFT_121.format(track="1.2.1")))
    assert cfg.track == "1.2.1" and cfg.speculative.draft_model == "/models/draft"
    message = error_of(tmp_path, DRAFT_121.format(track="1.1.0"))
    assert message.startswith("model.yaml:") and "speculative_model" in message


def test_unknown_track_in_the_comment_is_located(tmp_path):
    message = error_of(tmp_path, DRAFT_121.format(track="9.9"))
    assert message.startswith("model.yaml:1:1: unknown TRT-LLM track '9.9'")


def test_triton_config_keys_are_not_defaulted_and_departures_are_named(tmp_path):
    settings = load_triton_settings(write(tmp_path, """
        model: /models/target
        triton_config:
          max_batch_size: 0
          cpu_behaviour: [stream_per_step]
        """))
    assert settings.present == ("max_batch_size",) and settings.section
    assert settings.cpu_behaviour == ("stream_per_step",)
    message = error_of(tmp_path, """
        model: /models/target
        triton_config:
          decoupled: true
          cpu_behaviour: [stream_everything]
        """)
    assert "model.yaml:4:" in message and "unknown behaviour 'stream_everything'" in message



def test_a_fact_missing_from_the_record_is_its_lead_marked_unconfirmed():
    """engine.config.release_fact: the record's value where it has the fact; else the documented
    lead (RELEASE_FALLBACKS) as unconfirmed; else nothing. The stand-in logs the unconfirmed ones."""
    from specdec_guide.releases import behaviour
    from specdec_guide.releases.tracks import Registry
    from specdec_guide.engine import config

    fact = Registry().resolve("1.1.0").behaviour.facts["llmapi_cumulative_logprob_value"]
    assert config.release_fact("1.1.0", "llmapi_cumulative_logprob_value") == (fact.value, fact.confidence)
    empty = behaviour.Behaviour(track="1.1.0")
    assert config.fact_or_lead(empty, "llmapi_cumulative_logprob_value") == ("None", config.FALLBACK_CONFIDENCE)
    assert config.fact_or_lead(empty, "sampler_set_by_spec_mode") == (None, None)
