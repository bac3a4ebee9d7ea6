"""Read what AIPerf wrote: its summary per run, and the acceptance counters it does not read.

An ``aiperf profile`` run (``snippets/bench/aiperf_profile.sh``) writes, per concurrency level,
``profile_export_aiperf.json`` (the summary: TTFT, inter-token latency, throughputs),
``profile_export.jsonl`` (one line of metrics per request) and, with ``--export-level raw``,
``profile_export_raw.jsonl`` (every request's payload and every response body). A sweep
(``--concurrency 1,2,4``) puts each level in ``OUT/concurrency_<n>/``; a single level writes
into ``OUT`` itself.

AIPerf's own spec-decode metrics read vLLM's per-request payload (a histogram of accepted drafts
per step), which TensorRT-LLM's llmapi model does not send. What the model does send, with
``sampling_param_return_perf_metrics``, are three running counters per request:
``total_draft_tokens``, ``total_accepted_draft_tokens`` and ``acceptance_rate``
(accepted / drafted). :func:`acceptance` adds them up from the last response of each request.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from specdec_guide.diagnostics import UserError

SUMMARY = "profile_export_aiperf.json"
PER_REQUEST = "profile_export.jsonl"
RAW = "profile_export_raw.jsonl"


@dataclass(frozen=True)
class RunSummary:
    """One AIPerf run (one concurrency level) against one server."""

    concurrency: int
    requests: int
    ttft_ms: float  # time to first token, mean
    itl_ms: float  # inter-token latency, mean
    output_tokens_per_s: float  # all requests together
    tokens_per_s_per_user: float  # mean over requests of output tokens / request latency (AIPerf: E2E per user)
    requests_per_s: float
    errors: int
    # Request latency, mean. Behind a model that sends one event per request (the pinned releases'
    # llmapi model.py) TTFT equals it and AIPerf's ITL, (latency - TTFT) / (tokens - 1), reads 0.
    latency_ms: float = float("nan")


@dataclass(frozen=True)
class Acceptance:
    """The llmapi model's per-request counters, added up over a set of requests."""

    requests: int
    output_tokens: int
    drafted: int
    accepted: int

    @property
    def acceptance_rate(self) -> float:
        """TensorRT-LLM's ``acceptance_rate`` pooled over requests: accepted / drafted."""
        return self.accepted / self.drafted if self.drafted else 0.0

    @property
    def acceptance_length(self) -> float:
        """Tokens per target step. Every step emits its accepted drafts plus one token of the
        target's own, so steps = output tokens - accepted drafts (exact while no step is cut
        short by max_tokens or a stop string)."""
        steps = self.output_tokens - self.accepted
        return self.output_tokens / steps if steps > 0 else 0.0


def run_dirs(out: str | Path) -> list[Path]:
    """The folders holding one run each: ``OUT/concurrency_<n>`` of a sweep, or ``OUT``."""
    out = Path(out)
    swept = sorted((p for p in out.glob("concurrency_*") if (p / SUMMARY).is_file()),
                   key=lambda p: int(p.name.rsplit("_", 1)[1]))
    if swept:
        return swept
    if (out / SUMMARY).is_file():
        return [out]
    raise UserError(f"{out}: no AIPerf results ({SUMMARY}) here or in concurrency_*/")


def _load_json(path: Path):
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as err:
        raise UserError(f"{path}: cannot read AIPerf output: {err}") from None


