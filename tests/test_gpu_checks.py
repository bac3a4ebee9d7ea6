"""The checks the GPU notebooks run after a TensorRT-LLM run (specdec_guide.gpu_checks), on made-up inputs.

The notebooks write these checks out in a cell of their own (they need only their container); the
tests at the end run the same inputs through each notebook's cell and the package and compare what
each prints, returns and raises.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json

import pytest

from notebook_cells import HELPER_NOTEBOOKS, function_sources, load_helpers
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


# ---- the notebooks' own copies (they need only their container), checked against the package ------
NOTEBOOKS = sorted(HELPER_NOTEBOOKS)
GREEDY_CASES = [
    (("same", list(range(64)), list(range(64))), {}),
    (("late", list(range(64)), list(range(40)) + [999] * 24), {"exact_prefix": 10}),
    (("early", list(range(64)), [0, 1, 2] + [999] * 61), {"exact_prefix": 10}),
    (("no check", list(range(64)), [999] * 64), {}),
    (("shorter", [1, 2, 3], [1, 2]), {"exact_prefix": 10}),
    (("longer", [1, 2], [1, 2, 3]), {}),
    (("text", "same text", "same test"), {"unit": "character"}),
    (("empty", "", ""), {"unit": "character"}),
]
COUNTER_CASES = [("zero", "0", "0"), ("none", None, None), ("filled", 40, 30), ("strings", "40", "30"), ("bad", 3, 5)]
STATS_CASES = [
    ([_stat(1)] + [_stat(1, 4, 3, as_json=True) for _ in range(15)] + [_stat(0)], 64),
    ([_stat(1)] * 64, 64),
    ([], 64),
    ([{"numActiveRequests": 1}] * 8 + ["not json", "[1, 2]", 7, None], 32),
    ([_stat(1, 0, 0)] * 4, 12),
]


def _outcome(fn, *args, **kwargs):
    """What one call prints, returns and raises (the exception's class name and message)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            value = fn(*args, **kwargs)
        except Exception as err:  # noqa: BLE001 - compared, not handled
            return out.getvalue(), None, (type(err).__name__, str(err))
    return out.getvalue(), value, None


@pytest.mark.parametrize("stem", NOTEBOOKS)
def test_a_notebooks_checks_print_return_and_fail_as_the_packages(stem):
    from specdec_guide import gpu_checks

    nb = load_helpers(stem)
    for args, kwargs in GREEDY_CASES:
        assert _outcome(nb.report_greedy, *args, **kwargs) == _outcome(gpu_checks.report_greedy, *args, **kwargs), args[0]
    for args in COUNTER_CASES:
        assert _outcome(nb.per_request_counters, *args) == _outcome(gpu_checks.per_request_counters, *args), args[0]
    if not hasattr(nb, "acceptance_from_stats"):
        return
    for stats, tokens in STATS_CASES:
        theirs = gpu_checks.acceptance_from_stats(stats, tokens)
        ours = nb.acceptance_from_stats(stats, tokens)
        assert ours == dataclasses.asdict(theirs)
        assert _outcome(nb.check_accepted, "spec", ours) == _outcome(gpu_checks.check_accepted, "spec", theirs)


def test_the_notebooks_write_one_text_of_each_helper():
    """A fix to a helper goes into every notebook that writes it (04's cells are the reference)."""
    reference = function_sources("04_ngram")
    for stem, names in HELPER_NOTEBOOKS.items():
        sources = function_sources(stem)
        for name in names + (("_pid",) if "stop" in names else ()):
            assert sources.get(name) == reference[name], f"{stem}: {name} differs from 04_ngram's"

