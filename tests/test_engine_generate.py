"""The CPU engine end to end (no Triton): identical greedy output, metrics, sampling, validation."""

from __future__ import annotations

from pathlib import Path

import pytest
from tiny_prompts import TINY_PROMPTS as PROMPTS

from specdec_guide.engine.core import Engine
from specdec_guide.engine.requests import RequestError

SNIPPET = Path(__file__).resolve().parents[1] / "snippets" / "drafters" / "prompt_lookup_drafter.py"

SPECS = {
    "baseline": "",
    "ngram": "speculative_config: {decoding_type: NGram, max_draft_len: 4, max_matching_ngram_size: 2}\n",
    "ngram_newest_private": (
        "speculative_config: {decoding_type: NGram, max_draft_len: 3, max_matching_ngram_size: 3,\n"
        "  is_keep_all: false, is_use_oldest: false, is_public_pool: false}\n"),
    "draft_target": "speculative_config: {decoding_type: DraftTarget, max_draft_len: 4, "
                    "speculative_model_dir: DRAFT}\n",
    "user_provided": "speculative_config: {decoding_type: UserProvided, max_draft_len: 4}\n"
                     f"triton_config: {{cpu_drafter: '{SNIPPET}:PromptLookupDrafter'}}\n",
}


@pytest.fixture(scope="module")
def engines(tiny_models, tmp_path_factory):
    target, draft = tiny_models
    folder = tmp_path_factory.mktemp("engine_yaml")
    built = {}
    for name, spec in SPECS.items():
        path = folder / f"{name}.yaml"
        path.write_text(f"model: {target}\nbackend: pytorch\n" + spec.replace("DRAFT", str(draft)))
        built[name] = Engine.from_yaml(path)
    return built


def run(engine, prompt, **fields):
    return engine.complete({"text_input": prompt, **fields})


@pytest.mark.parametrize("method", [m for m in SPECS if m != "baseline"])
def test_greedy_output_is_the_targets_own(engines, method):
    for prompt in PROMPTS:
        want = run(engines["baseline"], prompt, sampling_param_max_tokens=16)
        got = run(engines[method], prompt, sampling_param_max_tokens=16)
        assert got.token_ids == want.token_ids, (method, prompt)
        assert got.text == want.text


@pytest.mark.parametrize("method", list(SPECS))
def test_acceptance_metrics_are_consistent(engines, method):
    for prompt in PROMPTS:
        out = run(engines[method], prompt, sampling_param_max_tokens=16)
        s = out.stats
        assert 0 <= out.total_accepted_draft_tokens <= out.total_draft_tokens
        assert 0.0 <= out.acceptance_rate <= 1.0
        assert s.generated_tokens == len(out.token_ids) == 16
        assert s.target_steps == len(out.token_ids) - s.accepted_tokens  # each step adds one own token
        if method == "baseline":
            assert out.total_draft_tokens == 0 and out.acceptance_rate == 0.0
    # The repetitive prompts are where speculation pays: fewer target steps than tokens.
    assert run(engines["draft_target"], PROMPTS[2], sampling_param_max_tokens=16).stats.target_steps < 16


def test_context_step_is_never_drafted(engines):
    out = run(engines["ngram"], "abc abc abc", sampling_param_max_tokens=8)
    assert out.stats.acceptance_lengths[0] == 1  # the prefill step emits exactly one token


def test_prompt_echo_and_exclusion(engines):
    prompt = PROMPTS[1]
    echoed = run(engines["baseline"], prompt, sampling_param_max_tokens=5)
    bare = run(engines["baseline"], prompt, sampling_param_max_tokens=5,
               sampling_param_exclude_input_from_output=True)
    assert echoed.text == prompt + bare.text
    assert echoed.finish_reason == "length"


def test_default_max_tokens_is_32(engines):
    assert len(run(engines["baseline"], "Q").token_ids) == 32


