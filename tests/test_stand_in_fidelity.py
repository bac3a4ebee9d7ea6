"""The CPU stand-in answers as the pinned release's llmapi model.py and launcher, track by track.

Every test asserts one fact of the behaviour record (schemas/<track>/behaviour/*.yaml). Where the
stand-in reads the fact from that record to decide its answer, the expected answer is written a
second time, in tests/release_answers.py (``answer``): an expectation read from the same record would
move with the stand-in and could not fail. The facts the stand-in does not read (its code holds them:
the error prefix, the model's own checks, the keys read without a default) are read from the record
(``recorded``). Each test names its fact id (the ``FACT`` marker in its name) and the failure message
names the fact's sources. scripts/fidelity_mutants.py (``make fidelity-mutants``) breaks the stand-in
once per fact and checks that these tests then fail.

The two pinned tracks' records hold the same value for every fact tested here, so the per-track cases
do not tell the tracks apart: they check that each track's models answer as the release does. That
a model follows its own track's record is tested where the record can be made to differ by track
(tests/test_engine_model_py.py, test_each_model_follows_the_record_of_the_track_*).
What does differ per track, the draft key's spelling, is tested below (test_a_121_speculative_model_*
and the load failures' spec_model_on_110).

The session's tritonserver serves the request tests of both tracks (tests/stand_in.py: tiny models,
one engine thread, the container launcher's --disable-auto-complete-config); two short-lived
servers check the load failures, with and without auto-complete.
"""

from __future__ import annotations

import json
import re
import time
import urllib.error
import urllib.request

import pytest

from specdec_guide import templates
from specdec_guide.releases.tracks import Registry
from specdec_guide.diagnostics import UserError
from specdec_guide.triton import TritonServer
from registry import tracks
from release_answers import ANSWERS, answer
from stand_in import ENGINE_ENV as ENV, LATER_DRAFT_TARGET, edit, fidelity_name, set_policy

TRACKS = tuple(tracks())
PROMPT = "the cat sat on the mat. the cat sat on the mat. the cat"
# Prompts on which the tiny target's n-gram drafter does draft (so zero counters mean "not filled").
DRAFTING_PROMPTS = ["abc abc abc abc abc", "def add(a, b):\n    return a + b\n\ndef sub(a, b):\n    return a - b\n\ndef mul(a, b):\n"]


def fact(track: str, fact_id: str):
    return Registry().resolve(track).behaviour.fact(fact_id)


def recorded(track: str, fact_id: str):
    """The record's value of a fact the stand-in does not read (its code holds the answer)."""
    assert fact_id not in ANSWERS, f"{fact_id}: the stand-in reads it from the record; expect answer() instead"
    return fact(track, fact_id).value


@pytest.mark.parametrize("track", TRACKS)
def test_the_record_says_what_the_fidelity_tests_expect(track):
    """The record the stand-in reads and the answers the tests expect are two entries of one fact:
    a fact changed on re-reading its sources is changed in both (tests/release_answers.py)."""
    record = Registry().resolve(track).behaviour
    differ = {f: (record.facts[f].value if f in record.facts else "(missing)", want)
              for f, want in ANSWERS.items() if f not in record.facts or record.facts[f].value != want}
    assert not differ, f"record on {track} vs tests/release_answers.py (record, expected): {differ}"


def cite(track: str, fact_id: str) -> str:
    rec = Registry().resolve(track).behaviour
    if fact_id not in rec.facts:
        return f"{fact_id} on {track} (not in the record yet: the lead is followed)"
    srcs = ", ".join(s.get("url", s.get("path", "?")) for s in rec.source_of(fact_id))
    return f"{fact_id} on {track} ({rec.facts[fact_id].confidence}; {srcs})"


def _edit_yaml(model_dir, old: str, new: str) -> None:
    edit(model_dir / "1" / "model.yaml", old, new)


@pytest.fixture(scope="module")
def server(stand_in_server):
    """The session's server (tests/stand_in.py): per track an ngram (decoupled), draft_target (the
    track's draft key), sync (baseline, decoupled false) and mismatch (model.yaml decoupled,
    config.pbtxt not) model, named by fidelity_name; plus batched, and LATER_DRAFT_TARGET for the teaching mode."""
    return stand_in_server


