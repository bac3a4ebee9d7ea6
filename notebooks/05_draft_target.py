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
# (or `make test-gpu`, which runs every GPU notebook). It needs only the container its header
# names: no clone of this guide, since the cells write every helper and file they use, and nothing
# installed except tritonclient, which the gRPC cell installs from PyPI when the container lacks it,
# into a folder of its own (`pylib`) so that the container's packages stay as shipped.
#
# A small model drafts `max_draft_len` tokens, the target checks them in one forward pass.
# Both models must use the same tokenizer: the draft's token ids are fed to the target as they
# are, so a draft with another vocabulary is accepted almost never (TensorRT-LLM's
# speculative-decoding page for 1.1.0 warns that the acceptance rate then collapses and
# performance regresses).
#
# On the PyTorch backend of TensorRT-LLM 1.1.0 both models run in one process: the draft is a
# second model (a "two-model" method), not the legacy engine workflow with a BLS model in
# front. The releases' pages say two-model methods cannot use the overlap scheduler; their code
# keeps it for Draft/Target (TensorRT-LLM PR #7651, read at 1.1.0rc6) and turns it off by itself
# only for NGram and user-provided drafters. Upstream's examples set `disable_overlap_scheduler`
# explicitly, and so does this notebook.
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
from pathlib import Path

WORK = Path(os.environ.get("SPECDEC_WALK_DIR", "/tmp/specdec-walk")) / "draft_target"
WORK.mkdir(parents=True, exist_ok=True)
os.chdir(WORK)  # every file the cells write (YAML, model repository, client, logs) goes here

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
# The container's own `/app/all_models/llmapi` (its `config.pbtxt`, `model.py` and `helpers.py`),
# copied, with a `1/model.yaml` that holds the keys of the guide's `draft_target` template and
# both models. Both models load inside the one Triton model; there is no BLS model in front
# and no per-request draft input: the draft length is the server's `max_draft_len`. The draft
# is the local directory from above (on 1.1.0 a hub id there is not downloaded).
#
# The container's launcher starts `tritonserver` with `--disable-auto-complete-config`, so Triton
# reads only `config.pbtxt`, never `model.yaml`'s `triton_config`: the cell writes the same
# `max_batch_size` and decoupled policy into `config.pbtxt` where no line starts with them (a
# second one fails to parse).

# %% language="bash"
# set -euo pipefail
# rm -rf repo_draft_target
# cp -R /app/all_models/llmapi repo_draft_target
# cat > repo_draft_target/tensorrt_llm/1/model.yaml <<'EOF'
# # TensorRT-LLM 1.1.0 llmapi model: every key except triton_config goes to tensorrt_llm.LLM(...).
# model: meta-llama/Llama-3.1-8B-Instruct
# backend: pytorch
# tensor_parallel_size: 1
# # Draft/Target on 1.1.0: the YAML value DraftTarget, the draft path speculative_model_dir (a local directory).
# speculative_config:
#   decoding_type: DraftTarget
#   max_draft_len: 4
#   speculative_model_dir: /tmp/specdec-models/Llama-3.2-1B-Instruct
# disable_overlap_scheduler: true
# # Read by model.py, not passed to LLM; config.pbtxt states the same (below).
# triton_config:
#   max_batch_size: 0
#   decoupled: true
# EOF
# cat repo_draft_target/tensorrt_llm/1/model.yaml
# grep -q '^max_batch_size' repo_draft_target/tensorrt_llm/config.pbtxt || \
#   printf '\nmax_batch_size: 0\n' >> repo_draft_target/tensorrt_llm/config.pbtxt
# grep -q '^model_transaction_policy' repo_draft_target/tensorrt_llm/config.pbtxt || \
#   printf '\nmodel_transaction_policy {\n  decoupled: true\n}\n' >> repo_draft_target/tensorrt_llm/config.pbtxt
# grep -A2 -E '^(max_batch_size|model_transaction_policy)' repo_draft_target/tensorrt_llm/config.pbtxt

# %% language="bash"
# # The launcher starts tritonserver (under mpirun) in the background and returns. All of them
# # write to triton.log: a bash cell ends only when every process it started has closed the cell's output.
# python3 /app/scripts/launch_triton_server.py --world_size 1 --model_repo "$PWD/repo_draft_target" > triton.log 2>&1 \
#   || { tail -n 40 triton.log; exit 1; }
# # The pid of the oldest tritonserver process, for the wait below: it fails at once if that process exits.
# for i in $(seq 60); do pgrep -o -x tritonserver > triton.pid && break; sleep 1; done
# test -s triton.pid || { echo "no tritonserver process after 60 s"; tail -n 40 triton.log; exit 1; }

# %%
# The server's log is triton.log: if the server exits while loading, the wait ends at once and prints the log's end.
try:
    wait_ready("http://127.0.0.1:8000/v2/models/tensorrt_llm/ready", pid_file="triton.pid")
except RuntimeError:
    print("\n".join(Path("triton.log").read_text(errors="replace").splitlines()[-40:]))
    raise

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
