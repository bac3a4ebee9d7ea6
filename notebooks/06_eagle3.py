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
#     title: EAGLE-3 on TensorRT-LLM and Triton
#     track: 1.1.0
# ---

# %% [markdown]
# # EAGLE-3 on TensorRT-LLM and Triton
#
# *To run it:* [Run a GPU notebook in the container](../../index.md#run-a-gpu-notebook-in-the-container)
# (or `make test-gpu`, which runs every GPU notebook).
#
# EAGLE-3 drafts with a small trained head that reads the target's own hidden states. It needs
# a head trained for that exact target: here `yuhuili/EAGLE3-LLaMA3.1-Instruct-8B` for
# `meta-llama/Llama-3.1-8B-Instruct` (the checkpoints from the EAGLE-3 authors that
# TensorRT-LLM's 1.1.0 docs point to for Llama 3). The container's default small model,
# TinyLlama, has no published EAGLE-3 head, so the quick run is the 8B model (about 16 GB of
# bf16 weights; one GPU). Llama-3.1-8B-Instruct is gated on Hugging Face: set `HF_TOKEN`.
#
# ## One model or two
#
# On the PyTorch backend of TensorRT-LLM 1.1.0 and 1.2.1, `decoding_type: Eagle` *is*
# EAGLE-3, in one of two implementations chosen by `eagle3_one_model`:
#
# - **one-model** (`eagle3_one_model: true`, the default in both releases' `llm_args.py`): the
#   head runs inside the target's forward pass, and the whole drafting loop can be one CUDA
#   graph. Faster, and compatible with the overlap scheduler; no dynamic draft length.
# - **two-model** (`eagle3_one_model: false`): the head is a separate draft model driven by
#   the executor. Two-model methods do not support the overlap scheduler (TensorRT-LLM turns
#   it off; the examples set `disable_overlap_scheduler: true`).
#
# The 1.1.0 and 1.2.1 speculative-decoding pages list one-model EAGLE-3 for Llama 4 Maverick
# and two-model EAGLE-3 for Llama 4 Maverick, Llama 3.1 8B and Llama 3.3 70B. One-model on
# Llama-3.1-8B is nonetheless what upstream's own accuracy tests run next to two-model
# (TensorRT-LLM `tests/integration/defs/accuracy/test_llm_api_pytorch.py`,
# `TestLlama3_1_8BInstruct::test_eagle3`, parametrised over `eagle3_one_model`, with this head;
# read in versions of the file not tied to the v1.1.0 tag), so the one-model YAML, template and
# Triton section below keep the release's default on this target. This notebook
# runs both on the 8B model and reports, for each, where its greedy output first parts from the
# baseline (failing only inside the first 10 tokens, what upstream's EAGLE-3 tests compare).
#
# **When two-model goes away.** Both 1.1.0 and 1.2.1 ship it without a warning; TensorRT-LLM's
# main branch has since deprecated it and then removed it, so no stable release has dropped
# two-model EAGLE-3 yet ([what the next line changes](../versions.md#what-the-next-line-changes)
# tells the history). The two-model cells below are for 1.1.0 and 1.2.1 only.

# %%
import os
import shutil
from pathlib import Path

import torch

from specdec_guide.background import post_json, stop, wait_ready
from specdec_guide.gpu_checks import acceptance_from_stats, check_accepted, per_request_counters, report_greedy
from specdec_guide.templates import templates_root

# The guide's checkout, found from the installed package (make test-gpu installs it editable),
# so the cell also works when re-run after the chdir below.
GUIDE = templates_root().parents[1]
WORK = Path(os.environ.get("SPECDEC_WALK_DIR", "/tmp/specdec-walk")) / "eagle3"
WORK.mkdir(parents=True, exist_ok=True)
os.chdir(WORK)  # what the cells write (YAML, model repository, logs) goes here, not into the repository
# The guide's gRPC streaming client (run by the CPU tests against the stand-in), next to the other files.
shutil.copyfile(GUIDE / "snippets/triton/client_grpc_stream.py", WORK / "client_grpc_stream.py")

