# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
#   specdec_guide:
#     tier: gpu
#     title: Benchmarking speculation on a GPU
#     track: 1.1.0
# ---

# %% [markdown]
# # Benchmarking speculation on a GPU
#
# *To run it:* [Run a GPU notebook in the container](../../index.md#run-a-gpu-notebook-in-the-container)
# (or `make test-gpu`, which runs every GPU notebook).
#
# The recipe of [Benchmarking speculation with AIPerf](08_benchmarking.ipynb), on the
# hardware it is meant for: the Triton 25.12 TensorRT-LLM container (TensorRT-LLM 1.1.0), one
# NVIDIA GPU, Llama-3.1-8B-Instruct with NGram. Every method reads **the same prompts**, and
# every speculative run uses **the same speculative YAML**:
#
# 1. AIPerf against the container's Triton `llmapi` model, baseline and NGram (two servers,
#    one after the other);
# 2. AIPerf against `trtllm-serve`, baseline and NGram (its OpenAI completions route);
# 3. `trtllm-bench throughput`, baseline and NGram: the offline ceiling, no HTTP in the way.
#
# This guide quotes no GPU figure from this notebook (the banner above says whether it has
# run). Run it inside the container (`make test-gpu` runs the GPU tier) from a checkout of
# this guide; the model is gated on Hugging Face (`HF_TOKEN`).

# %%
import json
import os
import subprocess
import time
import urllib.request
from pathlib import Path

GUIDE = Path(os.environ.get("GUIDE", Path.cwd().parent)).resolve()  # the guide's checkout
MODEL = "meta-llama/Llama-3.1-8B-Instruct"
OUTPUT_TOKENS = 128
CONCURRENCY = "1,4,16,64"  # a GPU batches in flight: sweep far enough to see the gain shrink
WORK = Path("bench_gpu").resolve()
WORK.mkdir(exist_ok=True)


