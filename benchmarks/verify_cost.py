"""What one target pass costs when it checks q tokens per sequence, per batch size, on one GPU.

    python benchmarks/verify_cost.py [--out benchmarks/results]        # on a CUDA GPU (minutes)
    python benchmarks/verify_cost.py --tiny --out /tmp/verify-cost      # CPU smoke test, tiny shapes
    make regen WHAT=benchmark-tables:verify_cost                         # re-render the stored run's box

Speculation pays when checking k draft tokens in one pass costs little more than writing one
token. This measures that cost outside any serving engine: a decoder with the shape of
Llama-3.1-8B (the target) and one with the shape of Llama-3.2-1B (a draft), random bf16 weights,
written as plain PyTorch operations (RMSNorm, grouped-query attention with
``scaled_dot_product_attention``, SwiGLU MLP, LM head; rotary embeddings left out), each forward
captured in a CUDA graph as serving engines capture theirs, over a KV cache of ``--ctx`` tokens
per sequence into which the q new keys and values are written in place. Each new token attends
to the cache and to the new tokens before it (causal mask).

For each batch size B and q tokens per sequence: the median time of one graph replay, and its
ratio to the one-token pass at the same B. For the draft: one-token passes only, as a share of
the target's one-token pass. Writes verify_cost.json (every figure, the shapes and the
provenance: GPU, driver, torch, CUDA, date) and verify_cost.md, the box that the page
"Choosing a method" includes. These are not TensorRT-LLM figures: its kernels differ, and a
page quoting them must say so (the box does).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "benchmarks" / "results"

# Llama-3.1-8B and Llama-3.2-1B: hidden size, layers, query heads, KV heads, MLP size, vocabulary
# (the models' published config.json values).
SHAPES = {
    "target": {"name": "Llama-3.1-8B", "hidden": 4096, "layers": 32, "heads": 32, "kv_heads": 8,
               "intermediate": 14336, "vocab": 128256},
    "draft": {"name": "Llama-3.2-1B", "hidden": 2048, "layers": 16, "heads": 32, "kv_heads": 8,
              "intermediate": 8192, "vocab": 128256},
}
TINY_SHAPES = {
    role: dict(shape, name=f"tiny ({shape['name']}-like)", hidden=64, layers=2, heads=4, kv_heads=2,
               intermediate=128, vocab=512)
    for role, shape in SHAPES.items()
}
BATCHES = (1, 4, 16, 32, 64, 128)
QS = (1, 2, 3, 5, 9)  # q = k + 1: one pass checks k draft tokens and adds one of its own
CTX = 1024
REPEATS = 20


def make_weights(shape: dict, device, dtype, generator) -> dict:
    """Random weights of a decoder of ``shape`` (scaled small so activations stay finite)."""
    import torch

    def w(*dims):
        return (torch.randn(*dims, generator=generator, device="cpu", dtype=torch.float32) * 0.02).to(device, dtype)

    head_dim = shape["hidden"] // shape["heads"]
    qkv = (shape["heads"] + 2 * shape["kv_heads"]) * head_dim
    layers = [{"norm1": torch.ones(shape["hidden"], device=device, dtype=dtype), "qkv": w(shape["hidden"], qkv),
               "o": w(shape["heads"] * head_dim, shape["hidden"]),
               "norm2": torch.ones(shape["hidden"], device=device, dtype=dtype),
               "gate_up": w(shape["hidden"], 2 * shape["intermediate"]), "down": w(shape["intermediate"], shape["hidden"])}
              for _ in range(shape["layers"])]
    return {"layers": layers, "norm": torch.ones(shape["hidden"], device=device, dtype=dtype),
            "lm_head": w(shape["hidden"], shape["vocab"]), "head_dim": head_dim}


def weight_bytes(weights: dict) -> int:
    tensors = [t for layer in weights["layers"] for t in layer.values()] + [weights["norm"], weights["lm_head"]]
    return sum(t.numel() * t.element_size() for t in tensors)


def _rms_norm(x, weight, eps: float = 1e-5):
    import torch

    return x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + eps).to(x.dtype) * weight


def grouped_attention(queries, keys, values, mask, kv_heads: int):
    """Grouped-query attention as one ``scaled_dot_product_attention`` over the KV heads.

    queries (batch, q, heads, head_dim); keys, values (batch, kv_heads, positions, head_dim). The
    query heads that share a KV head are stacked along the position axis (the mask repeated for
    each), so no key or value is copied and any mask is allowed: with ``enable_gqa=True`` and a
    mask, PyTorch may fall back to its slow reference kernel on a GPU, which would inflate the
    cost of q > 1. Query head h reads KV head h // (heads / kv_heads), as in Llama.
    """
    import torch.nn.functional as F

    batch, q, heads, head_dim = queries.shape
    group = heads // kv_heads
    stacked = queries.view(batch, q, kv_heads, group, head_dim).permute(0, 2, 3, 1, 4).reshape(
        batch, kv_heads, group * q, head_dim)
    out = F.scaled_dot_product_attention(stacked, keys, values, attn_mask=None if mask is None else mask.repeat(group, 1))
    return out.view(batch, kv_heads, group, q, head_dim).permute(0, 3, 1, 2, 4).reshape(batch, q, heads * head_dim)


def forward(shape: dict, weights: dict, x, k_cache: list, v_cache: list, ctx: int, mask):
    """One pass over ``x`` (batch, q, hidden) at positions ctx .. ctx + q - 1; returns the logits."""
    import torch.nn.functional as F

    batch, q, _ = x.shape
    heads, kv_heads, head_dim = shape["heads"], shape["kv_heads"], weights["head_dim"]
    for i, layer in enumerate(weights["layers"]):
        h = _rms_norm(x, layer["norm1"])
        queries, keys, values = (h @ layer["qkv"]).split([heads * head_dim, kv_heads * head_dim, kv_heads * head_dim], -1)
        # The new keys and values go into the cache in place, after the ctx cached positions.
        k_cache[i][:, :, ctx:ctx + q] = keys.view(batch, q, kv_heads, head_dim).transpose(1, 2)
        v_cache[i][:, :, ctx:ctx + q] = values.view(batch, q, kv_heads, head_dim).transpose(1, 2)
        attended = grouped_attention(queries.view(batch, q, heads, head_dim), k_cache[i][:, :, :ctx + q],
                                     v_cache[i][:, :, :ctx + q], mask, kv_heads)
        x = x + attended @ layer["o"]
        gate, up = (_rms_norm(x, layer["norm2"]) @ layer["gate_up"]).chunk(2, dim=-1)
        x = x + (F.silu(gate) * up) @ layer["down"]
    return _rms_norm(x, weights["norm"]) @ weights["lm_head"]


def causal_mask(q: int, ctx: int, device):
    """New token j sees the ctx cached positions and the new tokens 0..j (None for q = 1: it sees all)."""
    import torch

    if q == 1:
        return None
    return torch.ones(q, ctx + q, dtype=torch.bool, device=device).tril(diagonal=ctx)


def time_pass(fn, device: str, repeats: int) -> float:
    """Median milliseconds of one call: CUDA graph replays timed with events on a GPU, plain calls
    timed with the wall clock on a CPU (the smoke test)."""
    import torch

    if device != "cuda":
        fn()
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            fn()
            times.append((time.perf_counter() - start) * 1e3)
        return statistics.median(times)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up off the default stream, as graph capture requires
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    for _ in range(3):
        graph.replay()
    times = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    del graph
    return statistics.median(times)


def measure(shapes: dict, batches, qs, ctx: int, repeats: int, device: str, dtype) -> dict:
    """Median pass times of the target (every q) and the draft (q = 1), per batch size."""
    import torch

    generator = torch.Generator().manual_seed(0)
    out: dict = {"target": [], "draft": []}
    with torch.no_grad():
        for role, shape in shapes.items():
            weights = make_weights(shape, device, dtype, generator)
            shape_bytes = weight_bytes(weights)
            for batch in batches:
                cache = [torch.zeros(batch, shape["kv_heads"], ctx + max(qs), weights["head_dim"], device=device,
                                     dtype=dtype) for _ in range(2 * shape["layers"])]
                k_cache, v_cache = cache[:shape["layers"]], cache[shape["layers"]:]
                for q in (qs if role == "target" else (1,)):
                    x = torch.randn(batch, q, shape["hidden"], generator=generator).to(device, dtype)
                    mask = causal_mask(q, ctx, device)
                    ms = time_pass(lambda: forward(shape, weights, x, k_cache, v_cache, ctx, mask), device, repeats)
                    out[role].append({"batch": batch, "q": q, "ms": round(ms, 3)})
                    print(f"{role} {shape['name']}: batch {batch}, q {q}: {ms:.3f} ms", file=sys.stderr, flush=True)
                del cache, k_cache, v_cache
                if device == "cuda":
                    torch.cuda.empty_cache()
            out[f"{role}_weights_gb"] = round(shape_bytes / 1e9, 2)
            del weights
    return out


def ratios(result: dict) -> dict:
    """Each target pass as a multiple of the one-token pass at its batch size, and each draft pass
    as a share of the target's one-token pass: what the table shows, computed from the times."""
    one = {r["batch"]: r["ms"] for r in result["target"] if r["q"] == 1}
    return {"vs_one_token": {(r["batch"], r["q"]): r["ms"] / one[r["batch"]] for r in result["target"]},
            "draft_vs_target": {r["batch"]: r["ms"] / one[r["batch"]] for r in result["draft"]}}


