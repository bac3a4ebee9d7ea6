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
#     title: Draft/Target on TensorRT-LLM and Triton
#     track: 1.1.0
# ---

# %% [markdown]
# # Draft/Target on TensorRT-LLM and Triton
#
# *To run it:* [Run a GPU notebook in the container](../../index.md#run-a-gpu-notebook-in-the-container)
# (or `make test-gpu`, which runs every GPU notebook).
#
# A small model drafts `max_draft_len` tokens, the target checks them in one forward pass.
# Both models must use the same tokenizer: the draft's token ids are fed to the target as they
# are, so a draft with another vocabulary is accepted almost never (TensorRT-LLM's
# speculative-decoding page for 1.1.0 warns that the acceptance rate then collapses and
# performance regresses).
#
# On the PyTorch backend of TensorRT-LLM 1.1.0 both models run in one process: the draft is a
# second model (a "two-model" method), not the legacy engine workflow with a BLS model in
# front. Two-model methods do not support the overlap scheduler (TensorRT-LLM turns it off);
# upstream's examples set `disable_overlap_scheduler` explicitly, and so does this notebook.
#
# 1. A quick run on the container's default small model, TinyLlama-1.1B-Chat, drafting for
#    itself: nearly every draft token should be accepted (the draft is the target; only rounding
#    in a multi-token pass can part them), so it proves the wiring, not a speed-up.
# 2. A real pair: Llama-3.1-8B-Instruct with Llama-3.2-1B-Instruct as the draft (both use the
#    Llama 3 tokenizer; both are gated on Hugging Face, so set `HF_TOKEN`).
# 3. The same configuration for `trtllm-serve` and an OpenAI client.
# 4. Triton's `llmapi` model repository, curl, streaming and tritonclient.
# 5. What changes on TensorRT-LLM 1.2.1.
#
# This notebook needs one GPU with room for an 8B and a 1B model in bf16, about 19 GB of weights.

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
WORK = Path(os.environ.get("SPECDEC_WALK_DIR", "/tmp/specdec-walk")) / "draft_target"
WORK.mkdir(parents=True, exist_ok=True)
os.chdir(WORK)  # what the cells write (YAML, model repository, logs) goes here, not into the repository
# The guide's gRPC streaming client (run by the CPU tests against the stand-in), next to the other files.
shutil.copyfile(GUIDE / "snippets/triton/client_grpc_stream.py", WORK / "client_grpc_stream.py")

SMALL = "TinyLlama/TinyLlama-1.1B-Chat-v1.0"
TARGET = "meta-llama/Llama-3.1-8B-Instruct"
DRAFT = "meta-llama/Llama-3.2-1B-Instruct"
MAX_TOKENS = 64
PROMPT = "Explain in three short sentences why the sky is blue.\n"

# TensorRT-LLM 1.1.0 downloads a hub id given as the target (`model`), but not as the draft:
# speculative_model_dir must be a local directory there (hub download of drafts and heads came
# with PR #10099, in 1.2). So the drafts are downloaded first, to fixed paths that the YAML
# files and model.yaml below name.
from huggingface_hub import snapshot_download

SMALL_DIR = snapshot_download(SMALL, local_dir="/tmp/specdec-models/TinyLlama-1.1B-Chat-v1.0")
DRAFT_DIR = snapshot_download(DRAFT, local_dir="/tmp/specdec-models/Llama-3.2-1B-Instruct")

# %% language="bash"
# nvidia-smi -L
# python3 -c "import tensorrt_llm; print('tensorrt_llm', tensorrt_llm.__version__)"

# %% [markdown]
# ## 1. The wiring, on TinyLlama
#
# Baseline first: greedy decoding (no temperature, top-k or top-p), with per-request metrics,
# and the overlap scheduler off as in the Draft/Target run, so that the two differ only in
# speculation.

# %%
from tensorrt_llm import LLM, SamplingParams
from tensorrt_llm.llmapi import DraftTargetDecodingConfig