def _post(url: str, body, timeout: float = 120) -> tuple[int, str]:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


def _events(text: str) -> list[dict]:
    return [json.loads(line[len("data: "):]) for line in text.splitlines() if line.startswith("data: ")]


def _stream(server, model: str, **fields) -> list[dict]:
    body = {"text_input": PROMPT, "streaming": True, "sampling_param_max_tokens": 8, **fields}
    status, text = _post(f"{server.http_url}/v2/models/{model}/generate_stream", body)
    assert status == 200, text
    return _events(text)


# -- streaming --------------------------------------------------------------------------------
@pytest.mark.parametrize("track", TRACKS)
def test_FACT_llmapi_model_streams_per_step(server, track):
    events = _stream(server, fidelity_name(track, "ngram"))
    per_step = answer(track, "llmapi_model_streams_per_step")
    assert (len(events) > 1) == per_step and all("error" not in e for e in events), (cite(track, "llmapi_model_streams_per_step"), events)
    if not per_step:
        _, whole = _post(f"{server.http_url}/v2/models/{fidelity_name(track, 'ngram')}/generate",
                         {"text_input": PROMPT, "sampling_param_max_tokens": 8})
        assert events[0]["text_output"] == json.loads(whole)["text_output"]  # the whole text at once


@pytest.mark.parametrize("track", TRACKS)
def test_FACT_llmapi_decoupled_from_model_yaml(server, track):
    """config.pbtxt runs the model non-decoupled, model.yaml says decoupled: streaming is accepted."""
    model = fidelity_name(track, "mismatch")
    status, text = _post(f"{server.http_url}/v2/models/{model}/generate_stream",
                         {"text_input": PROMPT, "streaming": True, "sampling_param_max_tokens": 4})
    accepted = status == 200 and "error" not in text
    assert accepted == recorded(track, "llmapi_decoupled_from_model_yaml"), (cite(track, "llmapi_decoupled_from_model_yaml"), text)
    assert len(_events(text)) == 1  # Triton's rule for a non-decoupled model, not the stand-in's: context only


# -- errors -----------------------------------------------------------------------------------
@pytest.mark.parametrize("track", TRACKS)
@pytest.mark.parametrize("model_kind, fields, reason", [
    ("sync", {"streaming": True}, "Streaming is only supported in decoupled mode."),
    ("ngram", {"sampling_param_max_tokens": 0}, "sampling_param_max_tokens"),
], ids=["streaming-not-decoupled", "max_tokens-0"])
def test_FACT_llmapi_error_shape_on_generate(server, track, model_kind, fields, reason):
    shape = recorded(track, "llmapi_error_shape")
    status, text = _post(f"{server.http_url}/v2/models/{fidelity_name(track, model_kind)}/generate",
                         {"text_input": PROMPT, **fields})
    error = json.loads(text).get("error", "")
    assert status != 200 and error.startswith(shape["prefix"]) and reason in error, (cite(track, "llmapi_error_shape"), text)


def test_FACT_llmapi_model_checks_text_input_1d(server):
    """A model with max_batch_size > 0 gets a [1, n] text_input: the release refuses it."""
    checks = recorded("1.1.0", "llmapi_model_checks")
    status, text = _post(f"{server.http_url}/v2/models/batched/generate", {"text_input": PROMPT})
    refused = status != 200 and "only supports text_input being a 1D tensor" in text
    assert refused == ("text_input_1d" in checks), (cite("1.1.0", "llmapi_model_checks"), text)


@pytest.mark.parametrize("track", TRACKS)
def test_FACT_llmapi_error_shape_code_on_infer(server, track):
    """The code is the release's INTERNAL: /infer maps it to the record's HTTP status."""
    shape = recorded(track, "llmapi_error_shape")
    body = {"inputs": [{"name": "text_input", "shape": [1], "datatype": "BYTES", "data": [PROMPT]},
                       {"name": "sampling_param_max_tokens", "shape": [1], "datatype": "INT32", "data": [0]}]}
    status, text = _post(f"{server.http_url}/v2/models/{fidelity_name(track, 'sync')}/infer", body)
    assert shape["code"] == "INTERNAL" and status == shape["http_status_infer"], (cite(track, "llmapi_error_shape"), text)
    assert json.loads(text)["error"].startswith(shape["prefix"])


