# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     notebook_metadata_filter: specdec_guide
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
#     title: NGram (prompt lookup) on TensorRT-LLM and Triton
#     track: 1.1.0
# ---

# %% [markdown]
# # NGram (prompt lookup) on TensorRT-LLM and Triton
#
# NGram drafts from token sequences the request has already seen: the prompt and what the
# model has written so far. It needs no second model and no extra weights, so it is the first
# method to try on output that repeats its input (code edits, extraction, structured rewrites).
#
# The same configuration three ways, on TensorRT-LLM 1.1.0 (the Triton 25.12 container):
#
# 1. the Python LLM API (`LLM(...)` with `NGramDecodingConfig`),
# 2. `trtllm-serve` with the same settings as an `--extra_llm_api_options` YAML file and an
#    OpenAI-client request,
# 3. Triton's `llmapi` model repository rendered from this guide's template, started with the
#    container's `launch_triton_server.py`, queried with curl and tritonclient, streaming
#    included (with the decoupled policy written into `config.pbtxt`).
#
# The check cells report where greedy output with NGram first parts from the baseline's (they
# fail only inside the first 10 tokens, the length upstream's own tests compare), and measure
# acceptance as output tokens per target iteration from the LLM's iteration statistics (they
# count iterations, not `specDecodingStats`, which 1.1.0 keeps only for the two-model paths;
# see "Reading the numbers"): the per-request draft counters read zero on 1.1.0
# ([why](../triton_cpu.md#4-requests)), so they are printed, not relied on.
#
# Run it inside `nvcr.io/nvidia/tritonserver:25.12-trtllm-python-py3` on one NVIDIA GPU, from
# a clone of this repository with the package installed (`make test-gpu` does both; by hand:
# [Run a GPU notebook in the container](../../index.md#run-a-gpu-notebook-in-the-container)). The model
# is the container's default small model, TinyLlama-1.1B-Chat, downloaded from Hugging Face on
# first use.

# %%
import os
import shutil
from pathlib import Path

from specdec_guide.background import post_json, stop, wait_ready
from specdec_guide.gpu_checks import acceptance_from_stats, check_accepted, per_request_counters, report_greedy
from specdec_guide.templates import templates_root

# The guide's checkout, found from the installed package (make test-gpu installs it editable),
# so the cell also works when re-run after the chdir below.
GUIDE = templates_root().parents[1]
WORK = Path(os.environ.get("SPECDEC_WALK_DIR", "/tmp/specdec-walk")) / "ngram"
WORK.mkdir(parents=True, exist_ok=True)
os.chdir(WORK)  # what the cells write (YAML, model repository, logs) goes here, not into the repository
# The guide's gRPC streaming client (run by the CPU tests against the stand-in), next to the other files.
shutil.copyfile(GUIDE / "snippets/triton/client_grpc_stream.py", WORK / "client_grpc_stream.py")

MODEL = "TinyLlama/TinyLlama-1.1B-Chat-v1.0"
MAX_TOKENS = 64
# A prompt whose answer repeats it: NGram finds its drafts in the prompt itself.
PROMPT = ("Rewrite this Python function with the variable `count` renamed to `total`.\n\n"
          "def add_all(xs):\n    count = 0\n    for x in xs:\n        count += x\n    return count\n\n"
          "Rewritten:\n")

# %% [markdown]
# Is this the machine the notebook needs? A GPU, and the TensorRT-LLM release of the header.

# %% language="bash"
# nvidia-smi -L
# python3 -c "import tensorrt_llm; print('tensorrt_llm', tensorrt_llm.__version__)"

# %% [markdown]
# ## 1. The LLM API
#
# First the baseline: plain greedy decoding (no temperature, top-k or top-p set), asking for
# the per-request performance metrics. The baseline uses the same LLM settings as the NGram run
# (overlap scheduler off), so that the two differ only in speculation.

# %%
from tensorrt_llm import LLM, SamplingParams

params = SamplingParams(max_tokens=MAX_TOKENS, return_perf_metrics=True)

llm = LLM(model=MODEL, disable_overlap_scheduler=True)
try:
    baseline = llm.generate([PROMPT], params)[0].outputs[0]
finally:
    llm.shutdown()
print(baseline.text)

# %% [markdown]
# Now the same model with NGram. The keys are those of `NGramDecodingConfig` in 1.1.0:
# `max_draft_len` tokens proposed per step; `max_matching_ngram_size`, the longest suffix of
# the sequence looked up in the pool (1.1.0 declares a default of 0 and then asserts that it
# is above 0, so it must be set); `is_keep_all`, `is_use_oldest`, `is_public_pool`, how the
# pool keeps and shares candidates. Upstream's NGram examples turn the overlap scheduler off.
# `enable_iter_perf_stats` keeps per-iteration statistics, read with `llm.get_stats()` before
# the LLM shuts down.

