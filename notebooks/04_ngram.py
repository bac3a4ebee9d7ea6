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
# 3. Triton's `llmapi` model repository, copied from the container's own and given the same
#    settings in its `model.yaml`, started with the container's `launch_triton_server.py`,
#    queried with curl and tritonclient, streaming included (with the decoupled policy written
#    into `config.pbtxt`).
#
# The check cells report where greedy output with NGram first parts from the baseline's (they
# fail only inside the first 10 tokens, the length upstream's own tests compare), and measure
# acceptance as output tokens per target iteration from the LLM's iteration statistics (they
# count iterations, not `specDecodingStats`, whose draft counts 1.1.0 leaves unfilled; see
# "Reading the numbers"): the per-request draft counters read zero on 1.1.0
# ([why](../triton_cpu.md#4-requests)), so they are printed, not relied on.
#
# Run it inside `nvcr.io/nvidia/tritonserver:25.12-trtllm-python-py3` on one NVIDIA GPU. It needs
# only the container: no clone of this guide, since the cells write every helper and file they use,
# and nothing installed except tritonclient, which the gRPC cell installs from PyPI when the
# container lacks it, into a folder of its own (`pylib`) so that the container's packages stay as shipped
# ([Run a GPU notebook in the container](../../index.md#run-a-gpu-notebook-in-the-container)
# shows how to open it there; `make test-gpu` runs every GPU notebook). The model
# is the container's default small model, TinyLlama-1.1B-Chat, downloaded from Hugging Face on
# first use.

# %%
import os
from pathlib import Path

WORK = Path(os.environ.get("SPECDEC_WALK_DIR", "/tmp/specdec-walk")) / "ngram"
WORK.mkdir(parents=True, exist_ok=True)
os.chdir(WORK)  # every file the cells write (YAML, model repository, client, logs) goes here

MODEL = "TinyLlama/TinyLlama-1.1B-Chat-v1.0"
MAX_TOKENS = 64
# A prompt whose answer repeats it: NGram finds its drafts in the prompt itself.
PROMPT = ("Rewrite this Python function with the variable `count` renamed to `total`.\n\n"
          "def add_all(xs):\n    count = 0\n    for x in xs:\n        count += x\n    return count\n\n"
          "Rewritten:\n")

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
# The model repository is the container's own `/app/all_models/llmapi` (its `config.pbtxt`,
# `model.py` and `helpers.py`), copied, with a `1/model.yaml` that holds the keys of the guide's
# NGram template. Every key of `model.yaml` except `triton_config` goes to `LLM(...)`, so the
# speculative settings are the ones above. The container's launcher starts `tritonserver` with
# `--disable-auto-complete-config`, so Triton reads only `config.pbtxt`, never `model.yaml`'s
# `triton_config`: the cell writes the same `max_batch_size` and decoupled policy into
# `config.pbtxt` where no line starts with them (a second one fails to parse).

# %% language="bash"
# set -euo pipefail
# rm -rf repo_ngram
# cp -R /app/all_models/llmapi repo_ngram
# cat > repo_ngram/tensorrt_llm/1/model.yaml <<'EOF'
# # TensorRT-LLM 1.1.0 llmapi model: every key except triton_config goes to tensorrt_llm.LLM(...).
# model: TinyLlama/TinyLlama-1.1B-Chat-v1.0
# backend: pytorch
# tensor_parallel_size: 1
# # NGram: max_matching_ngram_size must be set (> 0) in 1.1.0.
# speculative_config:
#   decoding_type: NGram
#   max_draft_len: 4
#   max_matching_ngram_size: 2
#   is_keep_all: true
#   is_use_oldest: true
#   is_public_pool: true
# disable_overlap_scheduler: true
# # Read by model.py, not passed to LLM; config.pbtxt states the same (below).
# triton_config:
#   max_batch_size: 0
#   decoupled: true
# EOF
# cat repo_ngram/tensorrt_llm/1/model.yaml
# grep -q '^max_batch_size' repo_ngram/tensorrt_llm/config.pbtxt || \
#   printf '\nmax_batch_size: 0\n' >> repo_ngram/tensorrt_llm/config.pbtxt
# grep -q '^model_transaction_policy' repo_ngram/tensorrt_llm/config.pbtxt || \
#   printf '\nmodel_transaction_policy {\n  decoupled: true\n}\n' >> repo_ngram/tensorrt_llm/config.pbtxt
# grep -A2 -E '^(max_batch_size|model_transaction_policy)' repo_ngram/tensorrt_llm/config.pbtxt

# %% [markdown]
# The container's launcher starts `tritonserver` in the background and returns: HTTP on 8000,
# gRPC on 8001, metrics on 8002. The cell sends the launcher's output, and so the server's, to
# `triton.log` (a bash cell ends only when every process it started has closed the cell's output,
# and the server never exits by itself), and writes the server's pid to `triton.pid`, so the wait
# below fails at once, with the log's end, if the server exits while loading. The launcher has no
# stop command; the last cell of this section stops the server.

# %% language="bash"
# # The launcher starts tritonserver (under mpirun) in the background and returns. All of them
# # write to triton.log: a bash cell ends only when every process it started has closed the cell's output.
# python3 /app/scripts/launch_triton_server.py --world_size 1 --model_repo "$PWD/repo_ngram" > triton.log 2>&1 \
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
# stated in `config.pbtxt` (the repository cell above made sure of it; behind the launcher
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
# ## What to take from it
#
# - The YAML for `trtllm-serve` and the `model.yaml` behind Triton hold the same keys as
#   `NGramDecodingConfig(...)`; the releases differ in spelling for other methods, not for
#   NGram (the page "Versions and keys" lists them).
# - NGram only pays when the output repeats something already in the sequence. Tokens per
#   target iteration (from `LLM.get_stats()` with `enable_iter_perf_stats`) show whether your
#   traffic does on 1.1.0, where the per-request counters read zero with TorchSampler;
#   the page "Choosing a method" says when it stops paying.
