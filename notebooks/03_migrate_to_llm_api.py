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
#     track: 1.1.0
#     title: Migrate the engine workflow to the LLM API
#     gpu: one NVIDIA H100 80 GB
# ---

# %% [markdown]
# # Migrate the engine workflow to the LLM API
#
# *To run it:* [Run a GPU notebook in the container](../../index.md#run-a-gpu-notebook-in-the-container)
# (or `make test-gpu`, which runs every GPU notebook). It needs only the container its header
# names: no clone of this guide and nothing installed, since the cells write every helper and file
# they use.
#
# The legacy notebook (02) built engines for Draft/Target and n-gram with the
# Vicuna-7B / Vicuna-68M pair. This notebook does the same two methods with the LLM API of the same container
# (TensorRT-LLM 1.1.0): no checkpoint conversion, no engine, no BLS. First in Python, then behind Triton's
# `llmapi` model, whose `model.yaml` takes the same keys. The [migration map](../migration.md) page
# has every flag and key, each row checked by the guide's CPU tests against the snapshots of both
# releases.
#
# Sources: the LLM API names come from the 1.1.0 snapshot in `src/specdec_guide/schemas/1.1.0/` (each entry
# names where it was read); the `llmapi` repository, its launch command and its request inputs from
# tensorrtllm_backend r25.12 `docs/llmapi.md` (**[llmapi]**). `disable_overlap_scheduler: true` for NGram and
# Draft/Target follows upstream's examples for these methods (research notes; the GPU run confirms it runs).

# %%
import os
import pathlib

from huggingface_hub import snapshot_download

WORK = pathlib.Path(os.environ.get("SPECDEC_WORK", "/tmp/specdec-legacy"))
TARGET = snapshot_download("lmsys/vicuna-7b-v1.3", local_dir=str(WORK / "hf" / "target"))
DRAFT = snapshot_download("double7/vicuna-68m", local_dir=str(WORK / "hf" / "draft"))
PROMPTS = ["Write the numbers from 1 to 30, comma separated:",
           "Repeat this list twice: alpha, beta, gamma, delta, epsilon."]

# %% [markdown]
# Two checks used below, written out here so that the notebook needs only the container.
# `report_greedy` prints where an output first parts from the baseline's (token ids, or texts with
# `unit="character"`); with `exact_prefix` it would fail inside the first tokens, which no cell here
# asks for. `per_request_counters` prints the per-request draft counters as they came back: 1.1.0 and
# 1.2.1 leave them at zero with TorchSampler (TensorRT-LLM PR #17082). They are the checks of
# notebooks 04 to 07; the CPU tests run these cells against the guide's own copy of them.

# %%
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
# ## The baseline, then Draft/Target, in Python
#
# Legacy: `--speculative_decoding_mode draft_tokens_external --max_draft_len 10` on the target engine, a second
# engine for the draft, and `num_draft_tokens` per BLS request. LLM API: one `DraftTargetDecodingConfig`, with
# the draft as a local Hugging Face checkpoint directory (`speculative_model_dir` in 1.1.0, which does not download
# a hub id there; `snapshot_download` above fetched it) and `max_draft_len` for the whole server. Greedy output
# should not change; with two prompts batched in flight and 64 tokens each, this is beyond what upstream's own tests
# assert (10 to 32 tokens, and they note that batching can part outputs), so the cells report the first token where
# each output parts from the baseline instead of failing on it.

# %%
from tensorrt_llm import LLM, SamplingParams
from tensorrt_llm.llmapi import DraftTargetDecodingConfig, KvCacheConfig, NGramDecodingConfig

GREEDY = SamplingParams(max_tokens=64, temperature=0.0)


def run(**kwargs) -> list:
    # The overlap scheduler is off in every run, the baseline included: the runs differ only in speculation.
    llm = LLM(model=TARGET, kv_cache_config=KvCacheConfig(free_gpu_memory_fraction=0.5),
              disable_overlap_scheduler=True, **kwargs)
    try:
        return [o.outputs[0] for o in llm.generate(PROMPTS, GREEDY)]
    finally:
        llm.shutdown()


baseline = run()
print([o.text for o in baseline])

# %%
dtm = run(speculative_config=DraftTargetDecodingConfig(max_draft_len=4, speculative_model_dir=DRAFT))
for i, (ref, out) in enumerate(zip(baseline, dtm)):
    report_greedy(f"Draft/Target, prompt {i}", ref.token_ids, out.token_ids)

# %% [markdown]
# ## n-gram
#
# Legacy: `examples/run.py --ngram_config "[4,2,[0]]"` against the `draft_tokens_external` engine. LLM API:
# `NGramDecodingConfig(max_draft_len=4, max_matching_ngram_size=2)`, served like any other method.

# %%
ngram = run(speculative_config=NGramDecodingConfig(max_draft_len=4, max_matching_ngram_size=2))
for i, (ref, out) in enumerate(zip(baseline, ngram)):
    report_greedy(f"NGram, prompt {i}", ref.token_ids, out.token_ids)

# %% [markdown]
# ## Behind Triton: the `llmapi` model
#
# The six `fill_template.py` calls of notebook 02's Draft/Target repository (one per model, the draft's copy
# included) become one `model.yaml` ([llmapi]): every key except
# `triton_config` goes to `LLM(...)` (the llmapi `model.py` as recorded in the 1.1.0 snapshot, `triton.yaml`,
# read at a commit not tied to 1.1.0). The repository is the container's `/app/all_models/llmapi` with our
# `model.yaml` in place of the shipped one.