# -- request values, as the release treats them once they reach the LLM ------------------------------
@pytest.mark.parametrize("track", TRACKS)
def test_FACT_llmapi_top_p_zero_refused(server, track):
    """top_p 0 is not greedy: the executor's sampling config refuses it (0 < top_p <= 1 is accepted)."""
    rule, shape = answer(track, "llmapi_top_p_zero_refused"), recorded(track, "llmapi_error_shape")
    url = f"{server.http_url}/v2/models/{fidelity_name(track, 'sync')}/generate"
    body = {"text_input": PROMPT, "sampling_param_max_tokens": 6}
    greedy, top_p0 = _post(url, body), _post(url, {**body, "sampling_param_top_p": 0.0})
    assert greedy[0] == 200 and _post(url, {**body, "sampling_param_top_p": 0.5})[0] == 200, greedy
    if rule["top_p_zero"] == "request_error":
        error = json.loads(top_p0[1]).get("error", "")
        assert top_p0[0] != 200 and error.startswith(shape["prefix"]) and "top_p" in error, (
            cite(track, "llmapi_top_p_zero_refused"), top_p0)
    else:  # a record that says 0 decodes greedily
        assert top_p0[0] == 200 and json.loads(top_p0[1])["text_output"] == json.loads(greedy[1])["text_output"], (
            cite(track, "llmapi_top_p_zero_refused"), top_p0)


def _logged(server, pattern: str, wait_s: float = 15):
    """The first match of ``pattern`` in the server's log, waited for: a model's log line travels from its
    stub to the server apart from the response, and can arrive after it on a busy machine."""
    deadline = time.monotonic() + wait_s
    while (found := re.search(pattern, server.log())) is None and time.monotonic() < deadline:
        time.sleep(0.2)
    return found


# A prompt that leaves the tiny target (1024 positions, one token per byte) little room, so a clamped
# request ends within a few dozen tokens.
NEAR_LIMIT_PROMPT = "abc " * 248


@pytest.mark.parametrize("track", TRACKS)
def test_FACT_llmapi_max_tokens_clamped(server, track):
    """A max_tokens beyond the room after the prompt runs, clamped to that room, with a warning."""
    rule = answer(track, "llmapi_max_tokens_clamped")
    asked = 100_000 + TRACKS.index(track)  # one number per track: the shared log tells them apart
    url = f"{server.http_url}/v2/models/{fidelity_name(track, 'sync')}/generate"
    body = {"text_input": NEAR_LIMIT_PROMPT, "sampling_param_exclude_input_from_output": True,
            "return_finish_reason": True}
    status, text = _post(url, {**body, "sampling_param_max_tokens": asked})
    if rule["over_room"] != "clamped":
        assert status != 200, (cite(track, "llmapi_max_tokens_clamped"), text)
        return
    assert status == 200 and json.loads(text)["finish_reason"] == "length", (cite(track, "llmapi_max_tokens_clamped"), text)
    warned = _logged(server, rf"sampling_param_max_tokens={asked} is larger than the room.*clamped to (\d+)")
    assert bool(warned) == rule["warning_logged"], (cite(track, "llmapi_max_tokens_clamped"), server.log()[-2000:])
    if warned:  # the clamped request is the request for exactly the room
        room = int(warned.group(1))
        _, exact = _post(url, {**body, "sampling_param_max_tokens": room})
        assert json.loads(exact)["text_output"] == json.loads(text)["text_output"], (room, exact, text)


