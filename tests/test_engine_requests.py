"""The stand-in's request parsing (engine/requests.py), input by input: what a Triton request's
tensors become, and the one-line refusal for each input that cannot be used. No server, no model."""

from __future__ import annotations

import numpy as np
import pytest

from specdec_guide.engine.requests import (
    DEFAULT_MAX_TOKENS, INPUT_NAMES, LIST_INPUTS, MAX_SEED, Chunk, GenerateRequest, RequestError, parse_request)
from specdec_guide.speculation_types import SamplingConfig, SpecStats, StepResult

PROMPT = {"text_input": ["Hello"]}


def parse(**fields):
    return parse_request({**PROMPT, **fields})


def refused(message: str, **fields) -> None:
    with pytest.raises(RequestError) as info:
        parse_request({**PROMPT, **fields} if "text_input" not in fields else fields)
    assert str(info.value) == message


def test_a_bare_prompt_takes_the_release_defaults():
    req = parse()
    assert req == GenerateRequest(prompt="Hello")
    assert req.max_tokens == DEFAULT_MAX_TOKENS == 32
    assert req.sampling == SamplingConfig(temperature=0.0, top_k=0, top_p=1.0, seed=None)
    assert req.sampling.greedy
    assert req.stop == () and not req.streaming and not req.exclude_input_from_output
    assert (req.return_perf_metrics, req.return_finish_reason, req.return_stop_reason,
            req.return_cumulative_logprob) == (False, False, False, False)
    assert req.extra == {}


def test_the_prompt_arrives_as_triton_sends_it():
    # a [1, 1] BYTES tensor of UTF-8 bytes, as numpy hands it to the model
    assert parse_request({"text_input": np.array([["Grüß".encode()]], dtype=object)}).prompt == "Grüß"
    assert parse_request({"text_input": "plain"}).prompt == "plain"
    assert parse_request({"text_input": b"raw"}).prompt == "raw"
    assert parse_request({"text_input": [["first"], ["second"]]}).prompt == "first"  # one prompt per request


@pytest.mark.parametrize("fields, message", [
    ({}, "text_input is missing from the request"),
    ({"text_input": None}, "text_input is missing from the request"),
    ({"text_input": []}, "text_input is empty"),
    ({"text_input": [""]}, "text_input is an empty string; the engine needs at least one prompt token"),
    ({"text_input": [b"\xff"]}, "text_input: not valid UTF-8"),
    ({"text_input": [5]}, "text_input: expected a string, got 5"),
    ({"text_input": 5}, "text_input: expected a list of strings, got 5"),
])
def test_an_unusable_prompt_is_refused_by_name(fields, message):
    with pytest.raises(RequestError) as info:
        parse_request(fields)
    assert str(info.value) == message


def test_scalars_are_unwrapped_from_their_one_element_tensors():
    req = parse(sampling_param_max_tokens=np.array([[7]], dtype=np.int32), sampling_param_temperature=np.array([0.5]),
                sampling_param_top_k=[3], sampling_param_seed=np.array([9], dtype=np.uint64), streaming=np.array([True]))
    assert req.max_tokens == 7 and type(req.max_tokens) is int
    assert req.sampling == SamplingConfig(temperature=0.5, top_k=3, top_p=1.0, seed=9)
    assert type(req.sampling.temperature) is float
    assert req.streaming is True


@pytest.mark.parametrize("value, count", [([1, 2], 2), ([], 0), (np.array([4, 5, 6]), 3), ([[1, 2]], 2)])
def test_a_scalar_input_holding_more_than_one_value_is_refused(value, count):
    refused(f"sampling_param_max_tokens: expected one value, got {count}", sampling_param_max_tokens=value)


def test_integers():
    assert parse(sampling_param_max_tokens=5.0).max_tokens == 5  # a whole float is an integer
    assert parse(sampling_param_max_tokens=1).max_tokens == 1  # the lowest allowed
    refused("sampling_param_max_tokens: expected an integer, got 2.5", sampling_param_max_tokens=2.5)
    refused("sampling_param_max_tokens: expected an integer, got True", sampling_param_max_tokens=True)
    refused("sampling_param_max_tokens: expected an integer, got '4'", sampling_param_max_tokens="4")
    refused("sampling_param_max_tokens must be >= 1, got 0", sampling_param_max_tokens=0)
    refused("sampling_param_max_tokens must be >= 1, got -1", sampling_param_max_tokens=-1)


def test_the_seed_is_a_uint64():
    assert parse(sampling_param_seed=0).sampling.seed == 0
    assert parse(sampling_param_seed=MAX_SEED).sampling.seed == 2**64 - 1
    refused(f"sampling_param_seed must be between 0 and {MAX_SEED}, got {MAX_SEED + 1}",
            sampling_param_seed=MAX_SEED + 1)
    refused("sampling_param_seed must be between 0 and 18446744073709551615, got -1", sampling_param_seed=-1)


def test_floats():
    assert parse(sampling_param_temperature=1).sampling.temperature == 1.0
    assert type(parse(sampling_param_temperature=1).sampling.temperature) is float
    assert parse(sampling_param_temperature=0).sampling.temperature == 0.0  # 0 is allowed: greedy
    for bad in (True, "0.5", b"1", float("inf"), float("nan")):
        with pytest.raises(RequestError, match=r"^sampling_param_temperature: expected a finite number, got "):
            parse(sampling_param_temperature=bad)
    refused("sampling_param_temperature must be >= 0, got -0.5", sampling_param_temperature=-0.5)


