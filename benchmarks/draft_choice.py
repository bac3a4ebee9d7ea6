"""Which draft model can be built from SmolLM2-135M-Instruct alone? Measure, then choose.

    python benchmarks/draft_choice.py [--tokens 48] [--out benchmarks/results]

No second SmolLM2 size is packaged, so every candidate is made from the target itself:

- ``first-N``: its first N decoder layers + final norm + LM head (self-speculation without a
  trained early exit, as LayerSkip and Draft & Verify start from);
- ``skip-middle``: every other middle layer dropped (Draft & Verify skips layers, not a suffix);
- ``int8``: a copy with every Linear quantized to int8 on the fly (``quantize_dynamic``).

For each, on the target's own greedy continuations of a few chat prompts: the next-token
agreement with the target (teacher-forced: the per-token acceptance ``a`` a greedy draft would
see) and the cost of one single-token decode step relative to the target's (``c``), then the
expected speed-up for k = 1..4 by Leviathan et al.'s formula. Writes draft_choice.json and
draft_choice.md. The figures depend on the machine and its load; the file says which.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import platform
import statistics
import time
from datetime import datetime, timezone
from pathlib import Path

import torch

from specdec_guide import speculation
from specdec_guide.models.smollm2 import ensure_checkpoint

ROOT = Path(__file__).resolve().parents[1]
PROMPTS = [
    "Explain in two sentences why the sky is blue.",
    "Write a Python function that returns the largest of three numbers.",
    "List three things to pack for a day of hiking.",
    "Summarise: The library opens at nine, closes at five, and is shut on Sundays.",
]


def layer_subset(target, keep: list[int]):
    """A copy of ``target`` that runs only the decoder layers in ``keep`` (shared weights)."""
    draft = copy.copy(target)
    draft._modules = dict(draft._modules)
    draft.model = copy.copy(target.model)
    layers = []
    for new_index, i in enumerate(keep):  # shallow copies renumbered for the KV cache
        layer = copy.copy(target.model.layers[i])
        layer._modules = dict(layer._modules)
        layer.self_attn = copy.copy(layer.self_attn)
        layer.self_attn.layer_idx = new_index
        layers.append(layer)
    draft.model._modules = dict(draft.model._modules)
    draft.model.layers = torch.nn.ModuleList(layers)
    draft.config = copy.deepcopy(target.config)
    draft.config.num_hidden_layers = len(keep)
    draft.model.config = draft.config
    return draft


def candidates(target) -> dict[str, object]:
    n = target.config.num_hidden_layers
    out = {f"first-{k}": layer_subset(target, list(range(k))) for k in (8, 15, 20, 25, 27)}
    middle = [i for i in range(n) if i < 4 or i >= n - 4 or i % 2 == 0]
    out[f"skip-middle ({len(middle)} layers)"] = layer_subset(target, middle)
    out["int8 (quantize_dynamic)"] = torch.ao.quantization.quantize_dynamic(copy.deepcopy(target), {torch.nn.Linear},
                                                                            dtype=torch.qint8)
    return out


def agreement(model, sequences: list[tuple[list[int], int]]) -> float:
    """Share of continuation positions where ``model``'s argmax equals the target's token."""
    hits = total = 0
    with torch.no_grad():
        for tokens, prompt_len in sequences:
            logits = model(input_ids=torch.tensor([tokens])).logits[0]
            guess = logits[prompt_len - 1 : -1].argmax(-1).tolist()
            hits += sum(g == t for g, t in zip(guess, tokens[prompt_len:]))
            total += len(tokens) - prompt_len
    return hits / total


def step_costs(target, drafts: dict, tokens: list[int], rounds: int = 15) -> dict[str, float]:
    """Each draft's single-token decode step time / the target's, from interleaved rounds.

    Interleaving (target, draft, target, draft, ...) exposes every model to the same load on a
    shared machine; the ratio of medians is what the speed-up formula needs.
    """
    fns = {"target": speculation.hf_logits_fn(target)} | {n: speculation.hf_logits_fn(m) for n, m in drafts.items()}
    for fn in fns.values():
        fn(tokens, len(tokens) - 1)
    times = {name: [] for name in fns}
    for i in range(rounds):
        for name, fn in fns.items():
            t = time.perf_counter()
            fn(tokens + [100 + i], len(tokens))  # one new position on top of the cached prompt
            times[name].append(time.perf_counter() - t)
    base = statistics.median(times["target"])
    return {name: statistics.median(ts) / base for name, ts in times.items() if name != "target"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=48, help="target continuation length per prompt")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    args = parser.parse_args()
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    torch.set_num_threads(1)
    folder = ensure_checkpoint()
    tokenizer = AutoTokenizer.from_pretrained(folder)
    target = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval()
    sequences = []
    for text in PROMPTS:
        ids = tokenizer.apply_chat_template([{"role": "user", "content": text}], add_generation_prompt=True,
                                            tokenize=True, return_dict=True)["input_ids"]
        gen = speculation.generate(speculation.hf_logits_fn(target), ids, args.tokens, eos_id=tokenizer.eos_token_id)
        sequences.append((list(ids) + gen.tokens, len(ids)))
    drafts = candidates(target)
    costs = step_costs(target, drafts, sequences[0][0])
    rows = []
    for name, draft in drafts.items():
        a, c = agreement(draft, sequences), costs[name]
        speedups = {k: round(speculation.expected_speedup(a, k, c), 2) for k in (1, 2, 3, 4)}
        rows.append({"draft": name, "agreement": round(a, 3), "cost": round(c, 2), "expected_speedup": speedups})
        print(f"{name:28} a={a:.3f} c={c:.2f} " + " ".join(f"k={k}:{v}" for k, v in speedups.items()), flush=True)
    import transformers

    result = {
        "what": "draft candidates built from SmolLM2-135M-Instruct: next-token agreement with the target and "
                "single-step cost relative to it",
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPU cores, torch threads 1; shared with other jobs "
                   f"(load average {os.getloadavg()[0]:.1f} at the end): costs are noisy",
        "versions": {"torch": torch.__version__, "transformers": transformers.__version__},
        "continuation_tokens": sum(len(s) - p for s, p in sequences),
        "rows": rows,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "draft_choice.json").write_text(json.dumps(result, indent=2) + "\n")
    lines = [f"Measured {result['date']} on {result['machine']}; torch {torch.__version__}, transformers "
             f"{transformers.__version__}; {result['continuation_tokens']} target tokens.", "",
             "| draft | agreement a | step cost c | expected speed-up k=1 | k=2 | k=3 | k=4 |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        s = r["expected_speedup"]
        lines.append(f"| {r['draft']} | {r['agreement']:.3f} | {r['cost']:.2f} | {s[1]} | {s[2]} | {s[3]} | {s[4]} |")
    (args.out / "draft_choice.md").write_text("\n".join(lines) + "\n")
    print(f"wrote {args.out / 'draft_choice.json'} and draft_choice.md")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
