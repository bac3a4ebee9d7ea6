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
# (or `make test-gpu`, which runs every GPU notebook). It needs only the container its header
# names: no clone of this guide, since the cells write every helper and file they use, and nothing
# installed except tritonclient, which the gRPC cell installs from PyPI when the container lacks it,
# into a folder of its own (`pylib`) so that the container's packages stay as shipped.
#
# MTP drafts with extra prediction modules that the model was trained with and ships in its
# checkpoint, so it needs no separate draft model and no extra download. It also means MTP
# works only for models that have such modules: TensorRT-LLM 1.1.0's speculative-decoding page
# says MTP is supported only for DeepSeek (V3/R1) models.
#
# **Hardware.** No model that TensorRT-LLM 1.1.0 runs with MTP fits one H100. DeepSeek-R1 has
# 671 billion parameters and an MTP module of 11.5 billion more; even in FP8 (about one byte each)
# the weights alone, about 683 GB (636 GiB), all but fill eight H100s, whose "80 GB" are 80 GiB
# (640 GiB), before the CUDA context, the activations and the KV cache. TensorRT-LLM's
# deployment recipe for DeepSeek-R1-0528 (read in its 1.0.0 and
# 1.2.0rc2 versions, which agree; the 1.1.0 page itself was not read) runs it on
# eight Hopper or Blackwell GPUs with tensor and expert parallelism 8 (`--tp_size 8
# --ep_size 8`); with 141 GB (about 140 GiB) per GPU, eight H200s hold the FP8 checkpoint
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
from pathlib import Path

WORK = Path(os.environ.get("SPECDEC_WALK_DIR", "/tmp/specdec-walk")) / "mtp"
WORK.mkdir(parents=True, exist_ok=True)
os.chdir(WORK)  # every file the cells write (YAML, model repository, client, logs) goes here

MODEL = "deepseek-ai/DeepSeek-R1-0528"
MAX_TOKENS = 64
PROMPT = "What is 17 times 23? Answer with the number only.\n"

# %% [markdown]
# Two helper cells, written out here so that the notebook needs only the container (the standard
# library and the container's packages). The first waits for a server that a shell cell started in
# the background (`nohup ... &`, its pid in a file), stops it, and posts JSON to it: readiness is
# polled with a deadline (the default allows a first model download) and fails at once, naming the
# log, when the server has exited; an HTTP error carries the server's message.

# %%
import json
import os
import signal
import time
import urllib.error
import urllib.request
from pathlib import Path


def _pid(pid_file) -> int:
    text = Path(pid_file).read_text().strip()
    if not text.isdigit():
        raise RuntimeError(f"{pid_file}: expected a process id, got {text!r}")
    return int(text)


def alive(pid_file) -> bool:
    """Whether the process named in pid_file still runs (no file, or a zombie, counts as not)."""
    try:
        pid = _pid(pid_file)
    except (OSError, RuntimeError):
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def wait_ready(url: str, timeout_s: float = 900, pid_file=None, interval_s: float = 2.0) -> None:
    """Poll url until it answers HTTP 200; fail after timeout_s, or at once if pid_file's process exited."""
    deadline = time.monotonic() + timeout_s
    while True:
        if pid_file is not None and not alive(pid_file):
            raise RuntimeError(f"the server exited before {url} was ready (see {Path(pid_file).with_suffix('.log')})")
        try:
            with urllib.request.urlopen(url, timeout=5) as reply:
                if reply.status == 200:
                    return
        except OSError:  # not listening yet, or an HTTP error status (urllib's errors are OSErrors)
            pass
        if time.monotonic() >= deadline:
            raise RuntimeError(f"{url} was not ready after {timeout_s:g} s")
        time.sleep(interval_s)


def stop(pid_file, timeout_s: float = 60) -> None:
    """SIGTERM the process named in pid_file, wait until it is gone, SIGKILL it after timeout_s."""
    pid = _pid(pid_file)
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + timeout_s
    while alive(pid_file):
        if time.monotonic() >= deadline:
            os.kill(pid, signal.SIGKILL)
            return
        time.sleep(0.2)


def post_json(url: str, body: dict, timeout_s: float = 300) -> dict:
    """POST body as JSON and return the decoded answer; an HTTP error carries the server's message."""
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as reply:
            return json.loads(reply.read())
    except urllib.error.HTTPError as err:
        message = " ".join(err.read().decode(errors="replace").split())  # one line, whatever the server sent
        raise RuntimeError(f"POST {url}: HTTP {err.code}: {message}") from None

