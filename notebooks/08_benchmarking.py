# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   execution:
#     timeout: 900
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
#   specdec_guide:
#     tier: cpu
#     title: Benchmarking speculation with AIPerf
# ---

# %% [markdown]
# # Benchmarking speculation with AIPerf
#
# "I turned speculation on and saw no speed-up, and I cannot see the acceptance rate." This
# notebook measures exactly that, end to end, the way you would on your own deployment:
#
# 1. first, what the pinned release gives through Triton: one NGram server that answers as
#    TensorRT-LLM 1.1.0 (and 1.2.1) does, one streamed request and one short AIPerf run;
# 2. then the comparison: one Triton server **without** `speculative_config` (the baseline),
#    benchmarked, stopped; the same server **with** NGram speculation, benchmarked over the
#    *same* prompts, stopped;
# 3. AIPerf drives both: time to first token (TTFT), inter-token latency (ITL), output tokens
#    per second in total and per user, requests per second, one request at a time;
# 4. the acceptance figures come from the counters the model returns with each request
#    (`sampling_param_return_perf_metrics`), added up from AIPerf's raw export.
#
# **Which release these numbers show.** Step 1 is the pinned container's behaviour: its
# `llmapi` model sends one event per request and zero draft counters, so TTFT, ITL and
# acceptance measured through Triton mean nothing on 1.1.0 and 1.2.1. The comparison (steps 2-4)
# runs in the CPU stand-in's **teaching mode**, `cpu_behaviour: [stream_per_step,
# filled_draft_counters]` in both servers' `model.yaml`: its TTFT, ITL and acceptance figures
# show what a release after TensorRT-LLM PR #14079 and #17082 sends (or what TensorRT-LLM's own
# runtime gives, measured outside Triton: `trtllm-serve`, the LLM API), **not** the pinned
# container. Every table of the comparison says so in its first line.
#
# Everything below ran on this guide's CPU stack: the real `tritonserver` bundled in
# `nvidia-pytriton`, our CPU reference engine behind the llmapi model's contract, and
# SmolLM2-135M-Instruct. **The numbers are CPU numbers**: they show how to measure and how to
# read a result, not what a GPU would give. The GPU counterpart, the notebook
# [Benchmarking on a GPU](09_benchmarking_gpu.ipynb), measures every method against its baseline
# on the same prompts at concurrency 1 to 64 in the Triton 25.12 container, with its own harnesses
# (`trtllm-bench` for the engine alone, a short client against Triton's `llmapi` model, and the
# LLM API), not AIPerf.

# %%
import json
import re
import shutil
import tempfile
import time
import urllib.request
import warnings
from pathlib import Path


warnings.filterwarnings("ignore", message="IProgress not found")  # tqdm without ipywidgets
from transformers import AutoTokenizer  # noqa: E402
from transformers.utils import logging as hf_logging  # noqa: E402

from specdec_guide import templates  # noqa: E402
from specdec_guide.bench import prompts, results, run_aiperf  # noqa: E402
from specdec_guide.models.smollm2 import ensure_checkpoint  # noqa: E402
from specdec_guide.triton import serve  # noqa: E402

hf_logging.disable_progress_bar()
NOTEBOOK_START = time.monotonic()
ROOT = Path.cwd().resolve().parent  # nbmake and `notebooks run` execute from notebooks/
OUTPUT_TOKENS = 12  # per request: short, so the whole notebook stays within a few minutes on 2 cores
PROMPTS_PER_SET = 2  # of the three in each set, for the same reason
AIPERF_TIMEOUT_S = 780  # within this notebook's 900 s per-cell limit (execution.timeout), with the server's start-up
# One request at a time. The CPU engine serves one request at a time, so a higher level adds only
# queueing here; a sweep over concurrency belongs on a GPU (the section "A sweep over concurrency" says why).
CONCURRENCY = (1,)
# The stand-in's departures from the pinned release for the comparison (triton_config.cpu_behaviour).
TEACHING = ("stream_per_step", "filled_draft_counters")
TEACHING_LABEL = ("TEACHING MODE (cpu_behaviour: stream_per_step, filled_draft_counters): what a release after "
                  "TensorRT-LLM PR #14079 / #17082 sends,\nnot the pinned 1.1.0 / 1.2.1 container "
                  "(one event per request, zero draft counters)")

# %% [markdown]
# ## The prompts: a code-editing set and a chat set
#
# Prompt lookup (NGram) drafts from text already in the prompt or the output, so *what you ask*
# decides how much it can help. The code-editing set shows the model some code, the change to
# make and the first line of the new version, as an editor would send it (plain text): the
# continuation repeats the prompt. The chat set asks open questions, wrapped in the model's chat
# template by the client, because Triton's llmapi model passes `text_input` to the model as is.
# Both are ours (`specdec_guide.bench.prompts`); the GPU notebook uses the same ones.

