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
# (or `make test-gpu`, which runs every GPU notebook). It needs only the container its header
# names: no clone of this guide, since the cells write every helper and file they use, and nothing
# installed except tritonclient, which the gRPC cell installs from PyPI when the container lacks it,
# into a folder of its own (`pylib`) so that the container's packages stay as shipped.
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
#   the executor. The releases' pages say two-model cannot use the overlap scheduler and turn it
#   off in their examples (`disable_overlap_scheduler: true`), as this notebook does; their code
#   runs two-model EAGLE-3 with it all the same (TensorRT-LLM PR #7651, read at 1.1.0rc6; with the
#   chain drafter the defaults select or the other draft loop, though a later statement about main,
#   issue #9421, names the chain drafter as the condition) and turns it off by itself only for
#   NGram and user-provided drafters.
#
# **This notebook's form on Llama-3.1-8B is two-model, on 1.1.0 and on 1.2.1**, because that is
# the form the releases' speculative-decoding pages support for this target: their tables list
# one-model EAGLE-3 for Llama 4 Maverick only
# and two-model EAGLE-3 for Llama 4 Maverick, Llama 3.1 8B and Llama 3.3 70B, and their EAGLE 3
# example sets `eagle3_one_model = False`
# (one-model is "for Llama 4"; 1.2.1's example names Llama-3.1-8B-Instruct). What that costs: the
# speed the pages credit one-model with, and the overlap scheduler as this guide runs it (off, as
# the pages' example sets it); the head gets a KV cache of its own. What it gives: `max_concurrency`
# is honoured (two-model methods only).
# One-model also runs on this target (1.2.1's LLM API example `llm_speculative_decoding.py` uses it
# with this head; 1.1.0's sets it too, with the head as a hub id, which 1.1.0 does not download;
# upstream's accuracy tests run both forms), but TensorRT-LLM
# issue #11125 reports garbled output from exactly that configuration on 1.2.0rc8 (whether its fix is
# in 1.2.1 was not confirmed). So the YAML, the template and the Triton section below use
# two-model, and this notebook runs one-model beside it on the 8B model; each run reports where
# its greedy output first parts from a baseline built with the same overlap-scheduler setting
# (failing only inside the first 10 tokens, what upstream's EAGLE-3 tests compare).
# Sources: the speculative-decoding pages of
# [1.1.0](https://nvidia.github.io/TensorRT-LLM/1.1.0/features/speculative-decoding.html) and
# [1.2.1](https://nvidia.github.io/TensorRT-LLM/1.2.1/features/speculative-decoding.html) and their
# LLM API examples; [#11125](https://github.com/NVIDIA/TensorRT-LLM/issues/11125); the weighing in
# full: [Versions and keys](../versions.md#eagle-3).
#
# **When two-model goes away.** Both 1.1.0 and 1.2.1 ship it without a warning; TensorRT-LLM's
# main branch has since deprecated it and then removed it, so no stable release has dropped
# two-model EAGLE-3 yet ([what the next line changes](../versions.md#what-the-next-line-changes)
# tells the history). The two-model cells and files below are for 1.1.0 and 1.2.1 only: on main an
# explicit `eagle3_one_model: false` is refused, and this target has only the one-model form there.

# %%
import os
from pathlib import Path

import torch

WORK = Path(os.environ.get("SPECDEC_WALK_DIR", "/tmp/specdec-walk")) / "eagle3"
WORK.mkdir(parents=True, exist_ok=True)
os.chdir(WORK)  # every file the cells write (YAML, model repository, client, logs) goes here

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
# ## 1. The LLM API: baseline, two-model, one-model

# %%
from tensorrt_llm import LLM, SamplingParams

params = SamplingParams(max_tokens=MAX_TOKENS, return_perf_metrics=True)

# Two baselines: two-model runs with the overlap scheduler off, one-model with it on, and each is
# compared with a run without speculation that has the same setting, as upstream's tests compare.
baselines = {}
for overlap_off in (True, False):
    llm = LLM(model=TARGET, disable_overlap_scheduler=overlap_off)
    try:
        baselines[overlap_off] = llm.generate([PROMPT], params)[0].outputs[0]
    finally:
        llm.shutdown()
baseline = baselines[True]
print(baseline.text)