params = SamplingParams(max_tokens=MAX_TOKENS, return_perf_metrics=True)

llm = LLM(model=SMALL, disable_overlap_scheduler=True)
try:
    small_baseline = llm.generate([PROMPT], params)[0].outputs[0]
finally:
    llm.shutdown()
print(small_baseline.text)

# %% [markdown]
# In 1.1.0 the draft model's path is `speculative_model_dir` (later releases renamed it
# `speculative_model`; 1.1.0 rejects that name), and it is a local directory. Acceptance is
# measured as output tokens per target iteration from `llm.get_stats()`
# (`enable_iter_perf_stats`; iterations are counted, not `specDecodingStats`): the per-request counters read zero on 1.1.0
# ([why](../triton_cpu.md#4-requests)), so they are printed, not relied on. The output is compared by
# reporting where it first parts from the baseline, without failing on it: upstream's own
# Draft/Target test prints both texts and leaves its equality assertion commented out (its NGram
# and EAGLE-3 tests do assert 10-32 identical tokens).

# %%
from tensorrt_llm import LLM
from tensorrt_llm.llmapi import DraftTargetDecodingConfig

llm = LLM(model=SMALL, disable_overlap_scheduler=True, enable_iter_perf_stats=True,
          speculative_config=DraftTargetDecodingConfig(max_draft_len=4, speculative_model_dir=SMALL_DIR))
try:
    small_spec = llm.generate([PROMPT], params)[0].outputs[0]
    small_stats = llm.get_stats(timeout=2)
finally:
    llm.shutdown()
report_greedy("Draft/Target, TinyLlama drafting itself", small_baseline.token_ids, small_spec.token_ids)
check_accepted("Draft/Target, TinyLlama drafting itself", acceptance_from_stats(small_stats, len(small_spec.token_ids)))
metrics = small_spec.request_perf_metrics.speculative_decoding
per_request_counters("Draft/Target (LLM API)", metrics.total_draft_tokens, metrics.total_accepted_draft_tokens)

# %% [markdown]
# ## 2. A real pair: Llama-3.1-8B-Instruct drafted by Llama-3.2-1B-Instruct

# %%
from tensorrt_llm import LLM
from tensorrt_llm.llmapi import DraftTargetDecodingConfig

llm = LLM(model=TARGET, disable_overlap_scheduler=True)
try:
    baseline = llm.generate([PROMPT], params)[0].outputs[0]
finally:
    llm.shutdown()

llm = LLM(model=TARGET, disable_overlap_scheduler=True, enable_iter_perf_stats=True,
          speculative_config=DraftTargetDecodingConfig(max_draft_len=4, speculative_model_dir=DRAFT_DIR))
try:
    spec = llm.generate([PROMPT], params)[0].outputs[0]
    stats = llm.get_stats(timeout=2)
finally:
    llm.shutdown()
print(spec.text)

# %%
report_greedy("Draft/Target, 8B + 1B", baseline.token_ids, spec.token_ids)
check_accepted("Draft/Target, 8B + 1B", acceptance_from_stats(stats, len(spec.token_ids)))
metrics = spec.request_perf_metrics.speculative_decoding
per_request_counters("Draft/Target, 8B + 1B (LLM API)", metrics.total_draft_tokens, metrics.total_accepted_draft_tokens)

# %% [markdown]
# ## 3. `trtllm-serve` and an OpenAI client
#
# The same settings as a YAML file. The cell writes exactly the guide's
# `snippets/llm_api/1.1.0/draft_target.yaml` (a CPU test compares the two). The YAML value is
# `DraftTarget`; the Python class reports itself as `Draft_Target`, which the YAML
# dispatcher of 1.1.0 does not accept. The draft is the local directory downloaded above:
# 1.1.0 does not download a hub id given as `speculative_model_dir`.