def test_streaming_chunks_grow_and_end_once(engines):
    chunks = list(engines["ngram"].generate({"text_input": "abc abc abc", "streaming": True,
                                             "sampling_param_max_tokens": 12}))
    assert [c.finished for c in chunks] == [False] * (len(chunks) - 1) + [True]
    for before, after in zip(chunks, chunks[1:]):
        assert after.text.startswith(before.text) and len(after.token_ids) > len(before.token_ids)
    assert len(chunks) == chunks[-1].stats.target_steps < 12


def test_stop_strings_cut_the_output(engines):
    base = run(engines["baseline"], "Q", sampling_param_max_tokens=16, sampling_param_exclude_input_from_output=True)
    stop = base.text[5:7]
    first = base.text.find(stop)
    for method in ("baseline", "ngram"):
        out = run(engines[method], "Q", sampling_param_max_tokens=16, sampling_param_stop=["\x00never", stop],
                  sampling_param_exclude_input_from_output=True)
        assert out.text == base.text[:first]
        assert (out.finish_reason, out.stop_reason) == ("stop", stop)


# A private pool: with a public one, drafts (and so the random draws) depend on earlier requests.
@pytest.mark.parametrize("method", ["baseline", "ngram_newest_private", "draft_target"])
def test_sampling_with_a_seed_is_reproducible(engines, method):
    fields = dict(sampling_param_max_tokens=16, sampling_param_temperature=1.0, sampling_param_top_k=50)
    a = run(engines[method], PROMPTS[1], sampling_param_seed=7, **fields)
    b = run(engines[method], PROMPTS[1], sampling_param_seed=7, **fields)
    assert a.token_ids == b.token_ids
    others = {tuple(run(engines[method], PROMPTS[1], sampling_param_seed=s, **fields).token_ids) for s in (1, 2, 3)}
    assert len(others | {tuple(a.token_ids)}) > 1  # the seed matters


@pytest.mark.parametrize(
    "fields, message",
    [
        ({}, "text_input is missing"),
        ({"text_input": ""}, "empty"),
        ({"text_input": "x", "sampling_param_max_tokens": 0}, "must be >= 1"),
        ({"text_input": "x", "sampling_param_max_tokens": -3}, "must be >= 1"),
        ({"text_input": "x", "sampling_param_max_tokens": 2.5}, "expected an integer"),
        ({"text_input": "x", "sampling_param_max_tokens": "8"}, "expected an integer"),
        ({"text_input": "x", "sampling_param_max_tokens": [4, 5]}, "expected one value"),
        ({"text_input": "x", "sampling_param_temperature": -1.0}, "must be >= 0"),
        ({"text_input": "x", "sampling_param_top_p": 1.5}, "[0, 1]"),
        # The executor's sampling config refuses 0 (llmapi_top_p_zero_refused): not greedy.
        ({"text_input": "x", "sampling_param_top_p": 0.0}, "sampling_param_top_p must be > 0"),
        ({"text_input": "x", "sampling_param_seed": -1}, "between 0 and"),
        ({"text_input": "x", "sampling_param_best_of": 2}, "not emulated"),
        ({"text_input": "x", "sampling_param_presence_penalty": float("nan")}, "expected a finite number"),
        ({"text_input": "x", "streaming": "yes"}, "expected true or false"),
        ({"text_input": 42}, "text_input: expected"),
    ],
)
def test_bad_requests_are_refused_with_the_input_name(engines, fields, message):
    with pytest.raises(RequestError, match=None) as info:
        engines["baseline"].complete(fields)
    assert message in str(info.value)


def test_max_tokens_beyond_the_room_is_clamped_with_a_warning(engines):
    """As the release's executor does (llmapi_max_tokens_clamped): the request runs to the model's limit."""
    engine = engines["baseline"]
    prompt = "abc " * 248
    room = engine.max_seq_len - len(engine.encode(prompt))
    out = engine.complete({"text_input": prompt, "sampling_param_max_tokens": 10**9})
    assert (len(out.token_ids), out.finish_reason) == (room, "length")
    assert len(out.warnings) == 1 and f"sampling_param_max_tokens={10**9}" in out.warnings[0]
    assert f"clamped to {room}" in out.warnings[0]
    exact = engine.complete({"text_input": prompt, "sampling_param_max_tokens": room})
    assert exact.token_ids == out.token_ids and exact.warnings == ()