# %%
from tensorrt_llm import LLM
from tensorrt_llm.llmapi import NGramDecodingConfig

ngram = NGramDecodingConfig(max_draft_len=4, max_matching_ngram_size=2,
                            is_keep_all=True, is_use_oldest=True, is_public_pool=True)
llm = LLM(model=MODEL, speculative_config=ngram, disable_overlap_scheduler=True, enable_iter_perf_stats=True)
try:
    spec = llm.generate([PROMPT], params)[0].outputs[0]
    stats = llm.get_stats(timeout=2)
finally:
    llm.shutdown()
print(spec.text)

# %% [markdown]
# Greedy speculative decoding keeps only draft tokens that the target itself would have chosen,
# so in exact arithmetic the tokens are the baseline's; in bf16 a multi-token verification pass
# can round a near tie the other way. The cell reports the first token where the two part and
# fails only inside the first 10 (what upstream's tests compare, with the same settings).
# Acceptance: output tokens per target iteration, from the iteration statistics (above 1.0 means
# drafts were accepted). The per-request counters are printed as they came back. The field
# names the measure reads (`inflightBatchingStats.numScheduledRequests`, `specDecodingStats`)
# were read in TensorRT-LLM's own tests on a later main branch, not at 1.1.0: if this release
# names them differently, the check fails saying it found no iteration, instead of passing.

# %%
report_greedy("NGram", baseline.token_ids, spec.token_ids, exact_prefix=10)
check_accepted("NGram", acceptance_from_stats(stats, len(spec.token_ids)))
metrics = spec.request_perf_metrics.speculative_decoding
per_request_counters("NGram (LLM API)", metrics.total_draft_tokens, metrics.total_accepted_draft_tokens)

# %% [markdown]
# ## 2. `trtllm-serve` and an OpenAI client
#
# The same settings as a YAML file for `--extra_llm_api_options`. The cell writes exactly the
# guide's file `snippets/llm_api/1.1.0/ngram.yaml` (a CPU test compares the two).

# %%
# %%writefile ngram.yaml
# specdec-guide: trtllm=1.1.0
# specdec-guide: llm-api-yaml
# NGram (prompt lookup), TensorRT-LLM 1.1.0: a file for
# trtllm-serve --extra_llm_api_options.
# In 1.1.0 max_matching_ngram_size has no usable default: set it.
disable_overlap_scheduler: true
speculative_config:
  decoding_type: NGram
  max_draft_len: 4
  max_matching_ngram_size: 2
  is_keep_all: true
  is_use_oldest: true
  is_public_pool: true

# %% language="bash"
# nohup trtllm-serve TinyLlama/TinyLlama-1.1B-Chat-v1.0 --backend pytorch \
#   --host 127.0.0.1 --port 8000 --extra_llm_api_options ngram.yaml > serve.log 2>&1 &
# echo $! > serve.pid

# %%
wait_ready("http://127.0.0.1:8000/v1/models", pid_file="serve.pid")

# %%
from openai import OpenAI

client = OpenAI(base_url="http://127.0.0.1:8000/v1", api_key="not-used")
try:
    reply = client.completions.create(model=MODEL, prompt=PROMPT, max_tokens=MAX_TOKENS, temperature=0)
finally:
    stop("serve.pid")
print(reply.choices[0].text)
assert reply.choices[0].text.strip(), "trtllm-serve returned no text"

# %% [markdown]
# ## 3. Triton's `llmapi` model
#
# `specdec-guide repo render --engine trtllm` copies the guide's NGram template (`config.pbtxt`
# and `1/model.yaml`) and the container's own `model.py` and `helpers.py` into a model
# repository. Every key of `model.yaml` except `triton_config` goes to `LLM(...)`, so the
# speculative settings are the ones above.

# %% language="bash"
# specdec-guide repo render --method ngram --engine trtllm \
#   --model TinyLlama/TinyLlama-1.1B-Chat-v1.0 --out repo_ngram --force
# cat repo_ngram/tensorrt_llm/1/model.yaml
# # The container's launcher starts tritonserver with --disable-auto-complete-config, so the
# # triton_config.decoupled of model.yaml never reaches Triton: config.pbtxt must state the policy
# # too. Newer renders write it; add it only where no line starts with it (a second block fails to parse).
# grep -q '^model_transaction_policy' repo_ngram/tensorrt_llm/config.pbtxt || \
#   printf '\nmodel_transaction_policy {\n  decoupled: true\n}\n' >> repo_ngram/tensorrt_llm/config.pbtxt
# grep -A2 '^model_transaction_policy' repo_ngram/tensorrt_llm/config.pbtxt

