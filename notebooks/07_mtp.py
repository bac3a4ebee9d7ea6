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
#     min_gpus: 8
#     tier: gpu
#     title: MTP (multi-token prediction) on TensorRT-LLM and Triton
#     track: 1.1.0
# ---

# %% [markdown]
# # MTP (multi-token prediction) on TensorRT-LLM and Triton
#
# *To run it:* [Run a GPU notebook in the container](../../index.md#run-a-gpu-notebook-in-the-container)
# (or `make test-gpu`, which runs every GPU notebook).
#
# MTP drafts with extra prediction modules that the model was trained with and ships in its
# checkpoint, so it needs no separate draft model and no extra download. It also means MTP
# works only for models that have such modules: TensorRT-LLM 1.1.0's speculative-decoding page
# says MTP is supported only for DeepSeek (V3/R1) models.
#
# **Hardware.** No model that TensorRT-LLM 1.1.0 runs with MTP fits one H100. DeepSeek-R1 has
# 671 billion parameters; even in FP8 (about one byte each) the weights alone exceed eight
# 80 GB H100s (640 GB). TensorRT-LLM's deployment recipe for DeepSeek-R1-0528 (read in its 1.0.0 and
# 1.2.0rc2 versions, which agree; the 1.1.0 page itself was not read) runs it on
# eight Hopper or Blackwell GPUs with tensor and expert parallelism 8 (`--tp_size 8
# --ep_size 8`); with 141 GB per GPU, eight H200s hold the FP8 checkpoint
# `deepseek-ai/DeepSeek-R1-0528`, and the NVFP4 checkpoint `nvidia/DeepSeek-R1-0528-FP4` is for
# Blackwell only. This notebook shows that eight-GPU configuration; its header says
# `min_gpus: 8`, and the GPU tier skips it on a smaller machine with that reason.
#
# The keys (`MTPDecodingConfig` in 1.1.0): `num_nextn_predict_layers`, the number of MTP
# modules used, which is also the draft length (the LLM API sets `max_draft_len` from it);
# `use_relaxed_acceptance_for_thinking` with `relaxed_topk` and `relaxed_delta`, which accept
# a draft token during the thinking phase of a reasoning model if it is among the target's
# top candidates (then the output is no longer the target's greedy output, so this notebook
# leaves it off); `mtp_eagle_one_model` (default true) selects, for a checkpoint with one MTP
# layer, the one-model "EAGLE-style MTP" mode (`MTPDecodingConfig.spec_dec_mode` in 1.1.0's
# `llm_args.py`; the speculative-decoding page lists it for DeepSeek V3/R1).
#
# This notebook needs eight GPUs.

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
WORK = Path(os.environ.get("SPECDEC_WALK_DIR", "/tmp/specdec-walk")) / "mtp"
WORK.mkdir(parents=True, exist_ok=True)
os.chdir(WORK)  # what the cells write (YAML, model repository, logs) goes here, not into the repository
# The guide's gRPC streaming client (run by the CPU tests against the stand-in), next to the other files.
shutil.copyfile(GUIDE / "snippets/triton/client_grpc_stream.py", WORK / "client_grpc_stream.py")

MODEL = "deepseek-ai/DeepSeek-R1-0528"
MAX_TOKENS = 64
PROMPT = "What is 17 times 23? Answer with the number only.\n"

# %% language="bash"
# nvidia-smi -L
# test "$(nvidia-smi -L | wc -l)" -ge 8 || { echo "MTP on DeepSeek-R1 needs eight GPUs" >&2; exit 1; }
# python3 -c "import tensorrt_llm; print('tensorrt_llm', tensorrt_llm.__version__)"

