"""Measure the CPU Triton flow: cold start, /generate latency, and per-method speculation figures.

    python benchmarks/triton_cpu.py [--out out/triton_cpu.json] [--max-tokens 32] [--repeats 3]

Renders the guide's templates for the tiny models (``specdec-guide tiny-model``), starts the
bundled tritonserver once per measurement, and reports:

- cold start: process start to /v2/health/ready, for a one-model and for the all-methods repository;
- /generate latency of the baseline: p50 / p95 over sequential requests;
- per method, on a fixed prompt set: acceptance rate (accepted / drafted), acceptance length
  (generated tokens per target forward pass = generated / (generated - accepted)), and the
  wall-clock time relative to the baseline measured in the same run.

The tiny models are random networks: the figures show the plumbing and the accounting, not the
speed-ups of real models (a tiny target costs about as much as its draft). Not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
import urllib.request
from datetime import datetime, timezone
from pathlib import Path

from specdec_guide import templates
from specdec_guide.releases import methods
from specdec_guide.models.tiny import write_tiny_models
from specdec_guide.triton import TritonServer

ROOT = Path(__file__).resolve().parents[1]
DRAFTER = ROOT / "snippets" / "drafters" / "prompt_lookup_drafter.py"
# Every method the CPU engine runs (schemas/methods.yaml), baseline first.
METHODS = methods.cpu_ids()
PROMPTS = [
    "The quick brown fox jumps over the lazy dog. The quick brown",
    "def add(a, b):\n    return a + b\n\ndef sub(a, b):\n    return a - b\n\ndef mul(a, b):\n",
    "Q: What is speculative decoding?\nA:",
    "abc abc abc abc abc",
    '{"name": "alpha", "id": 1}, {"name": "beta", "id": 2}, {"name": "gamma", "id": 3}, {"name": ',
    "Once upon a time there was a",
]


def _render_all(repo: Path, target: Path, draft: Path) -> None:
    common = dict(model=str(target), out=repo, force=True)
    for method in METHODS:
        extra = methods.render_arguments(method, draft_model=draft, drafter=f"{DRAFTER}:PromptLookupDrafter")
        templates.render(method, name=method, **common, **extra)


def _generate(server: TritonServer, model: str, prompt: str, max_tokens: int) -> tuple[dict, float]:
    body = {"text_input": prompt, "sampling_param_max_tokens": max_tokens,
            "sampling_param_exclude_input_from_output": True, "sampling_param_return_perf_metrics": True}
    req = urllib.request.Request(f"{server.http_url}/v2/models/{model}/generate", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    t0 = time.perf_counter()
    with urllib.request.urlopen(req, timeout=300) as r:
        out = json.loads(r.read())
    return out, time.perf_counter() - t0


def _num(value) -> float:
    return float(value[0] if isinstance(value, list) else value)  # the llmapi model sends strings


def cold_start(repo: Path) -> float:
    t0 = time.perf_counter()
    with TritonServer(repo, timeout=300):
        return time.perf_counter() - t0


def run(max_tokens: int, repeats: int, latency_requests: int) -> dict:
    from transformers import AutoTokenizer

    with tempfile.TemporaryDirectory(prefix="specdec-bench-") as tmp:
        return _run(Path(tmp), max_tokens, repeats, latency_requests, AutoTokenizer)


def _run(work: Path, max_tokens: int, repeats: int, latency_requests: int, AutoTokenizer) -> dict:
    target, draft = write_tiny_models(work / "models")
    tokenizer = AutoTokenizer.from_pretrained(target)
    single, full = work / "repo_single", work / "repo_all"
    templates.render("baseline", model=str(target), out=single)
    _render_all(full, target, draft)

    result: dict = {
        "schema_version": 1,
        "started_at_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
        "server": "tritonserver 2.51.0 (nvidia-pytriton 0.7.0), CPU reference engine, tiny models",
        "settings": {"max_tokens": max_tokens, "repeats": repeats, "prompts": len(PROMPTS),
                     "latency_requests": latency_requests},
    }
    result["cold_start_s"] = {"one_model": round(cold_start(single), 2)}

    t0 = time.perf_counter()
    # One torch thread per model process: several engines on few cores otherwise spin on each other.
    with TritonServer(full, timeout=300, env={"SPECDEC_ENGINE_THREADS": "1"}) as server:
        result["cold_start_s"][f"{len(METHODS)}_models"] = round(time.perf_counter() - t0, 2)
        for method in METHODS:  # warm-up: first requests pay lazy imports and allocations
            _generate(server, method, PROMPTS[0], 4)

        lat = [_generate(server, "baseline", PROMPTS[i % len(PROMPTS)], 16)[1] * 1000 for i in range(latency_requests)]
        q = statistics.quantiles(lat, n=20, method="inclusive")
        result["latency_ms"] = {"model": "baseline", "max_tokens": 16, "n": len(lat),
                                "p50": round(statistics.median(lat), 2), "p95": round(q[18], 2)}

        methods: dict = {}
        walls = {m: [] for m in METHODS}
        for _ in range(repeats):
            for method in METHODS:  # interleaved, so drift in machine load hits every method alike
                total = 0.0
                for prompt in PROMPTS:
                    out, dt = _generate(server, method, prompt, max_tokens)
                    total += dt
                    row = methods.setdefault(method, {"generated": 0, "drafted": 0, "accepted": 0})
                    row["generated"] += len(tokenizer(out["text_output"], add_special_tokens=False).input_ids)
                    row["drafted"] += int(_num(out.get("total_draft_tokens", 0)))
                    row["accepted"] += int(_num(out.get("total_accepted_draft_tokens", 0)))
                walls[method].append(total)
        base_wall = statistics.median(walls["baseline"])
        for method, row in methods.items():
            steps = row["generated"] - row["accepted"]  # each target pass emits accepted + 1 tokens
            row["acceptance_rate"] = round(row["accepted"] / row["drafted"], 3) if row["drafted"] else None
            row["acceptance_length"] = round(row["generated"] / steps, 3) if steps else None
            row["wall_s_median"] = round(statistics.median(walls[method]), 3)
            row["wall_ratio_to_baseline"] = round(statistics.median(walls[method]) / base_wall, 3)
        result["methods"] = methods
    return result


def table(result: dict) -> str:
    lines = [
        f"cold start to ready: {result['cold_start_s']}",
        f"/generate latency (baseline, 16 tokens, n={result['latency_ms']['n']}): "
        f"p50 {result['latency_ms']['p50']} ms, p95 {result['latency_ms']['p95']} ms",
        "",
        f"{'method':<14} {'drafted':>8} {'accepted':>9} {'acc.rate':>9} {'acc.len':>8} {'wall s':>8} {'vs base':>8}",
    ]
    for method, r in result["methods"].items():
        rate = "-" if r["acceptance_rate"] is None else f"{r['acceptance_rate']:.3f}"
        alen = "-" if r["acceptance_length"] is None else f"{r['acceptance_length']:.2f}"
        lines.append(f"{method:<14} {r['drafted']:>8} {r['accepted']:>9} {rate:>9} {alen:>8} "
                     f"{r['wall_s_median']:>8.3f} {r['wall_ratio_to_baseline']:>7.2f}x")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(ROOT / "out" / "triton_cpu.json"))
    parser.add_argument("--max-tokens", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--latency-requests", type=int, default=50)
    args = parser.parse_args(argv)
    result = run(args.max_tokens, args.repeats, args.latency_requests)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(table(result))
    print(f"\nwrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