@pytest.mark.parametrize("track", TRACKS)
def test_FACT_llmapi_stop_strings_as_bytes(server, track):
    """sampling_param_stop reaches SamplingParams as bytes: the request fails instead of stopping."""
    rule, shape = answer(track, "llmapi_stop_strings_as_bytes"), recorded(track, "llmapi_error_shape")
    url = f"{server.http_url}/v2/models/{fidelity_name(track, 'sync')}/generate"
    body = {"text_input": PROMPT, "sampling_param_max_tokens": 8, "sampling_param_exclude_input_from_output": True}
    status, plain = _post(url, body)
    assert status == 200, plain
    words = json.loads(plain)["text_output"]
    stop = words[2:4]  # text the model does generate: a stand-in that honours it stops there
    assert len(stop) == 2, words
    status, text = _post(url, {**body, "sampling_param_stop": ["never-generated", stop]})
    if rule["outcome"] == "request_error":
        error = json.loads(text).get("error", "")
        assert status != 200 and error.startswith(shape["prefix"]), (cite(track, "llmapi_stop_strings_as_bytes"), text)
    else:  # a record that says the strings work
        assert status == 200 and json.loads(text)["text_output"] == words[:words.find(stop)], (
            cite(track, "llmapi_stop_strings_as_bytes"), text)


# -- outputs and counters -----------------------------------------------------------------------
@pytest.mark.parametrize("track", TRACKS)
def test_FACT_llmapi_perf_outputs_and_counters_as_strings(server, track):
    status, text = _post(f"{server.http_url}/v2/models/{fidelity_name(track, 'ngram')}/generate",
                         {"text_input": PROMPT, "sampling_param_max_tokens": 8, "sampling_param_return_perf_metrics": True})
    assert status == 200, text
    got = json.loads(text)
    wanted = answer(track, "llmapi_perf_outputs")
    assert set(got) - {"model_name", "model_version", "text_output"} == set(wanted), cite(track, "llmapi_perf_outputs")
    as_strings = all(isinstance(got[name], str) for name in wanted)
    assert as_strings == recorded(track, "llmapi_counters_as_strings"), (cite(track, "llmapi_counters_as_strings"), got)
    blocks = int(got["kv_cache_alloc_total_blocks"])
    assert blocks >= 1 and got["kv_cache_reused_block"] == "0"  # the stand-in's own, never-reused cache


@pytest.mark.parametrize("track", TRACKS)
def test_FACT_llmapi_kv_cache_counter_values(server, track):
    """The record does not settle the release's kv_cache_* values: the stand-in sends its own count and says so."""
    settled = answer(track, "llmapi_kv_cache_counter_values")
    assert settled is None, (f"the record now says what the release's kv_cache_* outputs read ({settled!r}): make "
                             "the stand-in send that (engine/model.py _kv_cache_counters)", cite(track, "llmapi_kv_cache_counter_values"))
    url = f"{server.http_url}/v2/models/{fidelity_name(track, 'sync')}/generate"
    body = {"text_input": PROMPT, "sampling_param_max_tokens": 8, "sampling_param_return_perf_metrics": True}
    first, again = (json.loads(_post(url, body)[1]) for _ in range(2))
    # Its own count: ceil((prompt + generated) / 32) new blocks, none reused, even for a prompt it has served.
    for got in (first, again):
        assert got["kv_cache_reused_block"] == "0" and got["kv_cache_hit_rate"] == "0.0", got
        assert got["kv_cache_alloc_new_blocks"] == got["kv_cache_alloc_total_blocks"] == got["kv_cache_missed_block"], got
    label = ("kv_cache_* outputs: the stand-in's own count (its cache in 32-token blocks, every block new, none "
             "reused), not the release's: its values are not settled (llmapi_kv_cache_counter_values)")
    assert label in server.log(), (cite(track, "llmapi_kv_cache_counter_values"), "the load log must say so")


def _drafted(server, model: str) -> int:
    total = 0
    for prompt in DRAFTING_PROMPTS:
        status, text = _post(f"{server.http_url}/v2/models/{model}/generate",
                             {"text_input": prompt, "sampling_param_max_tokens": 32, "sampling_param_return_perf_metrics": True})
        assert status == 200, text
        total += int(json.loads(text)["total_draft_tokens"])
    return total