# %% [markdown]
# The second holds the checks run after each generation. `report_greedy` prints where an output
# first parts from the baseline's (token ids, or texts with `unit="character"`) and fails only inside
# the first `exact_prefix` tokens, for two runs with the same settings, as upstream's tests do.
# `acceptance_from_stats` counts the target iterations that scheduled the request (one request in
# flight) in `LLM.get_stats()`, and `check_accepted` fails unless there were more output tokens than
# iterations, i.e. unless drafts were accepted (`specDecodingStats` is added where the release fills
# it). `per_request_counters` prints the per-request draft counters as they came back: 1.1.0 and
# 1.2.1 leave them at zero with TorchSampler (TensorRT-LLM PR #17082). The CPU tests run these cells
# against the guide's own copy of the checks, so both measure the same way.

# %%
import json


def first_divergence(reference, other):
    """Index of the first item where the two differ (a length difference counts), or None."""
    for i, (a, b) in enumerate(zip(reference, other)):
        if a != b:
            return i
    return min(len(reference), len(other)) if len(reference) != len(other) else None


def report_greedy(name: str, reference, other, exact_prefix: int = 0, unit: str = "token"):
    """Print whether other kept the reference output, and where it first parted from it."""
    at = first_divergence(reference, other)
    if at is None:
        print(f"{name}: identical to the baseline over {len(reference)} {unit}s")
    else:
        ref_tok = reference[at] if at < len(reference) else "(end)"
        oth_tok = other[at] if at < len(other) else "(end)"
        print(f"{name}: first differs from the baseline at {unit} {at} of {len(reference)} "
              f"(baseline {ref_tok!r}, here {oth_tok!r}); the {unit}s before it are the same")
    if exact_prefix and at is not None and at < exact_prefix:
        raise AssertionError(f"{name}: differs from a run with the same settings within the first "
                             f"{exact_prefix} {unit}s (at {at}), where upstream's tests expect identity")
    return at


def acceptance_from_stats(stats, output_tokens: int) -> dict:
    """Iterations that scheduled the request (else: had an active one), and specDecodingStats where filled."""
    iterations = drafted = accepted = 0
    saw_spec = False
    for raw in stats:
        if isinstance(raw, str):
            try:
                raw = json.loads(raw)
            except ValueError:
                raw = {}
        stat = raw if isinstance(raw, dict) else {}
        scheduled = (stat.get("inflightBatchingStats") or {}).get("numScheduledRequests")
        if scheduled is None:
            scheduled = stat.get("numActiveRequests", 0)
        if scheduled:
            iterations += 1
        spec = stat.get("specDecodingStats")
        if isinstance(spec, dict) and "numDraftTokens" in spec:
            saw_spec = True
            drafted += int(spec.get("numDraftTokens") or 0)
            accepted += int(spec.get("numAcceptedTokens") or 0)
    return {"output_tokens": output_tokens, "iterations": iterations,
            "draft_tokens": drafted if saw_spec else None, "accepted_tokens": accepted if saw_spec else None}


def check_accepted(name: str, acceptance: dict) -> None:
    """Print the measure and fail unless the target took more than one token per iteration."""
    tokens, iterations = acceptance["output_tokens"], acceptance["iterations"]
    per_iteration = tokens / iterations if iterations else 0.0
    line = (f"{name}: {tokens} output tokens in {iterations} target iterations = "
            f"{per_iteration:.2f} tokens per iteration (measured from LLM.get_stats)")
    drafted, accepted = acceptance["draft_tokens"], acceptance["accepted_tokens"]
    if drafted:
        line += f"; specDecodingStats: {accepted} of {drafted} draft tokens accepted ({accepted / drafted:.2f})"
    print(line)
    if iterations == 0:
        raise AssertionError(f"{name}: LLM.get_stats() returned no iteration that scheduled the request "
                             "(was the LLM built with enable_iter_perf_stats=True, and read before shutdown?)")
    if per_iteration <= 1.0:
        raise AssertionError(f"{name}: {per_iteration:.2f} tokens per target iteration: no draft token was accepted")


