"""What the pinned releases answer, as the stand-in's fidelity tests expect it: the facts the stand-in
itself reads from the behaviour record to decide its answers, written here a second time.

The stand-in follows these facts of ``schemas/<track>/behaviour/*.yaml`` (engine/model.py
``_release_facts``, engine/core.py ``Engine.release``, engine/config.py ``penalties_applied``, the
launcher's ``launcher_disables_auto_complete``). A test that took its expected answer from the same
record would move with it: a wrong record, and the stand-in with it, would still pass. So the tests
of these facts expect the values below, and ``test_the_record_says_what_the_fidelity_tests_expect``
(tests/test_stand_in_fidelity.py) fails until the record and this table agree: a fact changed on
re-reading its sources is changed in both, on purpose. The facts the stand-in does not read (the
error prefix, the model's own checks, the keys it reads without a default, ...) are coded in the
stand-in, so their tests read the record itself.

The pinned tracks answer alike on every fact here (their records hold the same values), so a test run
per track cannot tell the tracks apart: its per-track cases show that each track's models follow a
record that says this, and scripts/fidelity_mutants.py lists the mutant that reads the wrong track's
record as one no test kills.
"""

from __future__ import annotations

from typing import Any

#: fact id -> the release's answer, on every pinned track; the comment names the record's sources.
ANSWERS: dict[str, Any] = {
    # model.py passes `streaming` in generate_async's lora_request slot (model_py_b35a, llm_generate_async_*).
    "llmapi_model_streams_per_step": False,
    # model.py's output names, in its order (model_py_b35a).
    "llmapi_perf_outputs": [
        "kv_cache_reused_block", "kv_cache_hit_rate", "kv_cache_alloc_new_blocks", "kv_cache_alloc_total_blocks",
        "kv_cache_missed_block", "arrival_time_ns", "first_scheduled_time_ns", "first_token_time_ns",
        "last_token_time_ns", "acceptance_rate", "total_accepted_draft_tokens", "total_draft_tokens",
    ],
    # Zero with TorchSampler, filled by TRTLLMSampler (pr_17082).
    "per_request_draft_counters_filled": {"TorchSampler": False, "TRTLLMSampler": True},
    # TorchSampler ignores frequency/presence penalties until PR #16485, after 1.2.1 (pr_16485, issue_9442).
    "penalties_applied_by_sampler": {"TorchSampler": False, "TRTLLMSampler": True},
    # str(None): the model never asks SamplingParams for log probs (model_py_b35a, helpers_py_0df6).
    "llmapi_cumulative_logprob_value": "None",
    # The helpers hand the STRING tensor's bytes to SamplingParams(stop=...); the tokenizer refuses them.
    "llmapi_stop_strings_as_bytes": {"stop_elements": "bytes", "outcome": "request_error"},
    # The executor's worker clamps to the room after the prompt, with a warning (executor_worker; unconfirmed).
    "llmapi_max_tokens_clamped": {"over_room": "clamped", "warning_logged": True},
    # The executor's SamplingConfig accepts only 0 < top_p <= 1 (sampling_config_cpp; unconfirmed).
    "llmapi_top_p_zero_refused": {"top_p_zero": "request_error", "accepted": "0 < top_p <= 1"},
    # Not settled: the stand-in sends its own count and says so.
    "llmapi_kv_cache_counter_values": None,
    # launch_triton_server.py adds --disable-auto-complete-config for every rank (launch_script_0a2e).
    "launcher_disables_auto_complete": True,
}


def answer(track: str, fact_id: str) -> Any:
    """The release's answer on ``track`` (the same on every pinned track: see the module's note)."""
    return ANSWERS[fact_id]