TARGET = "meta-llama/Llama-3.1-8B-Instruct"
HEAD = "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"
MAX_TOKENS = 64
PROMPT = "Explain in three short sentences why the sky is blue.\n"
# Section 4 runs Llama-3.3-70B in bf16 split over two GPUs: about 70.6 GB of weights per card, plus the
# 70B head, the KV cache and activations. An 80 GB card (H100) would keep about 9 GB for all of that
# ("Choosing a method", what fits on 80 GB cards), so the run needs two cards of 120 GB or more each
# (H200: 141 GB); anything else skips it and says why.
MIN_GB_PER_GPU_70B = 120
GPU_GB = [torch.cuda.get_device_properties(i).total_memory / 1e9 for i in range(torch.cuda.device_count())]
TWO_GPUS = len(GPU_GB) >= 2 and min(GPU_GB[:2]) >= MIN_GB_PER_GPU_70B
if len(GPU_GB) < 2:
    SKIP_70B = f"skipped: this machine has {len(GPU_GB)} GPU(s), the 70B bf16 run needs two"
else:
    SKIP_70B = (f"skipped: the first two GPUs have {GPU_GB[0]:.0f} GB and {GPU_GB[1]:.0f} GB; the 70B bf16 run "
                f"needs {MIN_GB_PER_GPU_70B} GB or more on each (70.6 GB of weights per card at TP 2)")
os.environ["TWO_GPUS"] = "1" if TWO_GPUS else "0"
os.environ["SKIP_70B"] = SKIP_70B

# TensorRT-LLM 1.1.0 downloads a hub id given as the target (`model`), but not as the EAGLE-3
# head: speculative_model_dir must be a local directory there (hub download of drafts and heads
# came with PR #10099, in 1.2). The head is downloaded first, to the fixed path the YAML files
# and model.yaml below name.
from huggingface_hub import snapshot_download

HEAD_DIR = snapshot_download(HEAD, local_dir="/tmp/specdec-models/EAGLE3-LLaMA3.1-Instruct-8B")

# %% language="bash"
# nvidia-smi -L
# python3 -c "import tensorrt_llm; print('tensorrt_llm', tensorrt_llm.__version__)"

# %% [markdown]
# ## 1. The LLM API: baseline, two-model, one-model

# %%
from tensorrt_llm import LLM, SamplingParams

params = SamplingParams(max_tokens=MAX_TOKENS, return_perf_metrics=True)

llm = LLM(model=TARGET)
try:
    baseline = llm.generate([PROMPT], params)[0].outputs[0]
finally:
    llm.shutdown()
print(baseline.text)

# %% [markdown]
# Two-model, as the 1.1.0 docs list it for Llama 3.1 8B. In 1.1.0 the head's path is
# `speculative_model_dir` (1.2.1 renames it `speculative_model`), a local directory. Both runs
# keep iteration statistics (`enable_iter_perf_stats`): acceptance is measured as output tokens
# per target iteration (iterations counted, not `specDecodingStats`, which 1.1.0 keeps only for
# the two-model path), since the per-request counters read zero on 1.1.0 with TorchSampler
# (TensorRT-LLM PR #17082).

# %%
from tensorrt_llm import LLM
from tensorrt_llm.llmapi import EagleDecodingConfig

llm = LLM(model=TARGET, disable_overlap_scheduler=True, enable_iter_perf_stats=True,
          speculative_config=EagleDecodingConfig(max_draft_len=3, speculative_model_dir=HEAD_DIR,
                                                 eagle3_one_model=False))
try:
    two_model = llm.generate([PROMPT], params)[0].outputs[0]
    two_model_stats = llm.get_stats(timeout=2)
finally:
    llm.shutdown()