def per_request_counters(name: str, drafted, accepted) -> None:
    """Print the per-request counters as they came back, and say what a zero means."""
    d, a = int(drafted or 0), int(accepted or 0)
    if d == 0 and a == 0:
        print(f"{name}: per-request counters read 0 drafted / 0 accepted. TensorRT-LLM PR #17082: "
              "1.1.0 and 1.2.1 leave them unfilled with TorchSampler; "
              "acceptance is measured from LLM.get_stats (notebooks 04-07) instead")
    else:
        print(f"{name}: per-request counters: {a} of {d} draft tokens accepted")
    if a > d:
        raise AssertionError(f"{name}: {a} accepted draft tokens out of {d} drafted")


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
# (iterations counted: 1.1.0 leaves the draft counts of `specDecodingStats` unfilled, see
# "Reading the numbers"), because the per-request counters read zero on 1.1.0 ([why](../triton_cpu.md#4-requests);
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
# The container's own `/app/all_models/llmapi` (its `config.pbtxt`, `model.py` and `helpers.py`),
# copied, with a `1/model.yaml` that holds the keys of the guide's `mtp` template and the
# parallelism (every key but `triton_config` goes to `LLM(...)`); one MPI rank per GPU comes from
# the launcher (`--world_size 8`). It sets `num_nextn_predict_layers: 1` where the template has 3,
# so that Triton drafts as the LLM API and `trtllm-serve` runs above did (one token a step).
#
# The container's launcher starts `tritonserver` with `--disable-auto-complete-config`, so Triton
# reads only `config.pbtxt`, never `model.yaml`'s `triton_config`: the cell writes the same
# `max_batch_size` and decoupled policy into `config.pbtxt` where no line starts with them (a
# second one fails to parse).

# %% language="bash"
# set -euo pipefail
# rm -rf repo_mtp
# cp -R /app/all_models/llmapi repo_mtp
# cat > repo_mtp/tensorrt_llm/1/model.yaml <<'EOF'
# # TensorRT-LLM 1.1.0 llmapi model: every key except triton_config goes to tensorrt_llm.LLM(...).
# model: deepseek-ai/DeepSeek-R1-0528
# backend: pytorch
# tensor_parallel_size: 8
# moe_expert_parallel_size: 8
# trust_remote_code: true
# # MTP: the model's own next-n prediction layers draft; max_draft_len follows num_nextn_predict_layers.
# # One module, as in the LLM API and trtllm-serve runs above (the guide's template uses 3).
# speculative_config:
#   decoding_type: MTP
#   num_nextn_predict_layers: 1
# # Read by model.py, not passed to LLM; config.pbtxt states the same (below).
# triton_config:
#   max_batch_size: 0
#   decoupled: true
# EOF
# cat repo_mtp/tensorrt_llm/1/model.yaml
# grep -q '^max_batch_size' repo_mtp/tensorrt_llm/config.pbtxt || \
#   printf '\nmax_batch_size: 0\n' >> repo_mtp/tensorrt_llm/config.pbtxt
# grep -q '^model_transaction_policy' repo_mtp/tensorrt_llm/config.pbtxt || \
#   printf '\nmodel_transaction_policy {\n  decoupled: true\n}\n' >> repo_mtp/tensorrt_llm/config.pbtxt
# grep -A2 -E '^(max_batch_size|model_transaction_policy)' repo_mtp/tensorrt_llm/config.pbtxt

# %% language="bash"
# # The launcher starts tritonserver (one process per rank, under mpirun) in the background and
# # returns. All of them write to triton.log: a bash cell ends only when every process it started
# # has closed the cell's output.
# python3 /app/scripts/launch_triton_server.py --world_size 8 --model_repo "$PWD/repo_mtp" > triton.log 2>&1 \
#   || { tail -n 40 triton.log; exit 1; }
# # The pid of the oldest tritonserver process, for the wait below: it fails at once if that process exits.
# for i in $(seq 60); do pgrep -o -x tritonserver > triton.pid && break; sleep 1; done
# test -s triton.pid || { echo "no tritonserver process after 60 s"; tail -n 40 triton.log; exit 1; }

# %%
# The server's log is triton.log: if the server exits while loading, the wait ends at once and prints the log's end.
try:
    wait_ready("http://127.0.0.1:8000/v2/models/tensorrt_llm/ready", pid_file="triton.pid", timeout_s=5400)