@pytest.mark.parametrize("track", TRACKS)
@pytest.mark.parametrize("sampler, kind", [("TorchSampler", "ngram"), ("TRTLLMSampler", "trtllmsampler")])
def test_FACT_per_request_draft_counters_filled(server, track, sampler, kind):
    """The templates leave sampler_type at auto (TorchSampler); the same engine drafts in both."""
    filled = answer(track, "per_request_draft_counters_filled")
    filled = filled.get(sampler) if isinstance(filled, dict) else filled
    drafted = _drafted(server, fidelity_name(track, kind))
    assert (drafted > 0) == bool(filled), (cite(track, "per_request_draft_counters_filled"), sampler, drafted)


# The tiny target repeats its own output on this prompt ("Z=#1" twice in 12 tokens): a penalty that
# acts changes the greedy text.
PENALTIES = {"sampling_param_frequency_penalty": 1.0, "sampling_param_presence_penalty": 0.5}


@pytest.mark.parametrize("track", TRACKS)
@pytest.mark.parametrize("sampler, kind", [("TorchSampler", "ngram"), ("TRTLLMSampler", "trtllmsampler")])
def test_FACT_penalties_applied_by_sampler(server, track, sampler, kind):
    """Accepted everywhere (llmapi_penalties_honoured); they change the output where the sampler applies them."""
    url = f"{server.http_url}/v2/models/{fidelity_name(track, kind)}/generate"
    body = {"text_input": DRAFTING_PROMPTS[0], "sampling_param_max_tokens": 12}
    plain, penal = _post(url, body), _post(url, {**body, **PENALTIES})
    assert plain[0] == 200 and (penal[0] == 200) == recorded(track, "llmapi_penalties_honoured"), (
        cite(track, "llmapi_penalties_honoured"), penal)
    applied = answer(track, "penalties_applied_by_sampler")
    applied = applied.get(sampler) if isinstance(applied, dict) else applied
    changed = json.loads(plain[1])["text_output"] != json.loads(penal[1])["text_output"]
    assert changed == bool(applied), (cite(track, "penalties_applied_by_sampler"), sampler, plain, penal)
    assert f"penalties: {'applied' if applied else 'accepted and ignored'}, as {sampler} does on {track}" in server.log()


@pytest.mark.parametrize("track", TRACKS)
def test_FACT_llmapi_cumulative_logprob_value(server, track):
    url = f"{server.http_url}/v2/models/{fidelity_name(track, 'sync')}/generate"
    status, text = _post(url, {"text_input": PROMPT, "sampling_param_max_tokens": 4, "return_cumulative_logprob": True})
    assert status == 200, text
    assert json.loads(text)["cumulative_logprob"] == answer(track, "llmapi_cumulative_logprob_value"), (
        cite(track, "llmapi_cumulative_logprob_value"), text)
    _, without = _post(url, {"text_input": PROMPT, "sampling_param_max_tokens": 4})
    assert "cumulative_logprob" not in json.loads(without)  # only when asked


# -- teaching, labelled -------------------------------------------------------------------------
def test_teaching_departures_only_when_asked_and_labelled(server):
    events = _stream(server, LATER_DRAFT_TARGET, text_input=DRAFTING_PROMPTS[0], sampling_param_return_perf_metrics=True,
                     sampling_param_max_tokens=32)
    assert len(events) > 1 and int(events[-1]["total_draft_tokens"]) > 0, events
    texts = [e["text_output"] for e in events]
    cumulative = all(b.startswith(a) for a, b in zip(texts, texts[1:]))
    assert cumulative == recorded("1.1.0", "llmapi_stream_text_is_cumulative"), cite("1.1.0", "llmapi_stream_text_is_cumulative")
    # Labelled where this server can: the load log names the departures (2.51's Python backend has
    # no response parameters; the pages' stored outputs carry the label in their first line).
    assert "departures asked: stream_per_step" in server.log() and "filled_draft_counters:" in server.log()