# %%
from tensorrt_llm import LLM
from tensorrt_llm.llmapi import EagleDecodingConfig

llm = LLM(model=TARGET, enable_iter_perf_stats=True,
          speculative_config=EagleDecodingConfig(max_draft_len=3, speculative_model_dir=HEAD_DIR,
                                                 eagle3_one_model=True))
try:
    one_model = llm.generate([PROMPT], params)[0].outputs[0]
    one_model_stats = llm.get_stats(timeout=2)
finally:
    llm.shutdown()

# %%
# The baseline runs with the overlap scheduler on, like one-model; two-model turns it off, so
# only the one-model comparison has the same settings and gets the 10-token check.
for name, out, stats, prefix in (("two-model", two_model, two_model_stats, 0),
                                 ("one-model", one_model, one_model_stats, 10)):
    report_greedy(f"EAGLE-3 {name}", baseline.token_ids, out.token_ids, exact_prefix=prefix)
    check_accepted(f"EAGLE-3 {name}", acceptance_from_stats(stats, len(out.token_ids)))
    m = out.request_perf_metrics.speculative_decoding
    per_request_counters(f"EAGLE-3 {name} (LLM API)", m.total_draft_tokens, m.total_accepted_draft_tokens)

# %% [markdown]
# ## 2. `trtllm-serve` and an OpenAI client
#
# One-model first: the cell writes exactly the guide's `snippets/llm_api/1.1.0/eagle3.yaml`.
# The YAML value is `Eagle`: 1.1.0 has no `Eagle3` key (its dispatcher answers
# `Invalid decoding type: Eagle3`). The head is the local directory downloaded above.

# %%
# %%writefile eagle3.yaml
# specdec-guide: trtllm=1.1.0
# specdec-guide: llm-api-yaml
# EAGLE-3, TensorRT-LLM 1.1.0: on the PyTorch backend decoding_type Eagle
# *is* EAGLE-3 (there is no Eagle3 key in this release). One-model mode is
# the default; the 1.1.0 feature table lists only two-model for Llama 3.1 8B,
# but upstream's accuracy tests run this head on it in both forms.
# The head must be a local directory on 1.1.0 (a hub id is not downloaded);
# fetch it with this one line:
# python3 -c "from huggingface_hub import snapshot_download as d; d('yuhuili/EAGLE3-LLaMA3.1-Instruct-8B', local_dir='/tmp/specdec-models/EAGLE3-LLaMA3.1-Instruct-8B')"
speculative_config:
  decoding_type: Eagle
  max_draft_len: 3
  speculative_model_dir: /tmp/specdec-models/EAGLE3-LLaMA3.1-Instruct-8B
  eagle3_one_model: true

# %% [markdown]
# The two-model file differs in two keys (`snippets/notebooks/06_eagle3/eagle3_two_model.yaml`).

# %%
# %%writefile eagle3_two_model.yaml
# specdec-guide: trtllm=1.1.0
# specdec-guide: llm-api-yaml
# EAGLE-3 two-model, TensorRT-LLM 1.1.0: the head runs as a separate draft
# model. Two-model speculation does not support the overlap scheduler, so it
# is turned off here. The head is a local directory (1.1.0 does not
# download a hub id here).
disable_overlap_scheduler: true
speculative_config:
  decoding_type: Eagle
  max_draft_len: 3
  speculative_model_dir: /tmp/specdec-models/EAGLE3-LLaMA3.1-Instruct-8B
  eagle3_one_model: false

# %% language="bash"
# nohup trtllm-serve meta-llama/Llama-3.1-8B-Instruct --backend pytorch \
#   --host 127.0.0.1 --port 8000 --extra_llm_api_options eagle3.yaml > serve.log 2>&1 &
# echo $! > serve.pid

# %%
wait_ready("http://127.0.0.1:8000/v1/models", pid_file="serve.pid")

# %%
from openai import OpenAI