# %% [markdown]
# Two-model, the form the 1.1.0 docs list for Llama 3.1 8B and this guide's files use. In 1.1.0 the head's path is
# `speculative_model_dir` (1.2.1 renames it `speculative_model`), a local directory. Both runs
# keep iteration statistics (`enable_iter_perf_stats`): acceptance is measured as output tokens
# per target iteration (iterations counted, not `specDecodingStats`, whose draft counts the 1.1.0
# executor leaves unfilled by the 1.1.0rc6 source: TensorRT-LLM PR #9855 fills them, after the 1.1
# line), since the per-request counters read zero on 1.1.0 with TorchSampler (TensorRT-LLM PR #17082).

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
# Each form against the baseline with its own overlap-scheduler setting: off for two-model, on for one-model.
for name, out, stats, reference in (("two-model", two_model, two_model_stats, baselines[True]),
                                    ("one-model", one_model, one_model_stats, baselines[False])):
    report_greedy(f"EAGLE-3 {name}", reference.token_ids, out.token_ids, exact_prefix=10)
    check_accepted(f"EAGLE-3 {name}", acceptance_from_stats(stats, len(out.token_ids)))
    m = out.request_perf_metrics.speculative_decoding
    per_request_counters(f"EAGLE-3 {name} (LLM API)", m.total_draft_tokens, m.total_accepted_draft_tokens)

# %% [markdown]
# ## 2. `trtllm-serve` and an OpenAI client
#
# The guide's form first: the cell writes exactly `snippets/llm_api/1.1.0/eagle3.yaml` (two-model).
# The YAML value is `Eagle`: 1.1.0 has no `Eagle3` key (its dispatcher answers
# `Invalid decoding type: Eagle3`). The head is the local directory downloaded above.

# %%
# %%writefile eagle3.yaml
# specdec-guide: trtllm=1.1.0
# specdec-guide: llm-api-yaml
# EAGLE-3, TensorRT-LLM 1.1.0: on the PyTorch backend decoding_type Eagle
# *is* EAGLE-3 (there is no Eagle3 key in this release). Two-model form:
# the 1.1.0 feature table lists Llama 3.1 8B under two-model EAGLE-3 only,
# and its EAGLE 3 example sets eagle3_one_model False (one-model "for
# Llama 4") with the overlap scheduler off, as this file does (the page
# says two-model cannot use it; the code, PR #7651, can).
# The head must be a local directory on 1.1.0 (a hub id is not downloaded);
# fetch it with this one line:
# python3 -c "from huggingface_hub import snapshot_download as d; d('yuhuili/EAGLE3-LLaMA3.1-Instruct-8B', local_dir='/tmp/specdec-models/EAGLE3-LLaMA3.1-Instruct-8B')"
disable_overlap_scheduler: true
speculative_config:
  decoding_type: Eagle
  max_draft_len: 3
  speculative_model_dir: /tmp/specdec-models/EAGLE3-LLaMA3.1-Instruct-8B
  eagle3_one_model: false

# %% [markdown]
# The one-model file, to try the other form (`snippets/notebooks/06_eagle3/eagle3_one_model.yaml`):
# `eagle3_one_model: true` and no `disable_overlap_scheduler`. Serve it the same way, with
# `--extra_llm_api_options eagle3_one_model.yaml`, and compare its greedy output with the target alone.

# %%
# %%writefile eagle3_one_model.yaml
# specdec-guide: trtllm=1.1.0
# specdec-guide: llm-api-yaml
# EAGLE-3 one-model, TensorRT-LLM 1.1.0: the head runs inside the target's
# forward pass, and the overlap scheduler stays on. The 1.1.0 feature table
# lists only two-model for Llama 3.1 8B; the release's LLM API example sets
# this form on it anyway (with the head as a hub id, which 1.1.0 does not
# download). Compare its greedy output with the target alone before you
# rely on it. The head is a local directory (1.1.0 does not download a hub
# id here).
speculative_config:
  decoding_type: Eagle
  max_draft_len: 3
  speculative_model_dir: /tmp/specdec-models/EAGLE3-LLaMA3.1-Instruct-8B
  eagle3_one_model: true

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
# The container's own `/app/all_models/llmapi` (its `config.pbtxt`, `model.py` and `helpers.py`),
# copied, with a `1/model.yaml` that holds the keys of the guide's `eagle3` template (two-model,
# with the overlap scheduler off, as above), the target and the head (the local directory from above).
#
# The container's launcher starts `tritonserver` with `--disable-auto-complete-config`, so Triton
# reads only `config.pbtxt`, never `model.yaml`'s `triton_config`: the cell writes the same
# `max_batch_size` and decoupled policy into `config.pbtxt` where no line starts with them (a
# second one fails to parse).