def provenance(device: str) -> dict:
    import torch

    if device != "cuda":
        return {"device": f"CPU ({platform.machine()}, {platform.processor() or 'unknown processor'})",
                "driver": None, "torch": torch.__version__, "cuda": None}
    from specdec_guide.gpu_tier import gpu_name_and_driver

    name, driver = gpu_name_and_driver()
    memory = torch.cuda.get_device_properties(0).total_memory / 2**30
    return {"device": f"{torch.cuda.get_device_name(0)} ({memory:.0f} GiB)", "driver": driver,
            "nvidia_smi_name": name, "torch": torch.__version__, "cuda": torch.version.cuda}


def _fmt(x: float) -> str:
    return f"{x:.2f}"


def table(result: dict, break_even_acceptance: float = 0.6) -> str:
    """The box of "Choosing a method": what was measured, where, and the figures, all from ``result``."""
    from specdec_guide.speculation import expected_tokens_per_step

    r, m, s = ratios(result), result["machine"], result["settings"]
    target, draft = result["shapes"]["target"], result["shapes"]["draft"]
    batches = sorted({row["batch"] for row in result["target"]})
    qs = sorted({row["q"] for row in result["target"] if row["q"] > 1})
    cuda = f" with CUDA {m['cuda']}" if m.get("cuda") else ""
    driver = f", driver {m['driver']}" if m.get("driver") else ""
    lines = [
        f"Measured {result['date']} on {m['device']}{driver}, torch {m['torch']}{cuda}, by "
        f"{result['produced_by']}. A {target['name']}-shaped model ({target['layers']} layers, "
        f"{result['target_weights_gb']} GB of weights) with **random** {s['dtype']} weights, written as plain "
        f"PyTorch operations, {s['timing']}, over a KV cache of {s['ctx']} tokens per sequence. These are "
        "**not** TensorRT-LLM measurements: its kernels differ, so read the trend, not the figures.",
        "",
        "Time of one pass that checks *q* tokens per sequence, as a multiple of a one-token pass at the same "
        "batch size; the draft column is one pass of a " + f"{draft['name']}-shaped draft ({draft['layers']} "
        f"layers, {result['draft_weights_gb']} GB) as a share of the target's one-token pass.",
        "",
        "| batch size | one-token pass (ms) | " + " | ".join(f"*q* = {q}" for q in qs) + " | draft pass |",
        "| --- | --- | " + " | ".join("---" for _ in qs) + " | --- |",
    ]
    one = {row["batch"]: row["ms"] for row in result["target"] if row["q"] == 1}
    for b in batches:
        cells = [f"{r['vs_one_token'][(b, q)]:.2f}×" for q in qs]
        lines.append(f"| {b} | {one[b]:.2f} | " + " | ".join(cells) + f" | {_fmt(r['draft_vs_target'][b])} |")
    # Break-even for k = 4 (q = 5) at one acceptance figure: a pass must cost less than it yields.
    k = 4
    yields = expected_tokens_per_step(break_even_acceptance, k)
    if (batches[0], k + 1) in r["vs_one_token"]:
        pays = [b for b in batches if r["vs_one_token"][(b, k + 1)] < yields]
        fails = [b for b in batches if b not in pays]
        verdict = (f"costs less than that at batch size{'s' if len(pays) > 1 else ''} {', '.join(map(str, pays))}"
                   if pays else "never costs less than that")
        if pays and fails:
            verdict += (f", more at {', '.join(map(str, fails))}, where speculation loses time even before the "
                        "draft's own cost")
        lines += ["", f"Break-even, read with the formula above: with *k* = {k} draft tokens and per-token "
                  f"acceptance *a* = {break_even_acceptance}, a pass yields {yields:.2f} tokens on average; checking "
                  f"them in one pass (*q* = {k + 1}) {verdict}."]
    drafts = sorted(r["draft_vs_target"].values())
    lines += ["", f"The draft pass cost {_fmt(drafts[0])} to {_fmt(drafts[-1])} of a target pass across these batch "
              "sizes: a draft model adds that for each of its *k* draft steps."]
    if result.get("note"):
        lines += ["", result["note"]]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--tiny", action="store_true", help="tiny shapes on the CPU: a smoke test of this script")
    parser.add_argument("--ctx", type=int, default=None, help=f"cached tokens per sequence (default {CTX}; --tiny: 16)")
    parser.add_argument("--repeats", type=int, default=None, help=f"timed replays per figure (default {REPEATS})")
    args = parser.parse_args(argv)
    import torch

    if args.tiny and args.out.resolve() == DEFAULT_OUT.resolve():
        print("verify_cost.py: --tiny writes a smoke-test run; give --out a folder other than the stored run's",
              file=sys.stderr)
        return 2
    if not args.tiny and not torch.cuda.is_available():
        print("verify_cost.py: no CUDA GPU here (torch.cuda.is_available() is false); --tiny runs a CPU smoke test",
              file=sys.stderr)
        return 2
    device = "cpu" if args.tiny else "cuda"
    dtype = torch.float32 if args.tiny else torch.bfloat16
    ctx = args.ctx or (16 if args.tiny else CTX)
    repeats = args.repeats or (3 if args.tiny else REPEATS)
    shapes, batches = (TINY_SHAPES, (1, 2)) if args.tiny else (SHAPES, BATCHES)
    if args.tiny:
        torch.set_num_threads(1)
    timing = (f"each forward captured in a CUDA graph, median of {repeats} replays" if device == "cuda"
              else f"eager forward on the CPU, median of {repeats} calls (smoke test: no CUDA graph)")
    measured = measure(shapes, batches, QS, ctx, repeats, device, dtype)
    result = {
        "what": "time of one forward pass scoring q tokens per sequence, per batch size, random-weight "
                "Llama-shaped decoders in plain PyTorch (not TensorRT-LLM)",
        "date": datetime.now(timezone.utc).date().isoformat(),
        "produced_by": "`benchmarks/verify_cost.py`",
        "machine": provenance(device),
        "settings": {"ctx": ctx, "dtype": str(dtype).removeprefix("torch."), "timing": timing, "repeats": repeats,
                     "weights": "random (seed 0)", "batches": list(batches), "q": list(QS)},
        "shapes": shapes,
        **measured,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "verify_cost.json").write_text(json.dumps(result, indent=2) + "\n")
    (args.out / "verify_cost.md").write_text(table(result))
    print(table(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
