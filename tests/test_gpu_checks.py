"""The checks the GPU notebooks run after a TensorRT-LLM run (specdec_guide.gpu_checks), on made-up inputs."""

from __future__ import annotations

import json

import pytest

from specdec_guide.gpu_checks import (acceptance_from_stats, check_accepted, first_divergence,
                                      per_request_counters, report_greedy)


def test_first_divergence_finds_the_first_differing_token_or_a_length_difference():
    assert first_divergence([1, 2, 3], [1, 2, 3]) is None
    assert first_divergence([1, 2, 3], [1, 9, 3]) == 1
    assert first_divergence([1, 2, 3], [1, 2]) == 2
    assert first_divergence("abc", "abd") == 2


def test_report_greedy_reports_late_divergence_and_fails_only_inside_the_exact_prefix(capsys):
    ref = list(range(64))
    late = ref[:40] + [999] * 24
    assert report_greedy("late", ref, late, exact_prefix=10) == 40
    assert "first differs from the baseline at token 40 of 64" in capsys.readouterr().out
    with pytest.raises(AssertionError, match="within the first 10 tokens"):
        report_greedy("early", ref, ref[:3] + [999] * 61, exact_prefix=10)
    assert report_greedy("no check", ref, [999] * 64) == 0  # exact_prefix 0: report only
    assert report_greedy("text", "same", "same", unit="character") is None
    assert "identical to the baseline over 4 characters" in capsys.readouterr().out


def _stat(scheduled, drafted=None, accepted=None, as_json=False):
    stat = {"iter": 0, "numActiveRequests": scheduled,
            "inflightBatchingStats": {"numScheduledRequests": scheduled}}
    if drafted is not None:
        stat["specDecodingStats"] = {"numDraftTokens": drafted, "numAcceptedTokens": accepted}
    return json.dumps(stat) if as_json else stat


def test_acceptance_counts_scheduled_iterations_and_spec_counts():
    # 1 context iteration + 15 generation iterations for 64 tokens: 64 / 16 = 4 tokens per iteration.
    stats = [_stat(1)] + [_stat(1, 4, 3, as_json=True) for _ in range(15)] + [_stat(0)]
    a = acceptance_from_stats(stats, 64)
    assert (a.iterations, a.draft_tokens, a.accepted_tokens) == (16, 60, 45)
    assert a.tokens_per_iteration == 4.0
    check_accepted("spec", a)


def test_check_accepted_fails_without_speculative_gain_or_without_stats():
    with pytest.raises(AssertionError, match="no draft token was accepted"):
        check_accepted("plain", acceptance_from_stats([_stat(1)] * 64, 64))
    with pytest.raises(AssertionError, match="no iteration"):
        check_accepted("nothing", acceptance_from_stats([], 64))
    # Without inflightBatchingStats the active-request count is used; unknown text is ignored.
    a = acceptance_from_stats([{"numActiveRequests": 1}] * 8 + ["not json"], 32)
    assert a.iterations == 8 and a.draft_tokens is None


def test_per_request_counters_explain_a_zero_and_reject_impossible_counts(capsys):
    per_request_counters("zero", "0", "0")
    assert "PR #17082" in capsys.readouterr().out
    per_request_counters("filled", 40, 30)
    assert "30 of 40" in capsys.readouterr().out
    with pytest.raises(AssertionError):
        per_request_counters("bad", 3, 5)