client = OpenAI(base_url="http://127.0.0.1:8000/v1", api_key="not-used")
try:
    reply = client.completions.create(model=TARGET, prompt=PROMPT, max_tokens=MAX_TOKENS, temperature=0)
finally:
    stop("serve.pid")
print(reply.choices[0].text)
assert reply.choices[0].text.strip(), "trtllm-serve returned no text"

# %% [markdown]
# ## 3. Triton's `llmapi` model
#
# The guide's `eagle3` template (one-model, as the 1.1.0 default) with the target and the
# head filled in (the head as the local directory from above).

# %% language="bash"
# specdec-guide repo render --method eagle3 --engine trtllm \
#   --model meta-llama/Llama-3.1-8B-Instruct --draft-model /tmp/specdec-models/EAGLE3-LLaMA3.1-Instruct-8B \
#   --out repo_eagle3 --force
# cat repo_eagle3/tensorrt_llm/1/model.yaml
# # The container's launcher starts tritonserver with --disable-auto-complete-config, so the
# # triton_config.decoupled of model.yaml never reaches Triton: config.pbtxt must state the policy
# # too. Newer renders write it; add it only where no line starts with it (a second block fails to parse).
# grep -q '^model_transaction_policy' repo_eagle3/tensorrt_llm/config.pbtxt || \
#   printf '\nmodel_transaction_policy {\n  decoupled: true\n}\n' >> repo_eagle3/tensorrt_llm/config.pbtxt
# grep -A2 '^model_transaction_policy' repo_eagle3/tensorrt_llm/config.pbtxt

# %% language="bash"
# python3 /app/scripts/launch_triton_server.py --model_repo "$PWD/repo_eagle3" --world_size 1

# %%
wait_ready("http://127.0.0.1:8000/v2/models/tensorrt_llm/ready")

# %% language="bash"
# curl -sS --fail-with-body -X POST http://127.0.0.1:8000/v2/models/tensorrt_llm/generate \
#   -H 'Content-Type: application/json' \
#   -d '{"text_input": "Explain in three short sentences why the sky is blue.\n",
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
report_greedy("EAGLE-3 behind Triton", one_model.text, triton["text_output"], unit="character")
per_request_counters("EAGLE-3 behind Triton", triton["total_draft_tokens"], triton["total_accepted_draft_tokens"])

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
# # The launcher started tritonserver in the background; this container runs no other one.
# pkill -x tritonserver
# while pgrep -x tritonserver > /dev/null; do sleep 1; done
# echo "tritonserver stopped"

# %% [markdown]
# ## 4. Two GPUs: Llama-3.3-70B-Instruct with `tensor_parallel_size: 2`
#
# Where tensor parallelism matters: the 70B target does not fit one GPU (about 141 GB of bf16
# weights, so two GPUs with room for that plus the KV cache, e.g. two H200s; two H100s would
# keep about 9 GB per card besides the weights, too little, and FP8 or TP4 is the way there).
# The head is `yuhuili/EAGLE3-LLaMA3.3-Instruct-70B`; the 1.1.0 docs list Llama 3.3 70B under
# two-model EAGLE-3. With fewer than two GPUs, or two with less than 120 GB each, these cells
# say they were skipped and why. Behind Triton the same
# split is `tensor_parallel_size: 2` in `model.yaml` and `launch_triton_server.py --world_size 2`.

# %%
# %%writefile eagle3_70b.yaml
# specdec-guide: trtllm=1.1.0
# specdec-guide: llm-api-yaml
# EAGLE-3 for Llama-3.3-70B-Instruct, TensorRT-LLM 1.1.0, split over two GPUs
# (trtllm-serve --tp_size 2). The 1.1.0 docs list Llama 3.3 70B under the
# two-model implementation, which does not support the overlap scheduler.
# The head is a local directory (1.1.0 does not download a hub id here).
disable_overlap_scheduler: true
speculative_config:
  decoding_type: Eagle
  max_draft_len: 3
  speculative_model_dir: /tmp/specdec-models/EAGLE3-LLaMA3.3-Instruct-70B
  eagle3_one_model: false