# -- model.yaml per track -------------------------------------------------------------------------
def test_a_121_speculative_model_loads_on_the_121_track(server):
    """The 1.2.1 spelling of the draft key serves on its own track (and is refused on 1.1.0, below)."""
    status, text = _post(f"{server.http_url}/v2/models/{fidelity_name('1.2.1', 'dt')}/generate",
                         {"text_input": PROMPT, "sampling_param_max_tokens": 4})
    assert status == 200, text
    assert "track 1.2.1" in server.log() and "track 1.1.0" in server.log()


# -- load failures --------------------------------------------------------------------------------
def _failing_repo(root, target, draft, *, auto_complete: bool):
    repo = root / ("auto" if auto_complete else "launcher")
    common = dict(model=str(target), out=repo, force=True)
    no_decoupled = templates.render("baseline", name="no_decoupled", **common)
    _edit_yaml(no_decoupled, "  decoupled: true\n", "")
    spec_on_110 = templates.render("draft_target", name="spec_model_on_110", draft_model=str(draft), **common)
    _edit_yaml(spec_on_110, "speculative_model_dir:", "speculative_model:")
    if auto_complete:
        no_mbs = templates.render("baseline", name="no_max_batch_size", **common)
        _edit_yaml(no_mbs, "  max_batch_size: 0\n", "")
        conflict = templates.render("baseline", name="conflict", decoupled=False, **common)
        set_policy(conflict, True)
    return repo


@pytest.mark.triton
def test_FACT_load_failures_with_the_launcher(tmp_path, tiny_models):
    """llmapi_triton_config_required_keys under our launcher (auto-complete off, as the container's)."""
    _load_failures(tmp_path, tiny_models, auto_complete=False)


@pytest.mark.triton
def test_FACT_load_failures_with_auto_complete(tmp_path, tiny_models):
    """llmapi_triton_config_required_keys and auto_complete_policy_conflict_fails with auto-complete."""
    _load_failures(tmp_path, tiny_models, auto_complete=True)


def _load_failures(tmp_path, tiny_models, auto_complete: bool) -> None:
    """The facts of loading, and each track's snapshot, in one server start that must fail."""
    target, draft = tiny_models
    repo = _failing_repo(tmp_path, target, draft, auto_complete=auto_complete)
    server = TritonServer(repo, timeout=180, env=ENV, auto_complete=auto_complete)
    try:
        with pytest.raises(UserError) as err:
            server.start()
    finally:
        server.stop()  # also when the start unexpectedly succeeded
    reasons = str(err.value).split("\nlog tail:")[0]
    required = recorded("1.1.0", "llmapi_triton_config_required_keys")["auto_complete" if auto_complete else "initialize"]
    assert ("'no_decoupled' failed to load" in reasons) == ("decoupled" in required), (cite("1.1.0", "llmapi_triton_config_required_keys"), reasons)
    assert "KeyError" in server.log() or "'decoupled'" in reasons
    assert "'spec_model_on_110' failed to load" in reasons and "speculative_model" in reasons, reasons
    if auto_complete:
        assert ("'no_max_batch_size' failed to load" in reasons) == ("max_batch_size" in required), reasons
        conflicts = recorded("1.1.0", "auto_complete_policy_conflict_fails")
        assert ("'conflict' failed to load" in reasons) == conflicts, (cite("1.1.0", "auto_complete_policy_conflict_fails"), reasons)


def test_FACT_launcher_disables_auto_complete(tmp_path):
    """Our launcher starts tritonserver as the container's launch_triton_server.py does (the launcher
    reads the record's fact, so the expected answer is tests/release_answers.py's); asked for
    auto-complete, it leaves the flag out. No server is started: the command line is the answer."""
    disabled = answer("1.1.0", "launcher_disables_auto_complete")
    command = TritonServer(tmp_path)._command(*_dummy_paths())
    assert ("--disable-auto-complete-config" in command) == disabled, cite("1.1.0", "launcher_disables_auto_complete")
    assert "--disable-auto-complete-config" not in TritonServer(tmp_path, auto_complete=True)._command(*_dummy_paths())


def _dummy_paths():
    from pathlib import Path

    return Path("/pkg"), Path("/backends")