def test_flags_are_booleans():
    req = parse(streaming=[True], sampling_param_exclude_input_from_output=True, sampling_param_return_perf_metrics=True,
                return_finish_reason=True, return_stop_reason=True, return_cumulative_logprob=True)
    assert (req.streaming, req.exclude_input_from_output, req.return_perf_metrics, req.return_finish_reason,
            req.return_stop_reason, req.return_cumulative_logprob) == (True,) * 6
    req = parse(streaming=False, return_finish_reason=np.array([False]))
    assert req.streaming is False and req.return_finish_reason is False
    refused("streaming: expected true or false, got 1", streaming=1)
    refused("return_stop_reason: expected true or false, got 'true'", return_stop_reason="true")


def test_best_of_one_is_the_only_one_emulated():
    assert parse(sampling_param_best_of=1) == parse()
    assert parse(sampling_param_best_of=None) == parse()
    refused("sampling_param_best_of > 1 is not emulated by the CPU reference engine", sampling_param_best_of=2)
    refused("sampling_param_best_of must be >= 1, got 0", sampling_param_best_of=0)


def test_penalties_are_passed_on_as_numbers():
    req = parse(sampling_param_frequency_penalty=[0.5], sampling_param_presence_penalty=2)
    assert (req.sampling.frequency_penalty, req.sampling.presence_penalty) == (0.5, 2.0)
    assert parse(sampling_param_presence_penalty=-1.5).sampling == SamplingConfig(presence_penalty=-1.5)
    refused("sampling_param_frequency_penalty: expected a finite number, got 'x'", sampling_param_frequency_penalty="x")
    refused("sampling_param_presence_penalty: expected a finite number, got inf",
            sampling_param_presence_penalty=float("inf"))


def test_top_k_and_top_p():
    assert parse(sampling_param_top_k=0).sampling.top_k == 0
    refused("sampling_param_top_k must be >= 0, got -1", sampling_param_top_k=-1)
    assert parse(sampling_param_top_p=1.0).sampling.top_p == 1.0
    assert parse(sampling_param_top_p=0.25).sampling.top_p == 0.25
    # 0 is kept as sent: the engine answers it as the release does (llmapi_top_p_zero_refused)
    assert parse(sampling_param_top_p=0.0).sampling.top_p == 0.0
    refused("sampling_param_top_p must be in [0, 1], got 1.5", sampling_param_top_p=1.5)
    refused("sampling_param_top_p must be in [0, 1], got -0.1", sampling_param_top_p=-0.1)


@pytest.mark.parametrize("fields, temperature", [
    ({}, 0.0),  # nothing set: greedy
    ({"sampling_param_top_k": 1}, 0.0),  # top_k 1 alone is greedy anyway
    ({"sampling_param_top_k": 2}, 1.0),  # top_k alone: sample at temperature 1 within the cut
    ({"sampling_param_top_p": 0.9}, 1.0),
    ({"sampling_param_top_p": 1.0}, 0.0),  # no cut: still greedy
    ({"sampling_param_top_k": 2, "sampling_param_temperature": 0.0}, 0.0),  # a temperature given wins
    ({"sampling_param_top_p": 0.9, "sampling_param_temperature": 0.7}, 0.7),
])
def test_the_temperature_when_only_a_cut_is_given(fields, temperature):
    assert parse(**fields).sampling.temperature == temperature


def test_stop_entries_are_kept_as_sent():
    # The bytes of a Triton STRING tensor stay bytes: the engine tokenizes them as the release does.
    req = parse(sampling_param_stop=np.array([[b"END", b"\n"]], dtype=object))
    assert req.stop == (b"END", b"\n")
    assert parse(sampling_param_stop="stop").stop == ("stop",)
    assert parse(sampling_param_stop=[["a"], [b"b"]]).stop == ("a", b"b")
    assert parse(sampling_param_stop=[]).stop == ()
    refused("sampling_param_stop: expected a string, got 3", sampling_param_stop=["a", 3])
    refused("sampling_param_stop: expected a list of strings, got 3", sampling_param_stop=3)


def test_unknown_inputs_are_kept_aside_and_known_ones_are_the_model_config_inputs():
    req = parse(my_input=[1], streaming=False)
    assert req.extra == {"my_input": [1]}
    assert "text_input" in INPUT_NAMES and "sampling_param_stop" in INPUT_NAMES and len(INPUT_NAMES) == 17
    assert set(LIST_INPUTS) <= set(INPUT_NAMES)


def test_a_chunk_reports_its_request_counters():
    stats = SpecStats()
    stats.add(StepResult([1, 2, 3], 4, 2))
    chunk = Chunk("text", [1, 2, 3], stats=stats)
    assert (chunk.total_draft_tokens, chunk.total_accepted_draft_tokens, chunk.acceptance_rate) == (4, 2, 0.5)
    assert Chunk("", []).finished is False and Chunk("", []).warnings == ()


def test_every_input_names_itself_in_its_refusal():
    refused("streaming: expected one value, got 2", streaming=[True, False])
    refused("sampling_param_temperature: expected one value, got 2", sampling_param_temperature=[0.5, 0.7])
    refused("sampling_param_top_p: expected a finite number, got 'x'", sampling_param_top_p="x")
    refused("sampling_param_stop: expected a string, got 3", sampling_param_stop=[["a", 3]])  # nested