def test_prompt_longer_than_the_model_is_refused(engines):
    with pytest.raises(RequestError, match="limit"):
        engines["baseline"].complete({"text_input": "x" * 2000, "sampling_param_max_tokens": 1})


def test_triton_shaped_values_are_accepted(engines):
    import numpy as np

    out = engines["baseline"].complete({
        "text_input": [b"abc"], "sampling_param_max_tokens": np.array([3], dtype=np.int32),
        "streaming": [False],
    })
    assert len(out.token_ids) == 3 and out.text.startswith("abc")


def test_stop_entries_as_bytes_fail_like_the_release(engines):
    """The llmapi model hands Triton's bytes to SamplingParams, whose tokenizer refuses them
    (llmapi_stop_strings_as_bytes); str entries, as the LLM API takes them, work (above)."""
    with pytest.raises(ValueError, match="text input must be of type"):
        engines["baseline"].complete({"text_input": [b"abc"], "sampling_param_max_tokens": 3,
                                      "sampling_param_stop": [b"zz"]})


PENALTIES = dict(sampling_param_frequency_penalty=1.0, sampling_param_presence_penalty=0.5)


@pytest.fixture(scope="module")
def trtllm_sampler_engines(tiny_models, tmp_path_factory):
    """baseline / ngram / draft_target with sampler_type TRTLLMSampler: the sampler that applies penalties."""
    target, draft = tiny_models
    folder = tmp_path_factory.mktemp("engine_yaml_trtllm_sampler")
    built = {}
    for name in ("baseline", "ngram", "draft_target"):
        path = folder / f"{name}.yaml"
        path.write_text(f"model: {target}\nbackend: pytorch\nsampler_type: TRTLLMSampler\n"
                        + SPECS[name].replace("DRAFT", str(draft)))
        built[name] = Engine.from_yaml(path)
    return built


def hand_penalized_greedy(engine, prompt, n, frequency, presence):
    """Greedy decoding with full forward passes and the penalty formula written out (prompt counted)."""
    import torch

    tokens = engine.encode(prompt)
    start = len(tokens)
    with torch.no_grad():
        for _ in range(n):
            row = engine.model(input_ids=torch.tensor([tokens])).logits[0, -1].float()
            counts = torch.bincount(torch.tensor(tokens), minlength=row.shape[-1]).float()
            tokens.append(int(torch.argmax(row - frequency * counts - presence * (counts > 0).float())))
    return tokens[start:]


def test_trtllm_sampler_applies_penalties_identically_with_and_without_speculation(trtllm_sampler_engines):
    engines = trtllm_sampler_engines
    assert engines["baseline"].penalties_applied
    changed = 0
    for prompt in PROMPTS:
        want = run(engines["baseline"], prompt, sampling_param_max_tokens=12, **PENALTIES)
        plain = run(engines["baseline"], prompt, sampling_param_max_tokens=12)
        changed += want.token_ids != plain.token_ids
        for method in ("ngram", "draft_target"):
            got = run(engines[method], prompt, sampling_param_max_tokens=12, **PENALTIES)
            assert got.token_ids == want.token_ids, (method, prompt)
    assert changed >= 1  # the tiny model repeats itself: penalties change its greedy output
    # The formula itself, against a hand-written loop (the repetitive prompt, prompt tokens counted).
    out = run(engines["baseline"], PROMPTS[2], sampling_param_max_tokens=8, **PENALTIES)
    assert out.token_ids == hand_penalized_greedy(engines["baseline"], PROMPTS[2], 8, 1.0, 0.5)


def test_default_sampler_accepts_penalties_and_ignores_them(engines):
    # penalties_applied_by_sampler: TorchSampler (auto's choice) ignores them on the pinned releases.
    assert not engines["baseline"].penalties_applied
    assert "ignored" in engines["baseline"].penalties_note
    for method in ("baseline", "ngram"):
        plain = run(engines[method], PROMPTS[2], sampling_param_max_tokens=12)
        penal = run(engines[method], PROMPTS[2], sampling_param_max_tokens=12, **PENALTIES)
        assert penal.token_ids == plain.token_ids