# %%
checkpoint = ensure_checkpoint()
tokenizer = AutoTokenizer.from_pretrained(checkpoint)
sets = {name: texts[:PROMPTS_PER_SET] for name, texts in prompts.rendered_sets(tokenizer).items()}
work = Path(tempfile.mkdtemp(prefix="bench-"))
all_texts = [t for texts in sets.values() for t in texts]
prompt_file = run_aiperf.write_prompts(work / "prompts.jsonl", all_texts, OUTPUT_TOKENS)
for name, texts in sets.items():
    print(f"{name}: {len(texts)} prompts, e.g.\n{texts[0]}")
print(f"AIPerf input file: {len(all_texts)} lines of {{'text', 'output_length': {OUTPUT_TOKENS}}}")

# %% [markdown]
# ## The AIPerf command
#
# AIPerf 0.13.0 runs in its own environment (`make aiperf` makes `.venv-aiperf`). Its built-in
# `template` endpoint can send the llmapi model's inputs, but with `--streaming` it adds up the
# events as if each carried only new text, while an llmapi model that streams per step (a
# release after PR #14079) sends the *whole text so far* in every event: output length and ITL
# come out wrong. This guide's endpoint plugin
# `triton_llmapi` (in `specdec_guide.bench`, registered with AIPerf's plugin entry point) sends
# `text_input`, `sampling_param_max_tokens`, `sampling_param_exclude_input_from_output`,
# `sampling_param_return_perf_metrics` and `streaming`, and turns each event into its new text.
# This is the command, run below against each server:

# %%
print((ROOT / run_aiperf.SNIPPET).read_text())