# %%
# %%bash
# Source: [llmapi] ("cp -R .../all_models/llmapi/ llmapi_repo/"), inside the container under /app.
set -euo pipefail
rm -rf /tmp/specdec-legacy/llmapi_dtm && mkdir -p /tmp/specdec-legacy/v1.2.1/tensorrt_llm/1
cp -R /app/all_models/llmapi /tmp/specdec-legacy/llmapi_dtm
ls /tmp/specdec-legacy/llmapi_dtm/tensorrt_llm/1

# %%
# %%writefile /tmp/specdec-legacy/llmapi_dtm/tensorrt_llm/1/model.yaml
model: /tmp/specdec-legacy/hf/target
backend: pytorch
disable_overlap_scheduler: true
kv_cache_config:
  free_gpu_memory_fraction: 0.5
speculative_config:
  decoding_type: DraftTarget
  max_draft_len: 4
  speculative_model_dir: /tmp/specdec-legacy/hf/draft
triton_config:
  max_batch_size: 0
  decoupled: false

# %% [markdown]
# The same file for TensorRT-LLM 1.2.1 (a Triton 26.04+ container) differs in one key: the draft is
# `speculative_model`. The `decoding_type` stays `DraftTarget`: Triton's r26.05 guide writes `Draft_Target`, the
# class literal, which the 1.2.1 YAML loader does not accept (1.2.1 snapshot, read from the release's source). It is
# written here for comparison and checked against the 1.2.1 snapshot, not served by this container.

# %%
# %%writefile /tmp/specdec-legacy/v1.2.1/tensorrt_llm/1/model.yaml
# specdec-guide: trtllm=1.2.1
model: /tmp/specdec-legacy/hf/target
backend: pytorch
disable_overlap_scheduler: true
speculative_config:
  decoding_type: DraftTarget
  max_draft_len: 4
  speculative_model: /tmp/specdec-legacy/hf/draft
triton_config:
  max_batch_size: 0
  decoupled: false

# %%
# %%bash
# Source: [llmapi] (launch_triton_server.py --model_repo=llmapi_repo/). The launcher starts tritonserver under
# mpirun in the background and returns. All of them write to /tmp/specdec-legacy/triton.log: a bash cell ends
# only when every process it started has closed the cell's output.
python3 /app/scripts/launch_triton_server.py --model_repo=/tmp/specdec-legacy/llmapi_dtm \
  > /tmp/specdec-legacy/triton.log 2>&1 || { tail -n 40 /tmp/specdec-legacy/triton.log; exit 1; }
# The pid of the oldest tritonserver process, for the wait below: it fails at once if that process exits.
for i in $(seq 60); do pgrep -o -x tritonserver > /tmp/specdec-legacy/triton.pid && break; sleep 1; done
test -s /tmp/specdec-legacy/triton.pid || {
  echo "no tritonserver process after 60 s"; tail -n 40 /tmp/specdec-legacy/triton.log; exit 1; }

# %%
import json
import pathlib
import time
import urllib.request

TRITON_LOG = pathlib.Path("/tmp/specdec-legacy/triton.log")


def wait_ready(url: str, pid_file, timeout_s: float = 900.0) -> None:
    """Poll url until it answers HTTP 200; fail at once, with the log's end, if pid_file's process exited."""
    pid = int(pathlib.Path(pid_file).read_text())
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:  # the process state; a zombie ("Z") has exited too
            running = pathlib.Path(f"/proc/{pid}/stat").read_text().split(")", 1)[1].split()[0] != "Z"
        except (OSError, IndexError):
            running = False
        if not running:
            tail = TRITON_LOG.read_text(errors="replace").splitlines()[-40:]
            raise RuntimeError(f"tritonserver exited before {url} was ready; the end of {TRITON_LOG}:\n" + "\n".join(tail))
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(5)
    raise TimeoutError(f"tritonserver was not ready after {timeout_s:g} s (see {TRITON_LOG})")


wait_ready("http://127.0.0.1:8000/v2/models/tensorrt_llm/ready", pid_file="/tmp/specdec-legacy/triton.pid")
body = {"text_input": PROMPTS[0], "sampling_param_max_tokens": 64, "sampling_param_temperature": 0.0,
        "sampling_param_exclude_input_from_output": True, "sampling_param_return_perf_metrics": True}
req = urllib.request.Request("http://localhost:8000/v2/models/tensorrt_llm/generate",
                             data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
with urllib.request.urlopen(req, timeout=300) as r:
    out = json.loads(r.read())
print({k: out[k] for k in ("text_output", "total_draft_tokens", "total_accepted_draft_tokens", "acceptance_rate")})
# [llmapi]: the perf metrics come back as strings. On 1.1.0 with TorchSampler they read zero even when drafting ran
# (TensorRT-LLM PR #17082), so they are printed, not asserted; the notebooks 04-07 measure acceptance another way.
per_request_counters("Draft/Target behind Triton", out["total_draft_tokens"], out["total_accepted_draft_tokens"])
report_greedy("Draft/Target behind Triton", baseline[0].text, out["text_output"], unit="character")

# %%
# %%bash
pkill -x tritonserver || true
