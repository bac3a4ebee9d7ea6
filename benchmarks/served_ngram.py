"""Served NGram against in-process NGram and Hugging Face's prompt lookup: passes and pass costs.

    python benchmarks/served_ngram.py [--max-tokens 96] [--out benchmarks/results]
    make regen WHAT=benchmark-tables:served_ngram     # re-render the stored run's table (table())

The question: served through Triton, does a verification pass of our NGram cost more than the
same pass in-process, or than a pass of Hugging Face's prompt lookup? Model SmolLM2-135M-Instruct,
the code-editing prompts of benchmarks/real_model.py, one thread of torch everywhere.

Sides, each run over the three prompts in the same order, after the same warm-up request:

- served: the guide's templates (baseline, NGram as rendered: TensorRT-LLM's default public pool,
  and the same NGram with ``is_public_pool: false``) on the bundled tritonserver, requests over
  HTTP /generate. CPU time is the model's Python stub process's and its engine's (the launcher's
  engine host forks the engines: specdec_guide/engine/host.py), read from ``/proc/<pid>/stat``, so
  it counts what the engine and the stub spend, not the client or tritonserver's HTTP threads;
- in-process: the same model.yaml files in ``Engine`` in this process (``time.process_time``),
  the NGram public pool kept across the requests as the server keeps it, and once more with a fresh
  pool per request (what benchmarks/real_model.py measures);
- Hugging Face: ``generate`` greedy and with ``prompt_lookup_num_tokens=4`` on its own stock copy
  of the checkpoint; target passes counted with a forward pre-hook.

Target passes of our engine: output tokens - accepted draft tokens (each pass adds its accepted
drafts and one token of its own). A pass's cost: the side's CPU seconds / its passes. Every
greedy output is compared with the in-process baseline's; exits 1 if one differs. One round:
the public pool's drafts depend on the requests before, so rounds would not repeat one another.
Not a test: a run takes a few minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
import urllib.request
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import real_model  # noqa: E402  (the prompts and Hugging Face's settings, shared)

SERVED = {"baseline": "baseline", "ngram": "ngram", "ngram_private": "ngram"}  # model name -> template
#: The served models' departure from the pinned releases (engine.config.TEACHING_BEHAVIOURS): their
#: responses carry the engine's real draft counts, which the passes are counted from; the releases
#: send zeros under the default sampler (per_request_draft_counters_filled).
SERVED_BEHAVIOUR = ("filled_draft_counters",)
LABELS = {
    "served_baseline": "served: baseline",
    "served_ngram": "served: NGram (public pool, as rendered)",
    "served_ngram_private": "served: NGram (is_public_pool: false)",
    "inproc_baseline": "in-process: baseline",
    "inproc_ngram": "in-process: NGram (public pool, same requests before)",
    "inproc_ngram_fresh": "in-process: NGram (a fresh pool per request)",
    "hf_greedy": "HF generate: greedy",
    "hf_prompt_lookup": f"HF generate: prompt_lookup_num_tokens={real_model.HF_PROMPT_LOOKUP_TOKENS}",
}
WARM_UP = "Say hello."


def _served_cpu_s(server, stub_pid: int) -> float:
    """CPU seconds so far of the model's stub and of the engine host's group (its engines: the one
    answering works, the others wait on their sockets)."""
    from specdec_guide.triton import TICKS_PER_S, group_cpu_ticks

    fields = Path(f"/proc/{stub_pid}/stat").read_text().rsplit(")", 1)[1].split()
    stub = int(fields[11]) + int(fields[12])  # utime + stime
    engines = group_cpu_ticks(server.host_proc.pid) if server.host_proc is not None else 0
    return (stub + engines) / TICKS_PER_S


def _stub_pid(name: str) -> int:
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmd = (entry / "cmdline").read_bytes().decode(errors="replace")
            except OSError:
                continue
            if "triton_python_backend_stub" in cmd and f"/{name}/1/model.py" in cmd:
                return int(entry.name)
    raise RuntimeError(f"no Python stub process for model {name}")


def render(repo: Path, target: Path) -> None:
    from specdec_guide import templates

    for name, method in SERVED.items():
        model = templates.render(method, model=str(target), out=repo, name=name, force=True)
        yaml_path = model / "1" / "model.yaml"
        text = yaml_path.read_text()
        assert "\ntriton_config:\n" in text, "the template changed: update this benchmark"
        text = text.replace("\ntriton_config:\n", f"\ntriton_config:\n  cpu_behaviour: [{', '.join(SERVED_BEHAVIOUR)}]\n")
        if name == "ngram_private":
            assert "is_public_pool: true" in text, "the NGram template changed: update this benchmark"
            text = text.replace("is_public_pool: true", "is_public_pool: false")
        yaml_path.write_text(text)


def run(max_tokens: int) -> dict:
    import torch
    import transformers

    from specdec_guide.drafters.ngram import NGramDrafter
    from specdec_guide.engine.core import Engine
    from specdec_guide.models.smollm2 import ensure_checkpoint
    from specdec_guide.triton import serve

    target = ensure_checkpoint()
    torch.set_num_threads(1)
    rows = {name: {"passes": 0, "drafted": 0, "accepted": 0, "generated": 0, "cpu_s": 0.0, "wall_s": 0.0}
            for name in LABELS}
    outputs: dict[str, list] = {name: [] for name in LABELS}  # texts
    tokens: dict[str, list] = {name: [] for name in LABELS}  # token ids, where the side has them
    with tempfile.TemporaryDirectory(prefix="specdec-served-ngram-") as tmp:
        repo = Path(tmp) / "repo"
        render(repo, target)
        engines = {name: Engine.from_yaml(repo / name / "1" / "model.yaml") for name in ("baseline", "ngram")}
        tokenizer = engines["baseline"].tokenizer
        texts = [tokenizer.apply_chat_template([{"role": "user", "content": q}], add_generation_prompt=True,
                                               tokenize=False) for q in real_model.PROMPTS["code editing"]]
        warm = tokenizer.apply_chat_template([{"role": "user", "content": WARM_UP}], add_generation_prompt=True,
                                             tokenize=False)

        def body(text: str) -> dict:
            return {"text_input": text, "sampling_param_max_tokens": max_tokens,
                    "sampling_param_exclude_input_from_output": True, "sampling_param_return_perf_metrics": True}

        def count(name: str, n_tokens: int, drafted: int, accepted: int, cpu: float, wall: float) -> None:
            row = rows[name]
            row["generated"] += n_tokens
            row["drafted"] += drafted
            row["accepted"] += accepted
            row["passes"] += n_tokens - accepted
            row["cpu_s"] += cpu
            row["wall_s"] += wall

        # -- in-process ----------------------------------------------------------------------
        for name, engine_name, fresh in (("inproc_baseline", "baseline", False), ("inproc_ngram", "ngram", False),
                                         ("inproc_ngram_fresh", "ngram", True)):
            engine = engines[engine_name]
            if engine.drafter is not None:
                engine.drafter = NGramDrafter.from_config(engine.config.speculative)  # as a server starts
            engine.complete(body(warm))
            for text in texts:
                if fresh:
                    engine.drafter = NGramDrafter.from_config(engine.config.speculative)
                wall, cpu = time.perf_counter(), time.process_time()
                chunk = engine.complete(body(text))
                wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
                count(name, len(chunk.token_ids), chunk.stats.drafted_tokens, chunk.stats.accepted_tokens, cpu, wall)
                outputs[name].append(chunk.text)
                tokens[name].append(chunk.token_ids)
        ids = [engines["baseline"].encode(t) for t in texts]
        del engines

        # -- Hugging Face, in-process --------------------------------------------------------
        model = transformers.AutoModelForCausalLM.from_pretrained(target, dtype=torch.float32).eval()
        for name, kwargs in (("hf_greedy", {}),
                             ("hf_prompt_lookup", {"prompt_lookup_num_tokens": real_model.HF_PROMPT_LOOKUP_TOKENS})):
            for i, prompt in enumerate([tokenizer(warm)["input_ids"]] + ids):
                new, passes, wall, cpu = real_model.hf_generate(model, tokenizer, prompt, max_tokens, **kwargs)
                if i == 0:
                    continue  # the warm-up
                rows[name]["passes"] += passes
                rows[name]["generated"] += len(new)
                rows[name]["cpu_s"] += cpu
                rows[name]["wall_s"] += wall
                tokens[name].append(new)
        del model

        # -- served --------------------------------------------------------------------------
        with serve(repo, timeout=300, env={"SPECDEC_ENGINE_THREADS": "1"}) as server:
            served_by_host = server.host_proc is not None
            for model_name in SERVED:
                name = f"served_{model_name}"
                pid = _stub_pid(model_name)
                url = f"{server.http_url}/v2/models/{model_name}/generate"
                for i, text in enumerate([warm] + texts):
                    cpu, wall = _served_cpu_s(server, pid), time.perf_counter()
                    request = urllib.request.Request(url, data=json.dumps(body(text)).encode(),
                                                     headers={"Content-Type": "application/json"})
                    with urllib.request.urlopen(request, timeout=600) as r:
                        reply = json.loads(r.read())
                    wall, cpu = time.perf_counter() - wall, _served_cpu_s(server, pid) - cpu
                    if i == 0:
                        continue
                    n_tokens = len(tokens["inproc_baseline"][i - 1])  # greedy: the baseline's (text checked below)
                    count(name, n_tokens, int(reply["total_draft_tokens"]), int(reply["total_accepted_draft_tokens"]),
                          cpu, wall)
                    outputs[name].append(reply["text_output"])

    mismatches = [f"{name} #{i + 1}" for name, got in outputs.items() for i, text in enumerate(got)
                  if text != outputs["inproc_baseline"][i]]
    mismatches += [f"{name} #{i + 1} (token ids)" for name, got in tokens.items() for i, ids_ in enumerate(got)
                   if ids_ != tokens["inproc_baseline"][i]]
    for row in rows.values():
        row["cpu_ms_per_pass"] = round(1000 * row["cpu_s"] / row["passes"], 1)
        row["cpu_s"], row["wall_s"] = round(row["cpu_s"], 2), round(row["wall_s"], 2)
    return {
        "schema_version": 1,
        "date_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version(),
                    "load_average_after": round(os.getloadavg()[0], 1)},
        "versions": {"torch": torch.__version__, "transformers": transformers.__version__},
        "settings": {"max_tokens": max_tokens, "prompts": "code editing", "n_prompts": len(texts), "torch_threads": 1,
                     "served_engine": "engine host" if served_by_host else "stub",
                     "served_cpu_behaviour": list(SERVED_BEHAVIOUR)},
        "greedy_identical": not mismatches,
        "mismatches": mismatches,
        "results": rows,
    }


def verdict(rows: dict) -> list[str]:
    """What the stored figures say, computed from them."""
    def ratio(a: str, b: str) -> float:
        return rows[a]["cpu_ms_per_pass"] / rows[b]["cpu_ms_per_pass"]

    same_drafts = (rows["served_ngram"]["drafted"], rows["served_ngram"]["accepted"]) == (
        rows["inproc_ngram"]["drafted"], rows["inproc_ngram"]["accepted"])
    private_like_fresh = rows["served_ngram_private"]["passes"] == rows["inproc_ngram_fresh"]["passes"]
    return [
        f"A pass served costs {ratio('served_baseline', 'inproc_baseline'):.2f}x the same pass in-process "
        f"(baseline) and {ratio('served_ngram', 'inproc_ngram'):.2f}x (NGram, public pool); Hugging Face's "
        f"prompt-lookup pass costs {ratio('hf_prompt_lookup', 'inproc_ngram_fresh'):.2f}x ours in-process with a "
        "fresh pool.",
        "Served and in-process NGram with the public pool drafted "
        + ("the same tokens (same drafted and accepted counts): the server adds no verification cost of its own."
           if same_drafts else "differently: the comparison above mixes two sets of drafts."),
        f"The public pool, after the warm-up request, drafted {rows['served_ngram']['drafted']} tokens and had "
        f"{rows['served_ngram']['accepted']} accepted; a pool per request drafted "
        f"{rows['served_ngram_private']['drafted']} and had {rows['served_ngram_private']['accepted']} accepted "
        f"({rows['served_ngram']['passes']} against {rows['served_ngram_private']['passes']} passes).",
        "Served with is_public_pool: false, our NGram made "
        + ("as many passes as in-process with a fresh pool per request." if private_like_fresh
           else "a different number of passes from in-process with a fresh pool per request."),
    ]


def table(result: dict) -> str:
    m, v, s, rows = result["machine"], result["versions"], result["settings"], result["results"]
    lines = [
        f"Run {result['date_utc']} on {m['cpus']} CPU cores ({m['platform']}), torch {v['torch']} with "
        f"{s['torch_threads']} thread, transformers {v['transformers']}; SmolLM2-135M-Instruct; the "
        f"{s['n_prompts']} {s['prompts']} prompts, up to {s['max_tokens']} new tokens each, one round after a "
        f"warm-up request. 1-minute load average after the run: {m['load_average_after']} (this machine is "
        "shared: CPU time is what each process spent, which other jobs' load does not stretch, though it can "
        "slow memory and caches; wall time is stretched by it).",
        "",
        "| side | target passes | drafted | accepted | CPU s | CPU ms per pass | wall s |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, label in LABELS.items():
        r = rows[name]
        drafted = "-" if name.startswith("hf_") else str(r["drafted"])
        accepted = "-" if name.startswith("hf_") else str(r["accepted"])
        lines.append(f"| {label} | {r['passes']} | {drafted} | {accepted} | {r['cpu_s']:.2f} "
                     f"| {r['cpu_ms_per_pass']:.1f} | {r['wall_s']:.2f} |")
    if result["settings"].get("served_engine") == "engine host":
        shows = ", ".join(result["settings"].get("served_cpu_behaviour", []))
        served = ("Served CPU is the model's stub process's (the tensor conversion of the Python backend) and its "
                  "engine process's (the engine and the tokenizer; forked by the launcher's engine host). The served "
                  f"models ask for cpu_behaviour [{shows}]: their responses carry the engine's real draft counts, "
                  "which the pinned releases send as zeros")
    else:  # runs before the engine host: the engine ran in the stub
        served = ("Served CPU is the model's stub process's (the engine, the tokenizer and the tensor conversion "
                  "of the Python backend)")
    lines += ["", served + "; in-process and Hugging Face CPU is this process's. Greedy output "
              "identical to the in-process baseline on every side: "
              + ("yes." if result["greedy_identical"] else "NO: " + ", ".join(result["mismatches"])), ""]
    lines += [f"- {line}" for line in verdict(rows)]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-tokens", type=int, default=96)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    args = parser.parse_args()
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    result = run(args.max_tokens)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "served_ngram.json").write_text(json.dumps(result, indent=2) + "\n")
    (args.out / "served_ngram.md").write_text(table(result))
    print(table(result))
    return 0 if result["greedy_identical"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
