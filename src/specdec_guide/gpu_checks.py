"""What the GPU notebooks check after a run, written once so that every notebook measures the same way.

Two things a GPU notebook wants to know, each measured in a way that works on the release it runs on:

* **Did speculation keep the target's greedy output?** Upstream's own speculative-decoding tests
  (TensorRT-LLM ``tests/unittest/_torch/speculative/``) assert identical text only for short outputs
  (10 to 32 tokens), a handful of prompts and a reference LLM built with the *same* settings as the
  speculative one. Longer outputs, other settings (overlap scheduler on in one run and off in the
  other) or another server (Triton) can part at a near tie in bf16 without a bug. So the notebooks
  *report* the first position where two outputs part, and fail only where upstream's tests would:
  in the first ``exact_prefix`` tokens (default 10) of two runs with the same settings.
* **Did the target accept drafts?** The per-request counters (``total_accepted_draft_tokens`` from
  ``return_perf_metrics``) are not filled by every release and sampler (TensorRT-LLM PR #17082: zero
  with ``TorchSampler`` on 1.1.0 and 1.2.1). A measure that does not depend on them: output tokens per
  decoding iteration of the target, from the LLM's iteration statistics (``enable_iter_perf_stats``,
  ``LLM.get_stats``) with one request in flight. Without speculation it is at most 1; above 1, drafts
  were accepted. Where an iteration carries ``specDecodingStats`` (releases that fill them), those
  counts are read too.

Only the standard library: the GPU container's Python runs this.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Iterable, Sequence


def first_divergence(reference: Sequence, other: Sequence) -> int | None:
    """Index of the first item (token id or character) where the two sequences differ (a length difference counts), or None."""
    for i, (a, b) in enumerate(zip(reference, other)):
        if a != b:
            return i
    if len(reference) != len(other):
        return min(len(reference), len(other))
    return None


def report_greedy(name: str, reference: Sequence, other: Sequence, exact_prefix: int = 0,
                  unit: str = "token") -> int | None:
    """Print whether ``other`` kept the ``reference`` output, and where it first parted from it.

    ``reference`` and ``other`` are token ids, or two texts with ``unit="character"`` (what a
    server returns).

    ``exact_prefix`` > 0 makes a divergence inside the first ``exact_prefix`` tokens an error: use it
    only for two runs with the same LLM settings, as upstream's tests do (they compare 10-32 tokens).
    Returns the first divergent position, or None.
    """
    at = first_divergence(reference, other)
    if at is None:
        print(f"{name}: identical to the baseline over {len(reference)} {unit}s")
    else:
        ref_tok = reference[at] if at < len(reference) else "(end)"
        oth_tok = other[at] if at < len(other) else "(end)"
        print(f"{name}: first differs from the baseline at {unit} {at} of {len(reference)} "
              f"(baseline {ref_tok!r}, here {oth_tok!r}); the {unit}s before it are the same")
    if exact_prefix and at is not None and at < exact_prefix:
        raise AssertionError(f"{name}: differs from a run with the same settings within the first "
                             f"{exact_prefix} {unit}s (at {at}), where upstream's tests expect identity")
    return at


def _as_dict(stat: Any) -> dict:
    if isinstance(stat, dict):
        return stat
    if isinstance(stat, str):
        try:
            value = json.loads(stat)
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}
    return {}


@dataclass(frozen=True)
class Acceptance:
    """Acceptance of one request, measured from the LLM's iteration statistics."""

    output_tokens: int
    iterations: int          # target iterations in which the request was scheduled
    draft_tokens: int | None     # from specDecodingStats, when the release fills them
    accepted_tokens: int | None

    @property
    def tokens_per_iteration(self) -> float:
        return self.output_tokens / self.iterations if self.iterations else 0.0

    def line(self, name: str) -> str:
        text = (f"{name}: {self.output_tokens} output tokens in {self.iterations} target iterations = "
                f"{self.tokens_per_iteration:.2f} tokens per iteration (measured from LLM.get_stats)")
        if self.draft_tokens:
            text += (f"; specDecodingStats: {self.accepted_tokens} of {self.draft_tokens} draft tokens "
                     f"accepted ({self.accepted_tokens / self.draft_tokens:.2f})")
        return text


def acceptance_from_stats(stats: Iterable[Any], output_tokens: int) -> Acceptance:
    """Count the iterations that scheduled a request (one request in flight) and any spec-decoding counts.

    An iteration is counted when its ``inflightBatchingStats`` scheduled a request (context or
    generation), or, where those are missing, when ``numActiveRequests`` is above zero.
    """
    iterations = 0
    drafted = accepted = 0
    saw_spec = False
    for raw in stats:
        stat = _as_dict(raw)
        ifb = stat.get("inflightBatchingStats") or {}
        scheduled = ifb.get("numScheduledRequests")
        if scheduled is None:
            scheduled = stat.get("numActiveRequests", 0)
        if scheduled:
            iterations += 1
        spec = stat.get("specDecodingStats")
        if isinstance(spec, dict) and "numDraftTokens" in spec:
            saw_spec = True
            drafted += int(spec.get("numDraftTokens") or 0)
            accepted += int(spec.get("numAcceptedTokens") or 0)
    return Acceptance(output_tokens=output_tokens, iterations=iterations,
                      draft_tokens=drafted if saw_spec else None, accepted_tokens=accepted if saw_spec else None)


def check_accepted(name: str, acceptance: Acceptance) -> None:
    """Print the measure and fail unless the target took more than one token per iteration."""
    print(acceptance.line(name))
    if acceptance.iterations == 0:
        raise AssertionError(f"{name}: LLM.get_stats() returned no iteration that scheduled the request "
                             "(was the LLM built with enable_iter_perf_stats=True, and read before shutdown?)")
    if acceptance.tokens_per_iteration <= 1.0:
        raise AssertionError(f"{name}: {acceptance.tokens_per_iteration:.2f} tokens per target iteration: "
                             "no draft token was accepted")


def per_request_counters(name: str, drafted: Any, accepted: Any) -> None:
    """Print the per-request counters as they came back, and say what a zero means."""
    d, a = int(drafted or 0), int(accepted or 0)
    if d == 0 and a == 0:
        print(f"{name}: per-request counters read 0 drafted / 0 accepted. TensorRT-LLM PR #17082: "
              "1.1.0 and 1.2.1 leave them unfilled with TorchSampler; "
              "acceptance is measured from LLM.get_stats (notebooks 04-07) instead")
    else:
        print(f"{name}: per-request counters: {a} of {d} draft tokens accepted")
    if a > d:
        raise AssertionError(f"{name}: {a} accepted draft tokens out of {d} drafted")