# %% language="bash"
# set -euo pipefail
# rm -rf repo_eagle3
# cp -R /app/all_models/llmapi repo_eagle3
# cat > repo_eagle3/tensorrt_llm/1/model.yaml <<'EOF'
# # TensorRT-LLM 1.1.0 llmapi model: every key except triton_config goes to tensorrt_llm.LLM(...).
# model: meta-llama/Llama-3.1-8B-Instruct
# backend: pytorch
# tensor_parallel_size: 1
# # EAGLE-3 on 1.1.0: the YAML value Eagle, two-model (the form 1.1.0's table lists for Llama 3.1 8B);
# # the head is a local directory.
# speculative_config:
#   decoding_type: Eagle
#   max_draft_len: 3
#   speculative_model_dir: /tmp/specdec-models/EAGLE3-LLaMA3.1-Instruct-8B
#   eagle3_one_model: false
# # The overlap scheduler off, as the release's EAGLE 3 example sets it for two-model.
# disable_overlap_scheduler: true
# # Read by model.py, not passed to LLM; config.pbtxt states the same (below).
# triton_config:
#   max_batch_size: 0
#   decoupled: true
# EOF
# cat repo_eagle3/tensorrt_llm/1/model.yaml
# grep -q '^max_batch_size' repo_eagle3/tensorrt_llm/config.pbtxt || \
#   printf '\nmax_batch_size: 0\n' >> repo_eagle3/tensorrt_llm/config.pbtxt
# grep -q '^model_transaction_policy' repo_eagle3/tensorrt_llm/config.pbtxt || \
#   printf '\nmodel_transaction_policy {\n  decoupled: true\n}\n' >> repo_eagle3/tensorrt_llm/config.pbtxt
# grep -A2 -E '^(max_batch_size|model_transaction_policy)' repo_eagle3/tensorrt_llm/config.pbtxt

# %% language="bash"
# # The launcher starts tritonserver (under mpirun) in the background and returns. All of them
# # write to triton.log: a bash cell ends only when every process it started has closed the cell's output.
# python3 /app/scripts/launch_triton_server.py --world_size 1 --model_repo "$PWD/repo_eagle3" > triton.log 2>&1 \
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
report_greedy("EAGLE-3 behind Triton", two_model.text, triton["text_output"], unit="character")
per_request_counters("EAGLE-3 behind Triton", triton["total_draft_tokens"], triton["total_accepted_draft_tokens"])

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
# two-model implementation; the overlap scheduler is off, as their EAGLE 3
# example sets it (the page says two-model cannot use it; PR #7651 can).
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
# 1.3.0rc API reference, a line with no final release yet.) The form stays two-model: 1.2.1's
# page lists Llama 3.1 8B under two-model EAGLE-3 only, and its EAGLE 3 example, on
# Llama-3.1-8B-Instruct, sets `eagle3_one_model = False` and `disable_overlap_scheduler=True`
# (1.2.1's feature-combination matrix marks two-model EAGLE-3 with the overlap scheduler as
# supported; the page says two-model cannot use it, and the file keeps it off). This cell is
# checked against the 1.2.1 snapshot; it writes the guide's
# `snippets/notebooks/06_eagle3/eagle3_1.2.1.yaml`.

# %%
# %%writefile eagle3_1.2.1.yaml
# specdec-guide: trtllm=1.2.1
# specdec-guide: llm-api-yaml
# EAGLE-3 on TensorRT-LLM 1.2.1: the YAML value is still Eagle (the 1.2.1
# dispatcher has no Eagle3 key); the head goes under speculative_model, and
# speculative_model_dir is accepted as an alias. Two-model, as 1.2.1's
# feature table lists it for Llama 3.1 8B, with the overlap scheduler off.
disable_overlap_scheduler: true
speculative_config:
  decoding_type: Eagle
  max_draft_len: 3
  speculative_model: yuhuili/EAGLE3-LLaMA3.1-Instruct-8B
  eagle3_one_model: false