# %% [markdown]
# ## 1. The LLM API
#
# Baseline and MTP, each across the eight GPUs, with the same settings apart from speculation.
# Loading a 671B checkpoint takes long. The MTP run keeps iteration statistics
# (`enable_iter_perf_stats`): acceptance is measured as output tokens per target iteration
# (iterations counted: 1.1.0 keeps `specDecodingStats` only for two-model paths, and MTP is
# one-model), because the per-request counters read zero on 1.1.0 ([why](../triton_cpu.md#4-requests);
# the C++ sampler does not combine with MTP, per the 1.1.0 feature matrix).

# %%
from tensorrt_llm import LLM, SamplingParams

params = SamplingParams(max_tokens=MAX_TOKENS, return_perf_metrics=True)

llm = LLM(model=MODEL, tensor_parallel_size=8, moe_expert_parallel_size=8, trust_remote_code=True)
try:
    baseline = llm.generate([PROMPT], params)[0].outputs[0]
finally:
    llm.shutdown()
print(baseline.text)

# %%
from tensorrt_llm import LLM
from tensorrt_llm.llmapi import MTPDecodingConfig

llm = LLM(model=MODEL, tensor_parallel_size=8, moe_expert_parallel_size=8, trust_remote_code=True,
          enable_iter_perf_stats=True, speculative_config=MTPDecodingConfig(num_nextn_predict_layers=1))
try:
    spec = llm.generate([PROMPT], params)[0].outputs[0]
    stats = llm.get_stats(timeout=2)
finally:
    llm.shutdown()
print(spec.text)

# %%
# Reports where the MTP output first parts from the baseline, without failing on it: the
# upstream tests this guide read assert identical text for NGram and EAGLE-3 only (10-32 tokens),
# none for MTP on an eight-GPU DeepSeek-R1.
report_greedy("MTP", baseline.token_ids, spec.token_ids)
check_accepted("MTP", acceptance_from_stats(stats, len(spec.token_ids)))
metrics = spec.request_perf_metrics.speculative_decoding
per_request_counters("MTP (LLM API)", metrics.total_draft_tokens, metrics.total_accepted_draft_tokens)

# %% [markdown]
# ## 2. `trtllm-serve` and an OpenAI client
#
# The YAML follows TensorRT-LLM's DeepSeek-R1 recipe (as read above) for the speculative part; the
# parallelism goes on the command line. The cell writes exactly the guide's
# `snippets/notebooks/07_mtp/mtp_deepseek_r1.yaml`.

# %%
# %%writefile mtp_deepseek_r1.yaml
# specdec-guide: trtllm=1.1.0
# specdec-guide: llm-api-yaml
# MTP on DeepSeek-R1-0528 (FP8), TensorRT-LLM 1.1.0, eight GPUs
# (trtllm-serve --tp_size 8 --ep_size 8). One MTP module drafts one token.
speculative_config:
  decoding_type: MTP
  num_nextn_predict_layers: 1

# %% language="bash"
# nohup trtllm-serve deepseek-ai/DeepSeek-R1-0528 --backend pytorch --tp_size 8 --ep_size 8 \
#   --trust_remote_code --host 127.0.0.1 --port 8000 \
#   --extra_llm_api_options mtp_deepseek_r1.yaml > serve.log 2>&1 &
# echo $! > serve.pid

# %%
wait_ready("http://127.0.0.1:8000/v1/models", pid_file="serve.pid", timeout_s=5400)

# %%
from openai import OpenAI

client = OpenAI(base_url="http://127.0.0.1:8000/v1", api_key="not-used")
try:
    reply = client.completions.create(model=MODEL, prompt=PROMPT, max_tokens=MAX_TOKENS, temperature=0)
finally:
    stop("serve.pid", timeout_s=300)
print(reply.choices[0].text)
assert reply.choices[0].text.strip(), "trtllm-serve returned no text"

# %% [markdown]
# ## 3. Triton's `llmapi` model on eight GPUs
#
# The guide's `mtp` template, with the parallelism set in `model.yaml` (every key but
# `triton_config` goes to `LLM(...)`) and one MPI rank per GPU from the launcher
# (`--world_size 8`).

