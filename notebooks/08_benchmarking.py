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
# 1. one Triton server **without** `speculative_config` (the baseline), benchmarked, stopped;
# 2. the same server **with** NGram speculation, benchmarked over the *same* prompts, stopped;
# 3. AIPerf drives both: time to first token (TTFT), inter-token latency (ITL), output tokens
#    per second in total and per user, requests per second, at concurrency 1, 2 and 4;
# 4. the acceptance figures come from the counters the model returns with each request
#    (`sampling_param_return_perf_metrics`), added up from AIPerf's raw export.
#
# Everything below ran on this guide's CPU stack: the real `tritonserver` bundled in
# `nvidia-pytriton`, our CPU reference engine behind the llmapi model's contract, and
# SmolLM2-135M-Instruct. **The numbers are CPU numbers**: they show how to measure and how to
# read a result, not what a GPU would give. The GPU recipe (same prompts, AIPerf against the
# container's Triton and `trtllm-serve`, `trtllm-bench` for the offline ceiling) is the
# notebook [Benchmarking on a GPU](09_benchmarking_gpu.ipynb).

# %%
import json
import shutil
import tempfile
import time
import urllib.request
import warnings
from pathlib import Path

import matplotlib.pyplot as plt

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
CONCURRENCY = (1, 2, 4)

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
# ## Two model repositories: the only difference is `speculative_config`
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
    templates.render(method, model=str(checkpoint), out=repos[method], force=True)
base_yaml = (repos["baseline"] / "tensorrt_llm/1/model.yaml").read_text().splitlines()
spec_yaml = (repos["ngram"] / "tensorrt_llm/1/model.yaml").read_text().splitlines()
print("model.yaml lines only the NGram server has:")
print("\n".join(line for line in spec_yaml if line not in base_yaml and line.strip() and not line.lstrip().startswith("#")))

# %% [markdown]
# ## The AIPerf command
#
# AIPerf 0.13.0 runs in its own environment (`make aiperf` makes `.venv-aiperf`). Its built-in
# `template` endpoint can send the llmapi model's inputs, but with `--streaming` it adds up the
# events as if each carried only new text, while the llmapi model sends the *whole text so far*
# in every event: output length and ITL come out wrong. This guide's endpoint plugin
# `triton_llmapi` (in `specdec_guide.bench`, registered with AIPerf's plugin entry point) sends
# `text_input`, `sampling_param_max_tokens`, `sampling_param_exclude_input_from_output`,
# `sampling_param_return_perf_metrics` and `streaming`, and turns each event into its new text.
# This is the command, run below against each server:

# %%
print((ROOT / run_aiperf.SNIPPET).read_text())