def _jsonl(path: Path) -> list[dict]:
    if not path.is_file():
        raise UserError(f"{path}: missing (was AIPerf run with --export-level raw?)")
    rows = []
    for lineno, line in enumerate(path.read_text().splitlines(), start=1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as err:
                raise UserError(f"{path}:{lineno}:{err.colno}: {err.msg}") from None
    return rows


def _avg(summary: dict, name: str) -> float:
    value = summary.get(name) or {}
    return float(value.get("avg", float("nan"))) if isinstance(value, dict) else float("nan")


def _concurrency(summary: dict) -> int:
    for phase in (summary.get("input_config") or {}).get("phases", []):
        if phase.get("kind") == "profiling" and phase.get("concurrency"):
            return int(phase["concurrency"])
    raise UserError("AIPerf summary names no profiling concurrency (input_config.phases)")


def summary(run_dir: str | Path) -> RunSummary:
    """The headline figures of one run from ``profile_export_aiperf.json``."""
    data = _load_json(Path(run_dir) / SUMMARY)
    count = int(_avg(data, "request_count"))
    return RunSummary(
        concurrency=_concurrency(data),
        requests=count,
        ttft_ms=_avg(data, "time_to_first_token"),
        itl_ms=_avg(data, "inter_token_latency"),
        output_tokens_per_s=_avg(data, "output_token_throughput"),
        tokens_per_s_per_user=_avg(data, "e2e_output_token_throughput"),
        requests_per_s=_avg(data, "request_throughput"),
        errors=int((data.get("error_summary") and sum(e.get("count", 0) for e in data["error_summary"])) or 0),
        latency_ms=_avg(data, "request_latency"),
    )


def _last_counters(responses: list[dict]) -> dict | None:
    """The counters of the last response body that has them (the final state of the request)."""
    for response in reversed(responses):
        for packet in reversed(response.get("packets") or []):
            body = _counter_body(packet.get("value") if packet.get("name", "data") == "data" else None)
            if body is not None:
                return body
        body = _counter_body(response.get("text"))  # a non-streaming body
        if body is not None:
            return body
    return None


def _counter_body(raw) -> dict | None:
    """``raw`` parsed, if it is a JSON object that carries the draft counters; else None."""
    if not isinstance(raw, str):
        return None
    try:
        body = json.loads(raw)
    except json.JSONDecodeError:
        return None
    return body if isinstance(body, dict) and "total_draft_tokens" in body else None


def _number(body: dict, name: str) -> float:
    value = body[name]
    if isinstance(value, list):  # a batched model answers [value]
        value = value[0]
    return float(value)  # TensorRT-LLM's model sends these as strings


def profiled_records(run_dir: str | Path) -> list[tuple[int, dict]]:
    """The raw export's records of the profiling phase (a warm-up's are left out), each with its
    number among the file's records."""
    rows = enumerate(_jsonl(Path(run_dir) / RAW), start=1)
    return [(n, row) for n, row in rows if (row.get("metadata") or {}).get("benchmark_phase", "profiling") == "profiling"]


def acceptance(run_dir: str | Path, groups: dict[str, list[str]] | None = None) -> dict[str, Acceptance]:
    """Acceptance counters added up per group of prompts (``{"all": ...}`` without groups).

    ``groups`` maps a name to the ``text_input`` strings that belong to it (e.g. the
    code-editing and chat sets); output tokens come from AIPerf's per-request metrics.
    A request whose responses carry no counters (the server was not asked for them, or an
    error) is an error here: the figures would be silently partial.
    """
    run_dir = Path(run_dir)
    tokens = {}
    for row in _jsonl(run_dir / PER_REQUEST):
        metrics = row.get("metrics") or {}
        osl = (metrics.get("output_sequence_length") or {}).get("value")
        rid = (row.get("metadata") or {}).get("x_request_id")
        if rid is not None and osl is not None:
            tokens[rid] = int(osl)
    owner = {text: name for name, texts in (groups or {}).items() for text in texts}
    totals: dict[str, list[int]] = {}
    for lineno, row in profiled_records(run_dir):
        counters = _last_counters(row.get("responses") or [])
        if counters is None:
            raise UserError(f"{run_dir / RAW}:{lineno}:1: no total_draft_tokens in any response "
                            "(send sampling_param_return_perf_metrics: true)")
        prompt = (row.get("payload") or {}).get("text_input")
        name = owner.get(prompt, "other") if groups else "all"
        rid = (row.get("metadata") or {}).get("x_request_id")
        t = totals.setdefault(name, [0, 0, 0, 0])
        t[0] += 1
        t[1] += tokens.get(rid, 0)
        t[2] += int(_number(counters, "total_draft_tokens"))
        t[3] += int(_number(counters, "total_accepted_draft_tokens"))
    return {name: Acceptance(*t) for name, t in totals.items()}