except RuntimeError:
    print("\n".join(Path("triton.log").read_text(errors="replace").splitlines()[-40:]))
    raise

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
# The same speculative settings (one MTP module), not the same LLM (other defaults): report where the texts part.
report_greedy("MTP behind Triton", spec.text, triton["text_output"], unit="character")
per_request_counters("MTP behind Triton", triton["total_draft_tokens"], triton["total_accepted_draft_tokens"])

# %% language="bash"
# curl -sS --fail-with-body -N -X POST http://127.0.0.1:8000/v2/models/tensorrt_llm/generate_stream \
#   -H 'Content-Type: application/json' \
#   -d '{"text_input": "List the first five prime numbers.\n",
#        "streaming": true,
#        "sampling_param_max_tokens": 32,
#        "sampling_param_exclude_input_from_output": true}'

# %% [markdown]
# The same stream over gRPC with tritonclient. The cell below writes the client: the guide's
# `snippets/triton/client_grpc_stream.py` as it is (a CPU test compares the two), which the CPU
# tests run against the CPU stand-in. Its last line carries the draft counters. The cell after it
# runs the client with the container's tritonclient, or, where the container has none, with one
# installed from PyPI into `pylib` (on `PYTHONPATH` for that command only).

# %%
# %%writefile client_grpc_stream.py
"""Stream one generation over gRPC with tritonclient. Needs a decoupled model (the templates are).

Each response is printed as one JSON line. On TensorRT-LLM 1.1.0 and 1.2.1 the llmapi model sends
one response with the whole text (per-step streaming came after 1.2.1, TensorRT-LLM PR #14079; its
responses each hold the whole text so far, not only the new piece). Because the request sets
sampling_param_return_perf_metrics, every response carries the speculative-decoding counters, as
strings, as the llmapi model sends them.
"""

import json
import os
import queue

import numpy as np
import tritonclient.grpc as grpcclient

URL = "localhost:" + os.environ.get("TRITON_GRPC_PORT", "8001")
MODEL = os.environ.get("TRITON_MODEL", "tensorrt_llm")
# The chat template of SmolLM2 (the llmapi model passes text_input as it is).
PROMPT = "<|im_start|>user\nWhat is the capital of France?<|im_end|>\n<|im_start|>assistant\n"


def scalar(name, value, triton_type, np_type):
    tensor = grpcclient.InferInput(name, [1], triton_type)
    tensor.set_data_from_numpy(np.array([value], dtype=np_type))
    return tensor


inputs = [
    scalar("text_input", PROMPT.encode(), "BYTES", np.object_),
    scalar("streaming", True, "BOOL", np.bool_),
    scalar("sampling_param_max_tokens", 32, "INT32", np.int32),
    scalar("sampling_param_exclude_input_from_output", True, "BOOL", np.bool_),
    scalar("sampling_param_return_perf_metrics", True, "BOOL", np.bool_),
]
METRICS = ("total_draft_tokens", "total_accepted_draft_tokens", "acceptance_rate")

responses = queue.Queue()
client = grpcclient.InferenceServerClient(URL)
client.start_stream(callback=lambda result, error: responses.put((result, error)))
try:
    # enable_empty_final_response: the server marks the end of the stream explicitly.
    client.async_stream_infer(MODEL, inputs, enable_empty_final_response=True)
    while True:
        result, error = responses.get(timeout=120)
        if error is not None:
            raise SystemExit(f"request failed: {error}")
        row = {}
        for name in ("text_output",) + METRICS:
            value = result.as_numpy(name)
            if value is not None:  # every output of the llmapi model arrives as bytes
                row[name] = value.reshape(-1)[0].decode()
        if row:
            print(json.dumps(row))
        if result.get_response().parameters["triton_final_response"].bool_param:
            break
finally:
    client.stop_stream()
    client.close()

# %% language="bash"
# # tritonclient: the container's, or else installed from PyPI into ./pylib, apart from the container's packages.
# PYTHONPATH="$PWD/pylib" python3 -c "import tritonclient.grpc" 2>/dev/null || \
#   python3 -m pip install --quiet --target "$PWD/pylib" "tritonclient[grpc]==2.73.0"
# PYTHONPATH="$PWD/pylib" TRITON_GRPC_PORT=8001 python3 client_grpc_stream.py

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