# %%
def post_generate(server, body: dict) -> str:
    req = urllib.request.Request(f"{server.http_url}/v2/models/tensorrt_llm/generate",
                                 data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    return json.loads(urllib.request.urlopen(req, timeout=300).read())["text_output"]


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
# ### The baseline server
#
# Started, measured and stopped in one cell (`serve` picks free ports and stops the server
# when the block ends, even on an error). While it is up, one more pair of requests shows the
# `max_tokens` trap of the next-but-one section.

# %%
t0 = time.monotonic()
with serve(repos["baseline"], timeout=300) as server:
    ready = time.monotonic() - t0
    question = sets["chat"][0]
    trap_text = post_generate(server, {"text_input": question, "max_tokens": 8, "exclude_input_in_output": True})
    right_text = post_generate(server, {"text_input": question, "sampling_param_max_tokens": 8,
                                   "sampling_param_exclude_input_from_output": True})
    benchmark(server, "baseline")
print(f"baseline: server ready in {ready:.0f} s, benchmark {timings['baseline']:.0f} s")

# %% [markdown]
# ### The NGram server

# %%
t0 = time.monotonic()
with serve(repos["ngram"], timeout=300) as server:
    ready = time.monotonic() - t0
    benchmark(server, "ngram")
print(f"ngram: server ready in {ready:.0f} s, benchmark {timings['ngram']:.0f} s")

# %% [markdown]
# ## What AIPerf measured
#
# One row per server and concurrency level. *Tokens/s* is output tokens of all requests over
# the run; *per user* is each request's output tokens over its own latency, averaged (AIPerf's
# "E2E Output Token Throughput Per User").

# %%
print(f"{'server':9} {'conc':>4} {'TTFT ms':>8} {'ITL ms':>7} {'tok/s':>7} {'tok/s/user':>10} {'req/s':>6} {'errors':>6}")
for method, rows in runs.items():
    for r in rows:
        print(f"{method:9} {r.concurrency:4d} {r.ttft_ms:8.0f} {r.itl_ms:7.1f} {r.output_tokens_per_s:7.1f} "
              f"{r.tokens_per_s_per_user:10.1f} {r.requests_per_s:6.2f} {r.errors:6d}")
assert all(r.errors == 0 for rows in runs.values() for r in rows)

# %% [markdown]
# ## Acceptance, per prompt set
#
# The model returns three counters per request when asked (`sampling_param_return_perf_metrics`):
# `total_draft_tokens`, `total_accepted_draft_tokens` and `acceptance_rate` (their ratio).
# AIPerf does not read them (its speculative-decoding metrics parse vLLM's format), but
# `--export-level raw` keeps every response body, and the last one of each request holds its
# totals. The *acceptance length* (tokens per target step) follows from them: each step emits
# its accepted drafts plus one token of its own, so steps = output tokens - accepted drafts.
# [Reading the numbers](../reading_the_numbers.md) maps these to the names other tools use.

# %%
print(f"{'server':9} {'set':13} {'requests':>8} {'tokens':>6} {'drafted':>7} {'accepted':>8} {'accept rate':>11} {'accept len':>10}")
for method, by_set in acceptance.items():
    for name, a in by_set.items():
        print(f"{method:9} {name:13} {a.requests:8d} {a.output_tokens:6d} {a.drafted:7d} {a.accepted:8d} "
              f"{a.acceptance_rate:11.2f} {a.acceptance_length:10.2f}")
assert all(a.drafted == 0 for a in acceptance["baseline"].values()), "the baseline must not draft"

# %% [markdown]
# ## Throughput as concurrency grows

# %%
fig, (per_user_ax, total_ax) = plt.subplots(1, 2, figsize=(10, 3.6))
for method, rows in runs.items():
    conc = [r.concurrency for r in rows]
    per_user_ax.plot(conc, [r.tokens_per_s_per_user for r in rows], "o-", label=method)
    total_ax.plot(conc, [r.output_tokens_per_s for r in rows], "o-", label=method)
per_user_ax.set(xlabel="concurrency", ylabel="output tokens/s per user", title="Per user", xticks=list(CONCURRENCY))
total_ax.set(xlabel="concurrency", ylabel="output tokens/s, all users", title="Total", xticks=list(CONCURRENCY))
for ax in (per_user_ax, total_ax):
    ax.grid(alpha=0.3)
    ax.legend()
fig.tight_layout()
plt.show()

speedup = {r.concurrency: s.output_tokens_per_s / r.output_tokens_per_s
           for r, s in zip(runs["baseline"], runs["ngram"])}
print("NGram / baseline, total output tokens/s:", ", ".join(f"c={c}: {v:.2f}x" for c, v in speedup.items()))

# %% [markdown]
# **How to read this on this machine.** The CPU reference engine runs one request at a time
# (no in-flight batching), so a request beyond the first waits in a queue: TTFT grows with
# concurrency for both servers, and the total cannot grow the way a batching GPU server's does.
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
# The throughput rows are the fragile part: one run of four requests per level, on 2 cores that
# the server, AIPerf and this notebook share, cannot tell a speed-up from run-to-run noise, so
# the NGram / baseline ratios above are not a measured speed-up (*Speed on a CPU* measures
# speed-ups with repeated rounds instead). On a GPU, the sweep is where speculation stops
# paying: at batch 1 a target step is bound by reading the weights, so scoring a few draft
# tokens costs little more than one token; as the batch grows the step becomes bound by
# arithmetic, every draft token adds work, and the same acceptance buys less. At high
# concurrency a speculative server can be slower than its baseline. That is the sweep to run on
# your GPU deployment with the same command ([the GPU notebook](09_benchmarking_gpu.ipynb)).

# %% [markdown]
# ## The `max_tokens` trap: what genai-perf's TensorRT-LLM mode sends
#
# Triton's TensorRT-LLM tutorial benchmarks with `genai-perf ... --service-kind triton --backend
# tensorrtllm`. That mode sends the inputs of the older `inflight_batcher_llm` model:
# `text_input`, `max_tokens`, `exclude_input_in_output` and, when streaming, `stream`. The
# llmapi model calls them `sampling_param_max_tokens`, `sampling_param_exclude_input_from_output`
# and `streaming`. genai-perf itself cannot run here (its load generator `perf_analyzer` is a C++
# program from the Triton SDK container; the Python package named `perf-analyzer` is an empty
# placeholder), so here is what its request did when the baseline server above received it over
# the generate route: **no error, and no effect**. Keys that are not model inputs become request
# parameters, which the model never sees: the answer has the default length (32 tokens) and
# starts with the echoed prompt. Over gRPC inference, as perf_analyzer sends it, Triton refuses
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