def wait_ready(url: str, timeout: float = 1800) -> None:
    """Poll until the server answers 200, or fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(5)
    raise TimeoutError(f"{url} not ready after {timeout:g} s")


# %% [markdown]
# ## AIPerf in its own environment
#
# `make aiperf` makes `.venv-aiperf` in the guide's checkout: AIPerf 0.13.0 from the pinned set
# `constraints-aiperf.txt`, plus this guide's package without dependencies, which carries the
# endpoint plugin `triton_llmapi` (the llmapi model streams the text so far in each event; the
# plugin turns it into deltas). It leaves the container's own Python untouched.

# %% language="bash"
# make -C "$GUIDE" aiperf PYTHON=python3
# "$GUIDE/.venv-aiperf/bin/aiperf" plugins endpoint triton_llmapi

# %% [markdown]
# ## One prompt set for every method
#
# The guide's code-editing and chat prompts (`specdec_guide.bench.prompts`) with the target's
# chat template applied, written twice: AIPerf's `single_turn` file and trtllm-bench's dataset
# (`task_id`, `prompt`, `output_tokens` per line, the schema of the 1.1.0 benchmarking page).
# To use SpecBench instead, fetch its `question.jsonl` (the file AIPerf's
# `--public-dataset spec-bench` downloads: github.com/hemingkx/Spec-Bench, `data/spec_bench/`)
# and pass the first turn of each row as the prompts here, so that trtllm-bench reads the same
# ones. SPEED-Bench (AIPerf's `--custom-dataset-type speed-bench-<category>`) reads a local
# JSONL of `question_id`, `category` and `messages`; its published rows are placeholders that
# NVIDIA's specdec_bench tooling fills in, so build that file with it first.

# %%
from transformers import AutoTokenizer

from specdec_guide.bench import prompts, run_aiperf

tokenizer = AutoTokenizer.from_pretrained(MODEL)
texts = [t for group in prompts.rendered_sets(tokenizer).values() for t in group]
aiperf_prompts = run_aiperf.write_prompts(WORK / "prompts.jsonl", texts, OUTPUT_TOKENS)
bench_dataset = prompts.write_trtllm_bench_dataset(WORK / "dataset.jsonl", texts, OUTPUT_TOKENS)
tokenizer_dir = WORK / "tokenizer"
tokenizer.save_pretrained(tokenizer_dir)  # AIPerf needs a local tokenizer directory
print(len(texts), "prompts")

# %% [markdown]
# ## The speculative settings, one file
#
# The same keys serve `trtllm-serve --extra_llm_api_options`, `trtllm-bench
# --extra_llm_api_options` and, inside `model.yaml`, Triton's llmapi model.

# %%
# %%writefile bench_gpu/ngram.yaml
# specdec-guide: trtllm=1.1.0
# specdec-guide: llm-api-yaml
disable_overlap_scheduler: true
speculative_config:
  decoding_type: NGram
  max_draft_len: 4
  max_matching_ngram_size: 2
  is_keep_all: true
  is_use_oldest: true
  is_public_pool: true

# %% [markdown]
# ## 1. Triton's llmapi model: baseline, then NGram
#
# Two model repositories rendered from the guide's templates with the container's own
# `model.py` (`--engine trtllm`). The baseline is the same server **restarted without
# `speculative_config`**; each server stops before the next one starts. AIPerf streams
# (the plugin sends `"streaming": true`), which needs a decoupled model: the container's
# launcher starts `tritonserver` with `--disable-auto-complete-config`, so `model.yaml`'s
# `triton_config.decoupled` never reaches Triton, and the policy must be in `config.pbtxt`
# (added below where the render did not write it). Whether the stream then carries one event
# per step depends on the container's `model.py`: before TensorRT-LLM PR #14079 (merged on
# main in 2026-05, after 1.2.1) the llmapi model passed `streaming` as the third positional
# argument of `generate_async`, which in 1.1.0's `llm.py` is `lora_request` (read at a
# 1.2.0rc2-era commit of `model.py`, not at the release/1.1 file), so expect a "stream" of one
# event with the whole answer; then AIPerf's TTFT equals the request latency and ITL says
# nothing. `triton_run` prints the event count of one streamed request so that you can tell.

# %% language="bash"
# cd bench_gpu
# for method in baseline ngram; do
#   specdec-guide repo render --method "$method" --engine trtllm \
#     --model meta-llama/Llama-3.1-8B-Instruct --out "repo_$method" --force
#   pbtxt="repo_$method/tensorrt_llm/config.pbtxt"
#   # Only where no line starts with it: a second model_transaction_policy block fails to parse.
#   grep -q '^model_transaction_policy' "$pbtxt" || \
#     printf '\nmodel_transaction_policy {\n  decoupled: true\n}\n' >> "$pbtxt"
#   grep -A2 '^model_transaction_policy' "$pbtxt"
# done

# %%
def stream_events(prompt: str) -> int:
    """How many server-sent events one streamed request gets (1 means the model did not stream per step)."""
    body = json.dumps({"text_input": prompt, "streaming": True, "sampling_param_max_tokens": 32,
                       "sampling_param_exclude_input_from_output": True}).encode()
    req = urllib.request.Request("http://127.0.0.1:8000/v2/models/tensorrt_llm/generate_stream", data=body,
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=600) as r:
        return sum(1 for line in r.read().decode().splitlines() if line.startswith("data: "))


def triton_run(method: str) -> None:
    subprocess.run(["python3", "/app/scripts/launch_triton_server.py", "--model_repo",
                    str(WORK / f"repo_{method}"), "--world_size", "1"], check=True)
    try:
        wait_ready("http://127.0.0.1:8000/v2/models/tensorrt_llm/ready")
        events = stream_events(texts[0])
        print(f"{method}: one streamed request of 32 tokens came back in {events} event(s)"
              + ("; this model.py does not stream per step, so TTFT and ITL below are not per token" if events <= 1 else ""))
        run_aiperf.profile(triton_http="127.0.0.1:8000", model="tensorrt_llm", tokenizer=tokenizer_dir,
                           prompts=aiperf_prompts, out=WORK / f"aiperf_triton_{method}",
                           concurrency=tuple(int(c) for c in CONCURRENCY.split(",")), requests=64,
                           timeout=3600, root=GUIDE)
    finally:
        # The launcher started tritonserver in the background; this container runs no other one.
        subprocess.run(["pkill", "-x", "tritonserver"], check=False)
        while subprocess.run(["pgrep", "-x", "tritonserver"], capture_output=True).returncode == 0:
            time.sleep(1)


for method in ("baseline", "ngram"):
    triton_run(method)

# %% [markdown]
# ## 2. trtllm-serve: baseline, then NGram
#
# AIPerf's built-in `completions` endpoint speaks trtllm-serve's OpenAI route. The same prompt
# file and sweep; the baseline server is started without the YAML.

# %% language="bash"
# cd bench_gpu
# for method in baseline ngram; do
#   extra=""; [ "$method" = ngram ] && extra="--extra_llm_api_options ngram.yaml"
#   nohup trtllm-serve meta-llama/Llama-3.1-8B-Instruct --backend pytorch \
#     --host 127.0.0.1 --port 8000 $extra > "serve_$method.log" 2>&1 &
#   pid=$!
#   trap 'kill "$pid" 2> /dev/null' EXIT  # the server goes down with the cell, whatever fails
#   # Ready within 30 minutes (a first download included), or stop with the log's tail.
#   for _ in $(seq 360); do curl -sf http://127.0.0.1:8000/v1/models > /dev/null && break
#     kill -0 "$pid" 2> /dev/null || break; sleep 5; done
#   curl -sf http://127.0.0.1:8000/v1/models > /dev/null || { tail -20 "serve_$method.log"; exit 1; }
#   "$GUIDE/.venv-aiperf/bin/aiperf" profile --model meta-llama/Llama-3.1-8B-Instruct \
#     --url http://127.0.0.1:8000 --endpoint-type completions --streaming \
#     --input-file prompts.jsonl --custom-dataset-type single_turn --tokenizer tokenizer \
#     --concurrency 1,4,16,64 --request-count 64 --artifact-dir "aiperf_serve_$method" \
#     --no-server-metrics --ui-type none
#   kill "$pid"; wait "$pid" || true
# done

# %% [markdown]
# ## 3. trtllm-bench: the offline ceiling
#
# No HTTP, no tokenization in a client: what the engine itself does with the same prompts and
# the same YAML. Flags as on the 1.1.0 `trtllm-bench` page (`--model` before the subcommand;
# `throughput` takes `--backend`, `--dataset`, `--extra_llm_api_options`, `--concurrency`,
# `--streaming`, `--num_requests`, `--warmup`, `--report_json`).

# %% language="bash"
# cd bench_gpu
# trtllm-bench --model meta-llama/Llama-3.1-8B-Instruct throughput --backend pytorch \
#   --dataset dataset.jsonl --concurrency 1 --streaming --warmup 2 --report_json bench_baseline.json
# trtllm-bench --model meta-llama/Llama-3.1-8B-Instruct throughput --backend pytorch \
#   --dataset dataset.jsonl --concurrency 1 --streaming --warmup 2 \
#   --extra_llm_api_options ngram.yaml --report_json bench_ngram.json

# %% [markdown]
# ## Reading the results
#
# The same readers as on CPU: `results.summary` per concurrency level, and the acceptance
# counters of the Triton runs (`sampling_param_return_perf_metrics`) per prompt set. On 1.1.0
# those per-request counters read zero even when drafting ran
# ([why](../triton_cpu.md#4-requests)): then the cell says so instead of printing an acceptance rate of 0, and the
# comparison that counts is NGram's tokens/s against the baseline's (the NGram notebook
# measures acceptance as tokens per target iteration). Where NGram's total tokens/s falls to
# the baseline's as concurrency grows is the point where speculation stops paying on this GPU.

# %%
from specdec_guide.bench import results

sets = prompts.rendered_sets(tokenizer)
for kind in ("triton", "serve"):
    for method in ("baseline", "ngram"):
        for run in results.run_dirs(WORK / f"aiperf_{kind}_{method}"):
            s = results.summary(run)
            print(f"{kind:6} {method:8} c={s.concurrency:<3} TTFT {s.ttft_ms:7.1f} ms  ITL {s.itl_ms:6.2f} ms  "
                  f"{s.output_tokens_per_s:8.1f} tok/s  {s.tokens_per_s_per_user:7.1f} tok/s/user")
for name, a in results.acceptance(results.run_dirs(WORK / "aiperf_triton_ngram")[0], sets).items():
    if a.drafted == 0:
        print(f"NGram on {name}: the per-request draft counters read zero (not filled by this release, "
              "TensorRT-LLM PR #17082); compare tokens/s above instead")
    else:
        print(f"NGram on {name}: acceptance rate {a.acceptance_rate:.2f}, acceptance length {a.acceptance_length:.2f}")
for method in ("baseline", "ngram"):
    report = json.loads((WORK / f"bench_{method}.json").read_text())
    print(f"trtllm-bench {method}: {json.dumps(report)[:400]}")