# %%
# %%writefile draft_target.yaml
# specdec-guide: trtllm=1.1.0
# specdec-guide: llm-api-yaml
# Draft/Target, TensorRT-LLM 1.1.0: the YAML key is DraftTarget and the
# draft path key is speculative_model_dir. The draft must share the
# target's tokenizer, and on 1.1.0 it must be a local directory (a hub id
# is not downloaded): huggingface-cli download meta-llama/Llama-3.2-1B-Instruct
#   --local-dir /tmp/specdec-models/Llama-3.2-1B-Instruct
disable_overlap_scheduler: true
speculative_config:
  decoding_type: DraftTarget
  max_draft_len: 4
  speculative_model_dir: /tmp/specdec-models/Llama-3.2-1B-Instruct

# %% language="bash"
# nohup trtllm-serve meta-llama/Llama-3.1-8B-Instruct --backend pytorch \
#   --host 127.0.0.1 --port 8000 --extra_llm_api_options draft_target.yaml > serve.log 2>&1 &
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
# ## 4. Triton's `llmapi` model
#
# The guide's `draft_target` template with both models filled in, and the container's own
# `model.py`. Both models load inside the one Triton model; there is no BLS model in front
# and no per-request draft input: the draft length is the server's `max_draft_len`. The draft
# is the local directory from above (on 1.1.0 a hub id there is not downloaded).

# %% language="bash"
# specdec-guide repo render --method draft_target --engine trtllm \
#   --model meta-llama/Llama-3.1-8B-Instruct --draft-model /tmp/specdec-models/Llama-3.2-1B-Instruct \
#   --out repo_draft_target --force
# cat repo_draft_target/tensorrt_llm/1/model.yaml
# # The container's launcher starts tritonserver with --disable-auto-complete-config, so the
# # triton_config.decoupled of model.yaml never reaches Triton: config.pbtxt must state the policy
# # too. Newer renders write it; add it only where no line starts with it (a second block fails to parse).
# grep -q '^model_transaction_policy' repo_draft_target/tensorrt_llm/config.pbtxt || \
#   printf '\nmodel_transaction_policy {\n  decoupled: true\n}\n' >> repo_draft_target/tensorrt_llm/config.pbtxt
# grep -A2 '^model_transaction_policy' repo_draft_target/tensorrt_llm/config.pbtxt

# %% language="bash"
# python3 /app/scripts/launch_triton_server.py --model_repo "$PWD/repo_draft_target" --world_size 1

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
report_greedy("Draft/Target behind Triton", spec.text, triton["text_output"], unit="character")
per_request_counters("Draft/Target behind Triton", triton["total_draft_tokens"], triton["total_accepted_draft_tokens"])

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
# ## 5. On TensorRT-LLM 1.2.1
#
# TensorRT-LLM 1.2.1 (Triton 26.04 and later containers) renames the draft path to
# `speculative_model` and keeps `speculative_model_dir` as an alias, and it downloads a hub id
# given there (the same PR #10099), so the YAML below names the draft by hub id. The YAML value stays
# `DraftTarget`: the dispatcher in 1.2.1's `llm_args.py` knows `MTP`, `Medusa`, `Eagle`,
# `Lookahead`, `NGram`, `DraftTarget`, `SaveState`, `UserProvided` and `AUTO`, and nothing
# else. This cell is checked against the 1.2.1 snapshot; it writes the guide's
# `snippets/notebooks/05_draft_target/draft_target_1.2.1.yaml`.

# %%
# %%writefile draft_target_1.2.1.yaml
# specdec-guide: trtllm=1.2.1
# specdec-guide: llm-api-yaml
# Draft/Target on TensorRT-LLM 1.2.1: the YAML value is still DraftTarget (the
# 1.2.1 dispatcher has no Draft_Target key); the draft path is speculative_model,
# and speculative_model_dir is accepted as an alias.
disable_overlap_scheduler: true
speculative_config:
  decoding_type: DraftTarget
  max_draft_len: 4
  speculative_model: meta-llama/Llama-3.2-1B-Instruct