# %%
def _post(server, route: str, body: dict):
    req = urllib.request.Request(f"{server.http_url}/v2/models/tensorrt_llm/{route}",
                                 data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    return urllib.request.urlopen(req, timeout=300)


def post_generate(server, body: dict) -> str:
    with _post(server, "generate", body) as reply:
        return json.loads(reply.read())["text_output"]


def stream_events(server, body: dict) -> list[dict]:
    """Every server-sent event of one /generate_stream request, parsed."""
    with _post(server, "generate_stream", {**body, "streaming": True}) as reply:
        return [json.loads(line[len("data: "):]) for line in reply.read().decode().splitlines()
                if line.startswith("data: ")]


def stand_in_says(server) -> str:
    """The stand-in's load line in the server log: which release it answers as, which departures."""
    m = re.search(r"TensorRT-LLM track (\S+) .*?departures asked: (.*?); model=", server.log())
    if not m:
        raise RuntimeError("the stand-in's load line is not in the server log")
    asked = ", ".join(name for name in ("stream_per_step", "filled_draft_counters") if f"{name}:" in m[2]) or m[2]
    return f"stand-in answers as TensorRT-LLM {m[1]}; departures asked: {asked}"


runs, acceptance, timings = {}, {}, {}


def benchmark(server, method: str) -> None:
    """The page's AIPerf command against ``server``; keep its summary and acceptance per set."""
    started = time.monotonic()
    post_generate(server, {"text_input": all_texts[0], "sampling_param_max_tokens": 4})  # warm-up, not measured
    out = work / f"aiperf_{method}"
    run_aiperf.profile(triton_http=server.http_address, model="tensorrt_llm", tokenizer=checkpoint,
                       prompts=prompt_file, out=out, concurrency=CONCURRENCY, requests=len(all_texts),
                       timeout=AIPERF_TIMEOUT_S, root=ROOT)
    runs[method] = [results.summary(d) for d in results.run_dirs(out)]
    acceptance[method] = results.acceptance(results.run_dirs(out)[0], sets)
    timings[method] = time.monotonic() - started


# %% [markdown]
# ## First: what the pinned release sends through Triton
#
# `specdec-guide repo render` names the release in `model.yaml` (`# specdec-guide:
# trtllm=1.1.0`), and the CPU stand-in answers as that release's `llmapi` `model.py` does.
# Two of its behaviours decide what a benchmark through Triton can see on 1.1.0 and 1.2.1
# (sources: the table on [Triton on a CPU](../triton_cpu.md#what-the-pinned-release-does-and-the-stand-in-with-it)):
#
# - **One event per request.** The model passes `streaming` positionally into
#   `generate_async`'s `lora_request` slot, so the LLM is never asked to stream: a streamed
#   request gets one event, with the whole text, when generation has finished (fixed by
#   TensorRT-LLM PR #14079, after 1.2.1).
# - **Zero draft counters.** With `TorchSampler` (the templates leave `sampler_type: auto`)
#   the per-request `total_draft_tokens`, `total_accepted_draft_tokens` and `acceptance_rate`
#   come back as zero although drafting ran (fixed by PR #17082, after 1.2.1).
#
# One NGram server rendered as is, one streamed request, then the page's AIPerf command at
# concurrency 1 over the four prompts. The same server also answers the two requests of the
# `max_tokens` trap at the end.

# %%
release_repo = work / "repo_release"
templates.render("ngram", model=str(checkpoint), out=release_repo, force=True)
with serve(release_repo, timeout=300) as server:
    release_says = stand_in_says(server)
    question = sets["chat"][0]
    trap_text = post_generate(server, {"text_input": question, "max_tokens": 8, "exclude_input_in_output": True})
    right_text = post_generate(server, {"text_input": question, "sampling_param_max_tokens": 8,
                                        "sampling_param_exclude_input_from_output": True})
    events = stream_events(server, {"text_input": all_texts[0], "sampling_param_max_tokens": OUTPUT_TOKENS,
                                    "sampling_param_exclude_input_from_output": True,
                                    "sampling_param_return_perf_metrics": True})
    run_aiperf.profile(triton_http=server.http_address, model="tensorrt_llm", tokenizer=checkpoint,
                       prompts=prompt_file, out=work / "aiperf_release", concurrency=(1,), requests=len(all_texts),
                       timeout=AIPERF_TIMEOUT_S, root=ROOT)
(release_dir,) = results.run_dirs(work / "aiperf_release")
release_run, release_acceptance = results.summary(release_dir), results.acceptance(release_dir, sets)
print(release_says)
print(f"one streamed request: {len(events)} event(s); its counters: " + ", ".join(
    f"{k}={events[-1][k]}" for k in ("total_draft_tokens", "total_accepted_draft_tokens", "acceptance_rate")))
print(f"AIPerf, concurrency 1, {release_run.requests} requests: TTFT {release_run.ttft_ms:.0f} ms, "
      f"request latency {release_run.latency_ms:.0f} ms, ITL {release_run.itl_ms:.1f} ms")
print("draft counters added up per set: " + ", ".join(
    f"{name} drafted {a.drafted}, accepted {a.accepted}" for name, a in release_acceptance.items()))
assert len(events) == 1 and all(a.drafted == a.accepted == 0 for a in release_acceptance.values())
assert abs(release_run.ttft_ms - release_run.latency_ms) <= 0.01 * release_run.latency_ms and release_run.itl_ms == 0

# %% [markdown]
# So, through Triton on the pinned releases: **TTFT is the request latency** (the one event
# comes at the end), **ITL reads 0.0 ms** (AIPerf 0.13.0 computes it as (request latency -
# TTFT) / (output tokens - 1), which one event makes zero: it does not mean free tokens), and the
# **acceptance counters read zero** although NGram drafted. Request latency, output tokens per
# second and requests per second still mean what they say. Measure TTFT, ITL and acceptance
# where the model's streaming and counters are not in the way: `trtllm-serve` on the same
# `model.yaml` keys, or the LLM API in Python
# ([Reading the numbers](../reading_the_numbers.md#which-figures-mean-something-behind-triton)).
#
# ## The comparison, in teaching mode
#
# **Teaching mode, from here to the end of the comparison.** To show how TTFT, ITL and acceptance
# are measured and read once they are measurable, both servers below add one line to their
# `model.yaml`, `cpu_behaviour: [stream_per_step, filled_draft_counters]` under
# `triton_config`: the stand-in then streams one event per step and fills the counters, as a
# release after TensorRT-LLM PR #14079 and #17082 would. Those figures are **not** what the
# pinned 1.1.0 / 1.2.1 container gives through Triton (that is the cell above); on those
# releases, take them from `trtllm-serve` or the LLM API. The server log names the departures,
# and each table below repeats the label.

# %% [markdown]
# ### Two model repositories: the only difference is `speculative_config`
#
# A fair baseline is the same server, same model, same settings, **restarted without
# `speculative_config`**. Leaving speculation on and sending "fewer drafts" is not a baseline:
# TensorRT-LLM sizes its runtime for the draft tokens (KV cache, CUDA graphs, scheduler), so a
# speculative server differs even when it drafts nothing. Hence two repositories, one server
# at a time (on 2 cores, two servers side by side would slow each other down).

# %%
repos = {}
for method in ("baseline", "ngram"):
    repos[method] = work / f"repo_{method}"
    model = templates.render(method, model=str(checkpoint), out=repos[method], force=True)
    path = model / "1" / "model.yaml"
    text = path.read_text()
    assert text.count("\ntriton_config:\n") == 1, path
    # The teaching mode: the one line that makes the stand-in depart from the pinned release.
    path.write_text(text.replace("\ntriton_config:\n", "\ntriton_config:\n"
                                 f"  cpu_behaviour: [{', '.join(TEACHING)}]  # teaching mode, not the pinned release\n"))
base_yaml = (repos["baseline"] / "tensorrt_llm/1/model.yaml").read_text().splitlines()
spec_yaml = (repos["ngram"] / "tensorrt_llm/1/model.yaml").read_text().splitlines()
print("model.yaml lines only the NGram server has:")
print("\n".join(line for line in spec_yaml if line not in base_yaml and line.strip() and not line.lstrip().startswith("#")))
print("\nthe triton_config both servers share:")
print("\n".join(spec_yaml[spec_yaml.index("triton_config:"):]))

# %% [markdown]
# ### The baseline server
#
# Started, measured and stopped in one cell (`serve` picks free ports and stops the server
# when the block ends, even on an error).

# %%
t0 = time.monotonic()
with serve(repos["baseline"], timeout=300) as server:
    ready = time.monotonic() - t0
    says = stand_in_says(server)
    benchmark(server, "baseline")
print(f"baseline: server ready in {ready:.0f} s, benchmark {timings['baseline']:.0f} s\n{says}")

# %% [markdown]
# ### The NGram server

# %%
t0 = time.monotonic()
with serve(repos["ngram"], timeout=300) as server:
    ready = time.monotonic() - t0
    says = stand_in_says(server)
    benchmark(server, "ngram")
print(f"ngram: server ready in {ready:.0f} s, benchmark {timings['ngram']:.0f} s\n{says}")

# %% [markdown]
# ## What AIPerf measured (teaching mode)
#
# One row per server. *Tokens/s* is output tokens of all requests over
# the run; *per user* is each request's output tokens over its own latency, averaged (AIPerf's
# "E2E Output Token Throughput Per User").

# %%
print(TEACHING_LABEL)
print(f"{'server':9} {'conc':>4} {'TTFT ms':>8} {'ITL ms':>7} {'tok/s':>7} {'tok/s/user':>10} {'req/s':>6} {'errors':>6}")
for method, rows in runs.items():
    for r in rows:
        print(f"{method:9} {r.concurrency:4d} {r.ttft_ms:8.0f} {r.itl_ms:7.1f} {r.output_tokens_per_s:7.1f} "
              f"{r.tokens_per_s_per_user:10.1f} {r.requests_per_s:6.2f} {r.errors:6d}")
assert all(r.errors == 0 for rows in runs.values() for r in rows)
ratio = runs["ngram"][0].output_tokens_per_s / runs["baseline"][0].output_tokens_per_s
print(f"\nNGram / baseline, total output tokens/s (teaching mode): {ratio:.2f}x")

# %% [markdown]
# ## Acceptance, per prompt set (teaching mode)
#
# A model that fills them (here the teaching mode; a release after PR #17082) returns three
# counters per request when asked (`sampling_param_return_perf_metrics`):
# `total_draft_tokens`, `total_accepted_draft_tokens` and `acceptance_rate` (their ratio).
# AIPerf does not read them (its speculative-decoding metrics parse vLLM's format), but
# `--export-level raw` keeps every response body, and the last one of each request holds its
# totals. The *acceptance length* (tokens per target step) follows from them: each step emits
# its accepted drafts plus one token of its own, so steps = output tokens - accepted drafts.
# [Reading the numbers](../reading_the_numbers.md) maps these to the names other tools use.

# %%
print(TEACHING_LABEL)
print(f"{'server':9} {'set':13} {'requests':>8} {'tokens':>6} {'drafted':>7} {'accepted':>8} {'accept rate':>11} {'accept len':>10}")
for method, by_set in acceptance.items():
    for name, a in by_set.items():
        print(f"{method:9} {name:13} {a.requests:8d} {a.output_tokens:6d} {a.drafted:7d} {a.accepted:8d} "
              f"{a.acceptance_rate:11.2f} {a.acceptance_length:10.2f}")
assert all(a.drafted == 0 for a in acceptance["baseline"].values()), "the baseline must not draft"

# %% [markdown]
# **How to read this on this machine.** These figures come from the teaching mode: on the
# pinned 1.1.0 / 1.2.1 container, the TTFT column would equal request latency, ITL would read
# 0.0 ms and the acceptance table zeros, as in the first section.
#
# The acceptance table is the part to read, with its size in mind: each set is two requests of
# 12 output tokens, a few dozen drafted tokens in all (the *drafted* column), too few to rank
# the two sets. In the stored run the code-editing set has the longer acceptance length but the
# lower acceptance rate. The two figures need not agree: the rate counts every drafted token,
# also those after a rejection that are never compared, while the length counts what each step
# emitted. Both lengths stay far below NGram's ceiling of 5 tokens per step (`max_draft_len: 4`)
# for this 135M model. With more prompts and 96-token answers, the guide's page *Speed on a CPU*
# measures what this sample is too small to show: there, code editing accepts far more than open
# chat.
#
# The throughput row is the fragile part. One run of four requests per server, on 2 cores that
# the server, AIPerf and this notebook share, cannot tell a speed-up from run-to-run noise, so
# the NGram / baseline ratio above is not a measured speed-up (*Speed on a CPU* measures
# speed-ups with repeated rounds and a pool per request instead).
#
# ## A sweep over concurrency: on your GPU, not here
#
# The command above takes several levels: its `CONCURRENCY` variable (`1,2,4` by default) runs
# AIPerf once per level against the same server, `REQUESTS` requests each (8 by default; raise
# it with the level, or a level of 16 or 64 never has that many requests in flight).
# This notebook measures one level because the CPU reference engine serves one request at a time
# (no in-flight batching): a request beyond the first would only wait in a queue, TTFT would grow
# for both servers, and the baseline's total would stay flat where a batching GPU server's grows.
# Two things to know before you sweep your own deployment:
#
# - **NGram's public pool remembers every earlier request.** The NGram template keeps
#   TensorRT-LLM's public pool (`is_public_pool: true`), so NGram drafts from whatever the
#   server answered before: an earlier level of the same command, or an earlier pass over a
#   prompt file shorter than the request count (AIPerf starts the file over at its end). Its
#   gain over the baseline then grows for that reason alone, on top of what concurrency does.
#   Benchmark with `is_public_pool: false`, as the GPU notebook does. A freshly started server
#   per level (one run of the command per level) clears only what earlier levels wrote: a prompt
#   file with fewer distinct lines than `REQUESTS` still repeats itself within a level.
# - **The sweep is where speculation stops paying.** At batch 1 a target step on a GPU is bound
#   by reading the weights, so scoring a few draft tokens costs little more than one token; as
#   the batch grows the step becomes bound by arithmetic, every draft token adds work, and the
#   same acceptance buys less. At high concurrency a speculative server can be slower than its
#   baseline.
#
# That is the sweep to run on your GPU deployment: this command against your container's
# Triton, or [the GPU notebook](09_benchmarking_gpu.ipynb), which sweeps every method with its
# own harnesses.

# %% [markdown]
# ## The `max_tokens` trap: what genai-perf's TensorRT-LLM mode sends
#
# Triton's TensorRT-LLM tutorial benchmarks with `genai-perf ... --service-kind triton --backend
# tensorrtllm`. That mode sends the inputs of the older `inflight_batcher_llm` model:
# `text_input`, `max_tokens`, `exclude_input_in_output` and, when streaming, `stream`. The
# llmapi model calls them `sampling_param_max_tokens`, `sampling_param_exclude_input_from_output`
# and `streaming`. genai-perf itself cannot run here (its load generator `perf_analyzer` is a C++
# program from the Triton SDK container; the Python package named `perf-analyzer` is an empty
# placeholder), so here is what its request did when the NGram server of the first section (as
# the pinned release, no teaching mode) received it over the generate route: **no error, and no
# effect**. Keys that are not model inputs become request parameters, which the model never
# sees: the answer has the default length (32 tokens) and starts with the echoed prompt. Over gRPC inference, as perf_analyzer sends it, Triton refuses
# the request instead, before the model runs: `unexpected inference input 'max_tokens' for model
# 'tensorrt_llm'` (with all of genai-perf's inputs it names one of the unknown ones;
# `tests/test_bench.py` checks both routes).

# %%
for label, text in (("genai-perf's names", trap_text), ("llmapi names", right_text)):
    echoed = text.startswith(question)
    generated = text[len(question):] if echoed else text
    print(f"{label:18}: prompt echoed: {echoed!s:5}  tokens generated: "
          f"{len(tokenizer(generated, add_special_tokens=False)['input_ids'])}")
assert trap_text.startswith(question) and not right_text.startswith(question)

# %%
shutil.rmtree(work, ignore_errors=True)
print(f"notebook run time: {time.monotonic() - NOTEBOOK_START:.0f} s")