# %% language="bash"
# specdec-guide repo render --method mtp --engine trtllm --model deepseek-ai/DeepSeek-R1-0528 \
#   --out repo_mtp --force
# sed -i 's/^tensor_parallel_size: 1$/tensor_parallel_size: 8\nmoe_expert_parallel_size: 8\ntrust_remote_code: true/' \
#   repo_mtp/tensorrt_llm/1/model.yaml
# cat repo_mtp/tensorrt_llm/1/model.yaml
# # The container's launcher starts tritonserver with --disable-auto-complete-config, so the
# # triton_config.decoupled of model.yaml never reaches Triton: config.pbtxt must state the policy
# # too. Newer renders write it; add it only where no line starts with it (a second block fails to parse).
# grep -q '^model_transaction_policy' repo_mtp/tensorrt_llm/config.pbtxt || \
#   printf '\nmodel_transaction_policy {\n  decoupled: true\n}\n' >> repo_mtp/tensorrt_llm/config.pbtxt
# grep -A2 '^model_transaction_policy' repo_mtp/tensorrt_llm/config.pbtxt

# %% language="bash"
# python3 /app/scripts/launch_triton_server.py --model_repo "$PWD/repo_mtp" --world_size 8

# %%
wait_ready("http://127.0.0.1:8000/v2/models/tensorrt_llm/ready", timeout_s=5400)

# %% language="bash"
# curl -sS --fail-with-body -X POST http://127.0.0.1:8000/v2/models/tensorrt_llm/generate \
#   -H 'Content-Type: application/json' \
#   -d '{"text_input": "What is 17 times 23? Answer with the number only.\n",
#        "sampling_param_max_tokens": 64,
#        "sampling_param_exclude_input_from_output": true,
#        "sampling_param_return_perf_metrics": true}'

# %%
triton = post_json("http://127.0.0.1:8000/v2/models/tensorrt_llm/generate", {
    "text_input": PROMPT,
    "sampling_param_max_tokens": MAX_TOKENS,
    "sampling_param_exclude_input_from_output": True,
    "sampling_param_return_perf_metrics": True,
})
print({k: triton[k] for k in ("total_draft_tokens", "total_accepted_draft_tokens", "acceptance_rate")})
# The same speculative settings, not the same LLM (other defaults): report where the texts part.
report_greedy("MTP behind Triton", spec.text, triton["text_output"], unit="character")
per_request_counters("MTP behind Triton", triton["total_draft_tokens"], triton["total_accepted_draft_tokens"])

# %% language="bash"
# curl -sS --fail-with-body -N -X POST http://127.0.0.1:8000/v2/models/tensorrt_llm/generate_stream \
#   -H 'Content-Type: application/json' \
#   -d '{"text_input": "List the first five prime numbers.\n",
#        "streaming": true,
#        "sampling_param_max_tokens": 32,
#        "sampling_param_exclude_input_from_output": true}'

# %% language="bash"
# python3 -c "import tritonclient.grpc" 2>/dev/null || python3 -m pip install --quiet "tritonclient[grpc]==2.73.0"
# TRITON_GRPC=127.0.0.1:8001 python3 client_grpc_stream.py

# %% language="bash"
# # The launcher started tritonserver (one process per rank) in the background; this container runs no other one.
# pkill -x tritonserver
# while pgrep -x tritonserver > /dev/null; do sleep 1; done
# echo "tritonserver stopped"

# %% [markdown]
# ## 4. On TensorRT-LLM 1.2.1
#
# The MTP keys are the same in 1.2.1 (`decoding_type: MTP`, `num_nextn_predict_layers`); the
# guide's `snippets/llm_api/1.2.1/mtp.yaml` is checked against the 1.2.1 snapshot.

# %%
# %%writefile mtp.yaml
# specdec-guide: trtllm=1.2.1
# specdec-guide: llm-api-yaml
# MTP for models that ship multi-token-prediction layers (DeepSeek-V3/R1).
speculative_config:
  decoding_type: MTP
  num_nextn_predict_layers: 3