# %%
def run_70b_on_two_gpus(prompt: str) -> None:
    from tensorrt_llm import LLM, SamplingParams
    from tensorrt_llm.llmapi import EagleDecodingConfig

    head_70b = snapshot_download("yuhuili/EAGLE3-LLaMA3.3-Instruct-70B",
                                 local_dir="/tmp/specdec-models/EAGLE3-LLaMA3.3-Instruct-70B")
    big_params = SamplingParams(max_tokens=MAX_TOKENS, return_perf_metrics=True)
    llm = LLM(model="meta-llama/Llama-3.3-70B-Instruct", tensor_parallel_size=2, disable_overlap_scheduler=True)
    try:
        base = llm.generate([prompt], big_params)[0].outputs[0]
    finally:
        llm.shutdown()
    llm = LLM(model="meta-llama/Llama-3.3-70B-Instruct", tensor_parallel_size=2, disable_overlap_scheduler=True,
              enable_iter_perf_stats=True,
              speculative_config=EagleDecodingConfig(max_draft_len=3, eagle3_one_model=False,
                                                     speculative_model_dir=head_70b))
    try:
        out = llm.generate([prompt], big_params)[0].outputs[0]
        stats = llm.get_stats(timeout=2)
    finally:
        llm.shutdown()
    report_greedy("EAGLE-3 70B, TP 2", base.token_ids, out.token_ids, exact_prefix=10)
    check_accepted("EAGLE-3 70B, TP 2", acceptance_from_stats(stats, len(out.token_ids)))


if TWO_GPUS:
    run_70b_on_two_gpus(PROMPT)
else:
    print(SKIP_70B)

# %% language="bash"
# if [ "$TWO_GPUS" != 1 ]; then echo "$SKIP_70B"; exit 0; fi
# nohup trtllm-serve meta-llama/Llama-3.3-70B-Instruct --backend pytorch --tp_size 2 \
#   --host 127.0.0.1 --port 8000 --extra_llm_api_options eagle3_70b.yaml > serve70.log 2>&1 &
# echo $! > serve70.pid

# %%
if TWO_GPUS:
    wait_ready("http://127.0.0.1:8000/v1/models", pid_file="serve70.pid", timeout_s=3600)
    try:
        reply = post_json("http://127.0.0.1:8000/v1/completions", {
            "model": "meta-llama/Llama-3.3-70B-Instruct", "prompt": PROMPT, "max_tokens": MAX_TOKENS,
            "temperature": 0})
    finally:
        stop("serve70.pid")
    print(reply["choices"][0]["text"])

# %% [markdown]
# ## 5. On TensorRT-LLM 1.2.1
#
# The head's key becomes `speculative_model` (`speculative_model_dir` stays an alias), and
# the YAML value stays `Eagle`: the dispatcher in 1.2.1's `llm_args.py` has no `Eagle3` key.
# (`decoding_type: Eagle3` was introduced on the main branch by PR #10124 and appears in the
# 1.3.0rc API reference, a line with no final release yet.) This cell is checked against the
# 1.2.1 snapshot; it
# writes the guide's `snippets/notebooks/06_eagle3/eagle3_1.2.1.yaml`.

# %%
# %%writefile eagle3_1.2.1.yaml
# specdec-guide: trtllm=1.2.1
# specdec-guide: llm-api-yaml
# EAGLE-3 on TensorRT-LLM 1.2.1: the YAML value is still Eagle (the 1.2.1
# dispatcher has no Eagle3 key); the head goes under speculative_model, and
# speculative_model_dir is accepted as an alias.
speculative_config:
  decoding_type: Eagle
  max_draft_len: 3
  speculative_model: yuhuili/EAGLE3-LLaMA3.1-Instruct-8B
  eagle3_one_model: true