# %% [markdown]
# The container's launcher starts `tritonserver` in the background and returns: HTTP on 8000,
# gRPC on 8001, metrics on 8002. It has no stop command; the last cell of this section stops
# the server.

# %% language="bash"
# python3 /app/scripts/launch_triton_server.py --model_repo "$PWD/repo_ngram" --world_size 1

# %%
wait_ready("http://127.0.0.1:8000/v2/models/tensorrt_llm/ready")

# %% [markdown]
# One request with curl. Only keys named like the model's inputs reach it, hence
# `sampling_param_max_tokens`; `sampling_param_return_perf_metrics` adds the draft counters
# (sent as strings; on 1.1.0 with TorchSampler they read zero, TensorRT-LLM PR #17082).

# %% language="bash"
# curl -sS --fail-with-body -X POST http://127.0.0.1:8000/v2/models/tensorrt_llm/generate \
#   -H 'Content-Type: application/json' \
#   -d '{"text_input": "def add_all(xs):\n    count = 0\n    for x in xs:\n        count += x\n    return count\n\nThe same function with count renamed to total:\n",
#        "sampling_param_max_tokens": 64,
#        "sampling_param_exclude_input_from_output": true,
#        "sampling_param_return_perf_metrics": true}'

# %% [markdown]
# The notebook's prompt through Triton. The server runs the same speculative settings but not
# the same LLM (other defaults, no iteration statistics), so the text is compared by reporting
# where it parts from the LLM API's, and the per-request counters are printed as they came back
# (zero on 1.1.0 with TorchSampler, TensorRT-LLM PR #17082).

# %%
triton = post_json("http://127.0.0.1:8000/v2/models/tensorrt_llm/generate", {
    "text_input": PROMPT,
    "sampling_param_max_tokens": MAX_TOKENS,
    "sampling_param_exclude_input_from_output": True,
    "sampling_param_return_perf_metrics": True,
})
print({k: triton[k] for k in ("total_draft_tokens", "total_accepted_draft_tokens", "acceptance_rate")})
report_greedy("NGram behind Triton", spec.text, triton["text_output"], unit="character")
per_request_counters("NGram behind Triton", triton["total_draft_tokens"], triton["total_accepted_draft_tokens"])

# %% [markdown]
# Streaming: `/generate_stream` answers with server-sent events. It needs a decoupled model,
# stated in `config.pbtxt` (the cell after `repo render` made sure of it; behind the launcher
# `model.yaml`'s `triton_config.decoupled` alone is not enough), and `"streaming": true`. Expect
# **one** event holding the whole answer on this release, not one per step: the llmapi `model.py`
# (read at TensorRT-LLM commit `b35ac1b6`, a 1.2.0rc2-era main commit) passes `streaming` as the
# third positional argument of `generate_async`, which in 1.1.0's `llm.py` is `lora_request`, so
# the LLM is never asked to stream (TensorRT-LLM PR #14079, on main after 1.2.1, passes it by
# keyword). Not confirmed at the release/1.1 file the container copies: count the `data:` lines
# to see which this one does.

# %% language="bash"
# curl -sS --fail-with-body -N -X POST http://127.0.0.1:8000/v2/models/tensorrt_llm/generate_stream \
#   -H 'Content-Type: application/json' \
#   -d '{"text_input": "for i in range(10):\n    print(i)\nfor i in range(10):\n",
#        "streaming": true,
#        "sampling_param_max_tokens": 32,
#        "sampling_param_exclude_input_from_output": true}'

# %% [markdown]
# The same stream over gRPC with tritonclient: the guide's `snippets/triton/client_grpc_stream.py`,
# which the CPU tests run against the CPU stand-in. Its last line carries the draft counters.

# %% language="bash"
# python3 -c "import tritonclient.grpc" 2>/dev/null || python3 -m pip install --quiet "tritonclient[grpc]==2.73.0"
# TRITON_GRPC=127.0.0.1:8001 python3 client_grpc_stream.py

# %% language="bash"
# # The launcher started tritonserver in the background; this container runs no other one.
# pkill -x tritonserver
# while pgrep -x tritonserver > /dev/null; do sleep 1; done
# echo "tritonserver stopped"

# %% [markdown]
# ## What to take from it
#
# - The YAML for `trtllm-serve` and the `model.yaml` behind Triton hold the same keys as
#   `NGramDecodingConfig(...)`; the releases differ in spelling for other methods, not for
#   NGram (the page "Versions and keys" lists them).
# - NGram only pays when the output repeats something already in the sequence. Tokens per
#   target iteration (from `LLM.get_stats()` with `enable_iter_perf_stats`) show whether your
#   traffic does on 1.1.0, where the per-request counters read zero with TorchSampler;
#   the page "Choosing a method" says when it stops paying.
