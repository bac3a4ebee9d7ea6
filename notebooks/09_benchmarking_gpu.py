# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   execution:
#     timeout: 14400
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
# **This notebook has not been run on a GPU yet.** It carries no outputs, and this guide quotes
# no figure from it. When you run it, it writes what it measured, and on what, into its work folder.
#
# The sweep for every method the guide teaches, against a baseline without speculation, at
# concurrency 1, 4, 16 and 64, on the Triton 25.12 TensorRT-LLM container (TensorRT-LLM 1.1.0):
#
# 1. **`trtllm-bench throughput`**: the engine alone, no HTTP in the way, with the acceptance figure
#    its report gives per method and concurrency (output tokens per decoding iteration, what it calls
#    an acceptance rate; its section says what it is and is not, and what is unconfirmed at 1.1.0);
# 2. **Triton's `llmapi` model**, the one the container ships, driven by a short client written
#    here (threads and `urllib` against `/v2/models/tensorrt_llm/generate`);
# 3. **the LLM API in Python**, for the one method no YAML file can carry: a user-provided drafter
#    (with its own two baselines, and NGram beside it, the built-in drafter of the same kind).
#
# | method | models (as in the method notebooks) | trtllm-bench | Triton `llmapi` | LLM API |
# | --- | --- | --- | --- | --- |
# | baseline | `meta-llama/Llama-3.1-8B-Instruct` | yes | yes | yes |
# | baseline, overlap scheduler off (`baseline_no_overlap`) | the same target, `disable_overlap_scheduler: true` | yes | yes | yes |
# | NGram ([04](04_ngram.ipynb)) | the same target, the keys of 04's `ngram.yaml` but a private pool | yes | yes | yes |
# | Draft/Target ([05](05_draft_target.ipynb)) | draft `meta-llama/Llama-3.2-1B-Instruct` | yes | yes | no |
# | EAGLE-3 ([06](06_eagle3.ipynb)) | head `yuhuili/EAGLE3-LLaMA3.1-Instruct-8B`, two-model | yes | yes | no |
# | user-provided ([the page](../user_provided.md)) | the prompt-lookup drafter of that page | **skipped** | **skipped** | yes |
# | MTP ([07](07_mtp.ipynb)) and its own baseline | `deepseek-ai/DeepSeek-R1-0528`, TP 8, EP 8 | eight GPUs | eight GPUs | no |
#
# Why the skips (the cell "What runs where" prints them again when it runs):
#
# - **user-provided** in trtllm-bench and behind Triton: the drafter is a Python object
#   (`UserProvidedDecodingConfig.drafter`), and both harnesses build their `LLM` from YAML
#   (trtllm-bench from `--extra_llm_api_options`, the `llmapi` model from `model.yaml`), which
#   cannot hold an object. So it is measured through the LLM API, at the same concurrencies.
# - **MTP** needs a model that ships MTP modules: on 1.1.0 only DeepSeek V3/R1. DeepSeek-R1 has
#   671 billion parameters and an MTP module of 11.5 billion more: in FP8 (a byte each) about 85 GB
#   (79.5 GiB) of weights per GPU over eight GPUs, all of an 80 GiB card (an H100, whose "80 GB" are
#   GiB) before the CUDA context, the activations and the KV cache: the MTP rows run only on eight
#   GPUs of 120 GiB or more each (H200s), otherwise the cells say they were skipped and why. MTP is
#   compared with DeepSeek-R1 without speculation, not with the 8B baseline.
#
# **How long it takes: not measured (the notebook has not run).** The single-GPU part loads the 8B
# target 29 times (20 trtllm-bench runs, one per method and level; 5 Triton servers; 4 LLM API
# runs), ten of them with a draft model or head beside it, after about 20 GB of downloads. Loading
# (weights from the cache, KV-cache sizing, CUDA graphs), not generating, sets the pace: at an
# estimated minute or two per load, expect roughly an hour to an hour and a half on one H100 before
# any MTP row. The trtllm-bench cell keeps the reports it already has when run again, and a method
# that fails there is recorded as skipped, with its log's last lines, instead of stopping the section.
#
# NGram runs here on the 8B target, not on TinyLlama as in 04 (the container's default model), so
# that every single-GPU method shares one target and one baseline. EAGLE-3 runs in the two-model
# form, the one 1.1.0's feature table lists for Llama 3.1 8B and the form of 06's `eagle3.yaml` and
# of the guide's template ([why](../versions.md#eagle-3)).
#
# **Two baselines: the overlap scheduler.** NGram, Draft/Target, two-model EAGLE-3 and the
# user-provided drafter run with `disable_overlap_scheduler: true`, as 04, 05, 06 and upstream's
# examples do; the baseline keeps 1.1.0's default, the overlap scheduler on, as MTP does. A speed-up
# over that baseline is what a method gains over the default deployment, and for those four methods
# it includes losing the overlap scheduler, not only the cost of checking drafts. So every harness
# also runs `baseline_no_overlap`, the target alone with the overlap scheduler off, and the results give each
# row two speed-ups: over `baseline`, and like for like, over the baseline with the same overlap
# setting (`baseline_no_overlap` for those four methods, `baseline` for the others). The table
# names the baseline of each.
#
# **It needs only the container.** No clone of this guide, nothing installed: the cells use the
# container's Python (its `tensorrt_llm`, `transformers`, `huggingface_hub`, PyYAML and, for the
# plot, matplotlib) and write every file they need. The only network use is the model downloads
# from Hugging Face; the Llama models are gated, so set `HF_TOKEN`. To open it in JupyterLab inside
# the container: [Run a GPU notebook in the container](../../index.md#run-a-gpu-notebook-in-the-container)
# (the notebook itself needs none of the guide's package that box installs).
#
# **Read the speed-ups within a harness.** Every harness gets the same prompts, the same output
# budget and the same speculative keys, but they count differently: trtllm-bench ignores the
# end-of-sequence token (`--eos_id -1`), so every request yields the full budget, while Triton and
# the LLM API stop at it or at the budget. Each speed-up is a method's output tokens/s over a
# baseline's (the one its column names) in the same harness, at the same concurrency, on the same
# model.

# %%
import json
import os
import subprocess
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from pathlib import Path

WORK = (Path(os.environ.get("SPECDEC_WALK_DIR", "/tmp/specdec-walk")) / "bench_gpu").resolve()  # absolute
WORK.mkdir(parents=True, exist_ok=True)
os.chdir(WORK)  # every file the cells write (prompts, YAML, model repositories, reports, results) goes here

TARGET = "meta-llama/Llama-3.1-8B-Instruct"
DRAFT = "meta-llama/Llama-3.2-1B-Instruct"  # Draft/Target, as in 05
HEAD = "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"  # EAGLE-3, as in 06
MTP_MODEL = "deepseek-ai/DeepSeek-R1-0528"  # MTP, as in 07
SHORT = {TARGET: "Llama-3.1-8B-Instruct", MTP_MODEL: "DeepSeek-R1-0528"}

CONCURRENCY = (1, 4, 16, 64)
OUTPUT_TOKENS = 128
WARMUP = 2  # requests before each sweep, discarded (trtllm-bench: --warmup 2)


def requests_for(c: int) -> int:
    """Requests per level: four waves of the concurrency, and at least 16."""
    return max(16, 4 * c)


SWEEP = [(c, requests_for(c)) for c in CONCURRENCY]
os.environ["SWEEP"] = " ".join(f"{c}:{n}" for c, n in SWEEP)  # the same levels for the shell cells
ROWS: dict = {}  # (harness, model, method, concurrency) -> one measured row
print("work folder:", WORK)
print("levels (concurrency: requests):", os.environ["SWEEP"])

# %% [markdown]
# ## The machine, recorded
#
# GPU names, driver and memory from `nvidia-smi`, the container's Triton version (its
# `NVIDIA_TRITON_SERVER_VERSION` variable), `tensorrt_llm.__version__` (read in a child process, so
# that this kernel loads TensorRT-LLM only for the LLM API section) and the date. They go into
# `provenance.json`, `results.json` and the plot. The MTP guard is decided here.
#
# The sweep needs the GPUs to itself. `gpu_free.py`, written here, polls
# `nvidia-smi --query-compute-apps=pid --format=csv,noheader` (and each GPU's used memory) every
# 2 s until no compute process is listed and the memory is back to what it was when this cell ran,
# or fails after 300 s listing the PIDs and the memory still held. The PIDs are those the driver
# reports: in a container with its own PID namespace they are the host's, and there `nvidia-smi`
# may list none at all, which is why the memory is compared as well.
#
# Its first run, here, records the idle memory, so it cannot compare with an earlier reading:
# besides no compute process, it asks that no GPU use more than `MARGIN_MIB` (1024 MiB), an absolute
# floor, since nothing of this notebook runs yet. Memory above it with no process listed is a process
# outside this kernel, perhaps hidden by the PID namespace (a `trtllm-serve` or `tritonserver` left
# by notebooks 04-07 or by an earlier run of this one; the launcher detaches `tritonserver`, so it
# outlives a kernel restart); the check fails naming it, and the cell also refuses to start while
# `pgrep -x tritonserver` finds one. Then it runs before each trtllm-bench run, before and after
# each Triton server and before and after each LLM API run: a server's engine lives in processes
# other than `tritonserver` itself (the Python backend's stub and the worker its `LLM` starts), an
# LLM API run's in the worker its `LLM` starts, and a failed run can leave a worker behind, any of
# which would otherwise hold memory the next run sizes its KV cache from. Its margin of 1024 MiB
# over idle leaves room for a CUDA context this kernel may hold once it has built an `LLM`.

# %%
# %%writefile gpu_free.py
"""Wait until no process holds a GPU; at the deadline, fail and list the PIDs that still do.

python3 gpu_free.py --record WHAT  wait until no compute process is listed and no GPU uses more than
                                   MARGIN_MIB (nothing of the notebook runs yet); store the used memory as idle
python3 gpu_free.py WHAT           wait until no compute process is listed and no GPU uses more than
                                   MARGIN_MIB over its idle memory (WHAT names the step, for the message)
"""
import json
import os
import subprocess
import sys
import time
from pathlib import Path

IDLE = Path(__file__).resolve().parent / "gpu_idle_mib.json"
MARGIN_MIB = 1024
TIMEOUT_S = float(os.environ.get("GPU_FREE_TIMEOUT_S", "300"))


def compute_pids() -> list[str]:
    out = subprocess.run(["nvidia-smi", "--query-compute-apps=pid", "--format=csv,noheader"],
                         capture_output=True, text=True, check=True).stdout
    return [line.strip() for line in out.splitlines() if line.strip()]


def used_mib() -> list[int]:
    out = subprocess.run(["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits"],
                         capture_output=True, text=True, check=True).stdout
    return [int(value) for value in out.split()]


def main(argv: list[str]) -> int:
    record = argv[:1] == ["--record"]
    what = " ".join(argv[1:] if record else argv) or "the next run"
    idle = None if record else json.loads(IDLE.read_text())
    started = time.monotonic()
    while True:
        pids, used = compute_pids(), used_mib()
        if record:  # no idle reading yet: an absolute floor
            held = [f"GPU {i} uses {u} MiB (more than {MARGIN_MIB} MiB before anything of this notebook runs)"
                    for i, u in enumerate(used) if u > MARGIN_MIB]
        else:
            held = [f"GPU {i} uses {u} MiB (idle: {base} MiB)" for i, (u, base) in enumerate(zip(used, idle))
                    if u > base + MARGIN_MIB]
        if not pids and not held:
            if record:
                IDLE.write_text(json.dumps(used) + "\n")
            print(f"{what}: GPUs free ({', '.join(f'{u} MiB' for u in used)} used)")
            return 0
        if time.monotonic() - started > TIMEOUT_S:
            hidden = held and not pids
            print(f"{what}: the GPUs are not free after {TIMEOUT_S:.0f} s. Compute processes nvidia-smi lists "
                  f"(PIDs as the driver reports them): {', '.join(pids) or 'none'}"
                  + (f"; {'; '.join(held)}" if held else "")
                  + (". With no process listed, a process outside this kernel holds that memory, perhaps hidden by "
                     "the container's PID namespace (look with: pgrep -a tritonserver; pgrep -af trtllm-)" if hidden else "")
                  + ". Stop them (from the host, if these are host PIDs) and run this cell again.", file=sys.stderr)
            return 1
        time.sleep(2)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

# %%
def gpu_free(*args: str) -> None:
    """gpu_free.py from Python: its message, or an error that carries what it says is left on the GPUs."""
    done = subprocess.run([sys.executable, "gpu_free.py", *args], capture_output=True, text=True)
    print(done.stdout, end="")
    if done.returncode:
        raise RuntimeError(done.stderr.strip() or f"gpu_free.py exited with {done.returncode}")


if subprocess.run(["pgrep", "-x", "tritonserver"], capture_output=True).returncode == 0:
    raise RuntimeError("a tritonserver already runs in this container (pgrep -a tritonserver shows it); stop it first")
gpu_free("--record", "before the sweep")
smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader,nounits"],
                     capture_output=True, text=True, check=True).stdout
GPUS = [dict(zip(("name", "driver", "memory_mib"), (f.strip() for f in line.split(",")))) for line in smi.strip().splitlines()]
trtllm_version = subprocess.run([sys.executable, "-c", "import tensorrt_llm; print(tensorrt_llm.__version__)"],
                                capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1]
PROVENANCE = {
    "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    "gpu": GPUS[0]["name"], "gpu_count": len(GPUS), "driver": GPUS[0]["driver"],
    "gpu_memory_mib": [int(g["memory_mib"]) for g in GPUS],
    "triton_server_version": os.environ.get("NVIDIA_TRITON_SERVER_VERSION", "not set"),
    "tensorrt_llm": trtllm_version,
    "models": {"target": TARGET, "draft": DRAFT, "eagle3_head": HEAD, "mtp": MTP_MODEL},
    "output_tokens": OUTPUT_TOKENS, "levels": [{"concurrency": c, "requests": n} for c, n in SWEEP],
}
Path("provenance.json").write_text(json.dumps(PROVENANCE, indent=2) + "\n")
print(json.dumps(PROVENANCE, indent=2))
if trtllm_version != "1.1.0":
    print(f"note: this notebook's keys are checked against TensorRT-LLM 1.1.0; this container has {trtllm_version}")

# MTP on DeepSeek-R1-0528: eight GPUs, each holding about 79.5 GiB of FP8 weights at TP 8 (the MTP module
# included), then the CUDA context, the activations and the KV cache. In GiB, as nvidia-smi's MiB: an H100 has 80.
MTP_MIN_GIB = 120
gib = [int(g["memory_mib"]) / 1024 for g in GPUS]
if len(GPUS) < 8:
    MTP_SKIP = f"this machine has {len(GPUS)} GPU(s); MTP on DeepSeek-R1-0528 needs eight (TP 8, EP 8)"
elif min(gib[:8]) < MTP_MIN_GIB:
    MTP_SKIP = (f"the smallest of the first eight GPUs has {min(gib[:8]):.0f} GiB; DeepSeek-R1-0528 puts about 79.5 GiB "
                f"of FP8 weights (its MTP module included) on each of eight GPUs, all of an 80 GiB card before the "
                f"CUDA context, activations and KV cache, so this notebook asks for {MTP_MIN_GIB} GiB or more each")
else:
    MTP_SKIP = ""
MTP_OK = not MTP_SKIP
os.environ["MTP_OK"] = "1" if MTP_OK else "0"
os.environ["MTP_SKIP"] = MTP_SKIP

# %% [markdown]
# ## What runs where
#
# Each skipped pair, with its reason. They are also stored in `results.json`.

# %%
NO_OBJECT_IN_YAML = ("UserProvidedDecodingConfig.drafter is a Python object (a Drafter instance), and {harness} "
                     "builds its LLM from YAML ({where}), which cannot hold one; measured through the LLM API instead")
SKIPPED = [
    {"harness": "trtllm-bench", "method": "user_provided", "reason": NO_OBJECT_IN_YAML.format(
        harness="trtllm-bench", where="--extra_llm_api_options")},
    {"harness": "triton", "method": "user_provided", "reason": NO_OBJECT_IN_YAML.format(
        harness="Triton's llmapi model", where="model.yaml: every key but triton_config goes to LLM(...)")},
]
if not MTP_OK:
    SKIPPED += [{"harness": h, "method": m, "reason": MTP_SKIP}
                for h in ("trtllm-bench", "triton") for m in ("mtp", "baseline (DeepSeek-R1-0528)")]
for s in SKIPPED:
    print(f"skipped: {s['method']} in {s['harness']}: {s['reason']}")

# %% [markdown]
# ## The results files, written as the sweep goes
#
# Every measured level becomes one row: harness, model, method, whether the method runs with the
# overlap scheduler, concurrency, requests, output tokens/s and tokens/s per user. Two speed-ups
# (the introduction says why): `speedup` over `baseline` (the overlap scheduler on, 1.1.0's
# default), and `speedup_like_for_like` over the baseline that `like_for_like_baseline` names, the
# one with the method's own overlap setting. The last two columns belong to trtllm-bench's rows
# only: `trtllm_bench_tokens_per_iteration`, output tokens per decoding iteration as trtllm-bench's
# report gives it (what it calls an acceptance rate; the section after the trtllm-bench runs says
# what it is and is not), and `trtllm_bench_acceptance_key`, the report key it was read from, or
# why there is none. `write_results()` rewrites `results.json` (the provenance, the skipped pairs,
# what each speed-up column divides by, what the acceptance column measures, what each trtllm-bench
# report holds of acceptance, the rows) and `results.csv` (the rows) from every row so far. The trtllm-bench section calls it once its reports are read,
# the Triton and LLM API sections after each run, so a failure later in the notebook keeps what was
# measured before it.

# %%
import csv
import math

OVERLAP_OFF = {"baseline_no_overlap", "ngram", "draft_target", "eagle3", "user_provided"}  # disable_overlap_scheduler: true
TPI, TPI_KEY = "trtllm_bench_tokens_per_iteration", "trtllm_bench_acceptance_key"
COLUMNS = ["harness", "model", "method", "overlap_scheduler", "concurrency", "requests", "output_tok_s",
           "tok_s_per_user", "speedup", "like_for_like_baseline", "speedup_like_for_like", TPI, TPI_KEY]
SPEEDUP_OVER = {
    "speedup": "baseline: the same model without speculation, overlap scheduler on (1.1.0's default)",
    "speedup_like_for_like": "the baseline in like_for_like_baseline: baseline_no_overlap (overlap scheduler off) "
                             "for the methods run with disable_overlap_scheduler: true, baseline for the others",
}
ACCEPTANCE_COLUMN = {
    TPI: "output tokens per decoding iteration as trtllm-bench's --report_json gives it (the target's own token "
         "included: 1.0 = no draft accepted, at most max_draft_len + 1, give or take the first token); what trtllm-bench calls its acceptance "
         "rate; NOT TensorRT-LLM's per-request acceptance_rate (accepted / drafted), which reads 0 on 1.1.0. "
         "trtllm-bench rows only. Computed so on TensorRT-LLM's main branch (PR #14724's diff); at 1.1.0 unconfirmed",
    TPI_KEY: "the report key the figure was read from (found by rule: the notebook's acceptance section), "
             "with the candidates refused before it, or why the row has none",
}
BENCH_ACCEPTANCE: list = []  # per trtllm-bench report: the acceptance figures it holds and its keys


def row(harness: str, model: str, method: str, c: int, requests: int, tok_s: float, per_user: float) -> None:
    ROWS[(harness, model, method, c)] = {
        "harness": harness, "model": SHORT[model], "method": method,
        "overlap_scheduler": "off" if method in OVERLAP_OFF else "on", "concurrency": c, "requests": requests,
        "output_tok_s": round(tok_s, 2), "tok_s_per_user": round(per_user, 2),
        TPI: None, TPI_KEY: "not read yet" if harness == "trtllm-bench" else "not a trtllm-bench row"}


def finite(value):
    """value with every non-finite float (NaN, infinity: strict JSON has none) dropped, as null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def write_results() -> list[dict]:
    """Both speed-ups of every row so far; results.json and results.csv rewritten with all rows."""
    for (harness, model, method, c), r in ROWS.items():
        r["like_for_like_baseline"] = "baseline_no_overlap" if method in OVERLAP_OFF else "baseline"
        for key, base_method in (("speedup", "baseline"), ("speedup_like_for_like", r["like_for_like_baseline"])):
            base = ROWS.get((harness, model, base_method, c))
            r[key] = round(r["output_tok_s"] / base["output_tok_s"], 3) if base and base["output_tok_s"] else None
    rows = sorted(ROWS.values(), key=lambda r: (r["harness"], r["model"], not r["method"].startswith("baseline"),
                                                r["method"], r["concurrency"]))
    Path("results.json").write_text(json.dumps(finite({"provenance": PROVENANCE, "skipped": SKIPPED,
                                                       "speedup_over": SPEEDUP_OVER,
                                                       "acceptance_column": ACCEPTANCE_COLUMN,
                                                       "trtllm_bench_acceptance": BENCH_ACCEPTANCE, "rows": rows}),
                                               indent=2, allow_nan=False) + "\n")
    with open("results.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    return rows

# %% [markdown]
# ## Drafts and heads, local
#
# TensorRT-LLM 1.1.0 downloads a hub id given as the target, but not as the draft model or the
# EAGLE-3 head: `speculative_model_dir` must be a local directory there (hub download came with
# TensorRT-LLM PR #10099, in 1.2). Both go to the paths 05 and 06 use, which the YAML below names.
# The targets are downloaded by trtllm-bench and by the `LLM` itself on first use.

# %%
from huggingface_hub import snapshot_download

DRAFT_DIR = snapshot_download(DRAFT, local_dir="/tmp/specdec-models/Llama-3.2-1B-Instruct")
HEAD_DIR = snapshot_download(HEAD, local_dir="/tmp/specdec-models/EAGLE3-LLaMA3.1-Instruct-8B")
print(DRAFT_DIR, HEAD_DIR, sep="\n")

# %% [markdown]
# ## One prompt set for every method and harness
#
# The code-editing and chat prompts of [the CPU benchmarking notebook](08_benchmarking.ipynb),
# written out here: code shown with the start of its edited version (the continuation repeats the
# prompt, where NGram and prompt lookup draft well) and open chat questions (little of the answer
# is in the prompt). Chat prompts go through the model's chat template, because the `llmapi` model
# and the LLM API pass the text to the model as it is. Where the template's text starts with the
# beginning-of-sequence token, the cell removes it: every harness encodes the text with special
# tokens and so adds one again (the LLM's `SamplingParams.add_special_tokens` is true by default;
# trtllm-bench calls the tokenizer with its defaults, as read in its `data.py` on a main-branch
# commit, not at the 1.1.0 tag).
#
# The same texts go to trtllm-bench as its dataset file (`task_id`, `prompt`, `output_tokens` per
# line, the schema of the 1.1.0 benchmarking page), cycled to the largest request count, and to the
# two clients in the same order. Output tokens of Triton's answers are counted with the same
# tokenizer (`transformers`, in the container).

# %%
from transformers import AutoTokenizer

CODE_EDITING = [
    "def average(values):\n    total = 0\n    for value in values:\n        total += value\n"
    "    if not values:\n        return 0.0\n    return total / len(values)\n\n"
    "# The same function with `total` renamed to `running_sum`:\ndef average(values):\n",
    "class Counter:\n    def __init__(self):\n        self.count = 0\n\n    def increment(self, step=1):\n"
    "        self.count += step\n        return self.count\n\n    def reset(self):\n        self.count = 0\n\n"
    "# The same class with `count` renamed to `value`:\nclass Counter:\n",
    "def read_names(path):\n    names = []\n    with open(path) as handle:\n        for line in handle:\n"
    "            names.append(line.strip())\n    return names\n\n"
    "# The same function, but it skips empty lines:\ndef read_names(path):\n",
]
CHAT = [
    "What should I pack for a weekend hiking trip in the mountains?",
    "Explain in simple words why the sky looks blue during the day.",
    "How do I make a simple tomato soup at home?",
]


def rendered(tokenizer) -> list[str]:
    """Code-editing prompts as plain text, chat prompts through the chat template, without a leading BOS."""
    out = list(CODE_EDITING)
    for question in CHAT:
        text = tokenizer.apply_chat_template([{"role": "user", "content": question}], tokenize=False,
                                             add_generation_prompt=True)
        if tokenizer.bos_token and text.startswith(tokenizer.bos_token):
            text = text[len(tokenizer.bos_token):]
        out.append(text)
    return out


TOKENIZERS = {TARGET: AutoTokenizer.from_pretrained(TARGET)}
if MTP_OK:
    TOKENIZERS[MTP_MODEL] = AutoTokenizer.from_pretrained(MTP_MODEL, trust_remote_code=True)
PROMPTS = {model: rendered(tok) for model, tok in TOKENIZERS.items()}
most = max(n for _, n in SWEEP)
for model, texts in PROMPTS.items():
    name = "llama" if model == TARGET else "deepseek"
    Path(f"prompts_{name}.json").write_text(json.dumps(texts, indent=2) + "\n")
    Path(f"dataset_{name}.jsonl").write_text("".join(
        json.dumps({"task_id": i, "prompt": texts[i % len(texts)], "output_tokens": OUTPUT_TOKENS}) + "\n"
        for i in range(most)))
    print(f"{SHORT[model]}: {len(texts)} prompts, dataset_{name}.jsonl with {most} lines")

# %% [markdown]
# ## The speculative settings
#
# One file per method, with the keys of the method notebooks on 1.1.0: trtllm-bench reads them
# with `--extra_llm_api_options`, and the `model.yaml` of each Triton repository below holds the
# same keys (a cell checks that it does). NGram: 04's keys (`max_matching_ngram_size` has no usable
# default on 1.1.0: set it), except `is_public_pool: false`. Draft/Target: the YAML value
# `DraftTarget` and the local draft.
# EAGLE-3: `decoding_type: Eagle` (1.1.0 has no `Eagle3` key), two-model (`eagle3_one_model: false`),
# the local head. The two-model methods turn the overlap scheduler off, as upstream's examples do.
# `baseline_no_overlap.yaml` turns it off without speculation: the like-for-like baseline of those
# methods.
#
# **Why NGram's pool is private here, unlike in 04.** With `is_public_pool: true` (04's key and
# 1.1.0's default) NGram keeps one pattern pool for all requests and never empties it while the
# `LLM` lives (read in `ngram.py` at a main-branch commit, 1.2.0rc3, not at the 1.1.0 tag). This
# sweep sends the same six prompts again and again with greedy decoding, so a later copy of a
# prompt could draft the answer an earlier copy produced: NGram would measure the replay of
# repeated traffic, not lookup within one sequence, and its curve would depend on the harness and
# the order of the runs (one pool for all levels behind Triton and in the LLM API, a fresh one for
# each trtllm-bench run). With `is_public_pool: false` each request drafts from its own prompt and
# output only, and its pool goes when it finishes: the same material the user-provided drafter
# drafts from.

# %%
# %%writefile baseline_no_overlap.yaml
# specdec-guide: trtllm=1.1.0
# specdec-guide: llm-api-yaml
# The target alone with the overlap scheduler off, as NGram, Draft/Target, two-model EAGLE-3 and
# the user-provided drafter run.
disable_overlap_scheduler: true

# %%
# %%writefile ngram.yaml
# specdec-guide: trtllm=1.1.0
# specdec-guide: llm-api-yaml
# NGram, notebook 04's keys (TensorRT-LLM 1.1.0) but a private pool: is_public_pool false (see above).
disable_overlap_scheduler: true
speculative_config:
  decoding_type: NGram
  max_draft_len: 4
  max_matching_ngram_size: 2
  is_keep_all: true
  is_use_oldest: true
  is_public_pool: false

# %%
# %%writefile draft_target.yaml
# specdec-guide: trtllm=1.1.0
# specdec-guide: llm-api-yaml
# Draft/Target, the keys of notebook 05: the draft is a local directory on 1.1.0.
disable_overlap_scheduler: true
speculative_config:
  decoding_type: DraftTarget
  max_draft_len: 4
  speculative_model_dir: /tmp/specdec-models/Llama-3.2-1B-Instruct

# %%
# %%writefile eagle3.yaml
# specdec-guide: trtllm=1.1.0
# specdec-guide: llm-api-yaml
# EAGLE-3 two-model, the keys of notebook 06: the head is a local directory on 1.1.0.
disable_overlap_scheduler: true
speculative_config:
  decoding_type: Eagle
  max_draft_len: 3
  speculative_model_dir: /tmp/specdec-models/EAGLE3-LLaMA3.1-Instruct-8B
  eagle3_one_model: false

# %% [markdown]
# DeepSeek-R1 without and with MTP: 07's speculative keys (one MTP module drafts one token), and
# `trust_remote_code`, which 07 gives `LLM(...)` and `trtllm-serve` and trtllm-bench takes from the
# file. They are written on any machine and used only where MTP runs.

# %%
# %%writefile deepseek_r1.yaml
# specdec-guide: trtllm=1.1.0
# specdec-guide: llm-api-yaml
# DeepSeek-R1-0528 without speculation: the MTP rows' baseline.
trust_remote_code: true

# %%
# %%writefile mtp_deepseek_r1.yaml
# specdec-guide: trtllm=1.1.0
# specdec-guide: llm-api-yaml
# MTP on DeepSeek-R1-0528, the keys of notebook 07; eight GPUs (--tp 8 --ep 8).
trust_remote_code: true
speculative_config:
  decoding_type: MTP
  num_nextn_predict_layers: 1

# %% [markdown]
# ## 1. `trtllm-bench throughput`
#
# One run per method and level; each run loads the model again. The flags are those of the 1.1.0
# `trtllm-bench` page: `--model` before the subcommand, then `--backend`, `--dataset`,
# `--num_requests` (the first N lines of the dataset), `--concurrency`, `--warmup`, `--eos_id -1`
# (end-of-sequence off: each request yields its `output_tokens`), `--extra_llm_api_options`,
# `--report_json`. A run's log goes to `bench/<llama or deepseek>_<method>_c<concurrency>.log`.
# Reports already in `bench/` are kept and their runs not repeated (delete `bench/` to measure
# everything again). A failing run prints the log's last lines, marks the method
# (`bench/<llama or deepseek>_<method>.failed`, with the concurrency) and skips its remaining levels;
# the other methods still run, and the reading cell records the method as skipped with that tail.
# Before each run the cell waits for the GPUs to be free (`gpu_free.py`, above): a worker left
# behind by an earlier run fails that check, with its PID, and stops the cell, instead of shrinking
# the next run's KV cache. `baseline_no_overlap` is the target alone with the options file that
# turns the overlap scheduler off. This cell holds most of the single-GPU time (20 of the 29 loads).

# %% language="bash"
# set -euo pipefail
# mkdir -p bench
# failed=""
# for method in baseline baseline_no_overlap ngram draft_target eagle3; do
#   rm -f "bench/llama_$method.failed"
#   options=()
#   if [ "$method" != baseline ]; then options=(--extra_llm_api_options "$method.yaml"); fi
#   for level in $SWEEP; do
#     c=${level%:*}
#     n=${level#*:}
#     out="bench/llama_${method}_c$c"
#     if [ -s "$out.json" ]; then echo "trtllm-bench $method, concurrency $c: kept $out.json"; continue; fi
#     python3 gpu_free.py "before trtllm-bench $method, concurrency $c"
#     if trtllm-bench --model meta-llama/Llama-3.1-8B-Instruct throughput --backend pytorch \
#         --dataset dataset_llama.jsonl --num_requests "$n" --concurrency "$c" --warmup 2 --eos_id -1 \
#         "${options[@]}" --report_json "$out.json" > "$out.log" 2>&1; then
#       echo "trtllm-bench $method, concurrency $c, $n requests: $out.json"
#     else
#       rm -f "$out.json"
#       echo "FAILED: trtllm-bench $method, concurrency $c; the last lines of $out.log:"
#       tail -n 40 "$out.log"
#       echo "$c" > "bench/llama_$method.failed"
#       failed="$failed $method"
#       break
#     fi
#   done
# done
# if [ -n "$failed" ]; then echo "failed, recorded as skipped by the reading cell:$failed"; fi

# %% [markdown]
# MTP and its baseline on DeepSeek-R1-0528, tensor and expert parallelism 8 (`--tp 8 --ep 8`),
# only where the GPU check above allowed it.

# %% language="bash"
# set -euo pipefail
# if [ "$MTP_OK" != 1 ]; then echo "skipped: MTP and its baseline in trtllm-bench: $MTP_SKIP"; exit 0; fi
# mkdir -p bench
# failed=""
# for method in baseline mtp; do
#   rm -f "bench/deepseek_$method.failed"
#   options=deepseek_r1.yaml
#   if [ "$method" = mtp ]; then options=mtp_deepseek_r1.yaml; fi
#   for level in $SWEEP; do
#     c=${level%:*}
#     n=${level#*:}
#     out="bench/deepseek_${method}_c$c"
#     if [ -s "$out.json" ]; then echo "trtllm-bench $method (DeepSeek-R1-0528), concurrency $c: kept $out.json"; continue; fi
#     python3 gpu_free.py "before trtllm-bench $method (DeepSeek-R1-0528), concurrency $c"
#     if trtllm-bench --model deepseek-ai/DeepSeek-R1-0528 throughput --backend pytorch --tp 8 --ep 8 \
#         --dataset dataset_deepseek.jsonl --num_requests "$n" --concurrency "$c" --warmup 2 --eos_id -1 \
#         --extra_llm_api_options "$options" --report_json "$out.json" > "$out.log" 2>&1; then
#       echo "trtllm-bench $method (DeepSeek-R1-0528), concurrency $c, $n requests: $out.json"
#     else
#       rm -f "$out.json"
#       echo "FAILED: trtllm-bench $method (DeepSeek-R1-0528), concurrency $c; the last lines of $out.log:"
#       tail -n 40 "$out.log"
#       echo "$c" > "bench/deepseek_$method.failed"
#       failed="$failed $method"
#       break
#     fi
#   done
# done
# if [ -n "$failed" ]; then echo "failed, recorded as skipped by the reading cell:$failed"; fi

# %% [markdown]
# The reports, read into the table. The keys (`performance.system_output_throughput_tok_s`, the
# output tokens of all requests over the run's wall time; `performance.output_throughput_per_user_tok_s`,
# the average of each request's output tokens over its latency; `request_info.num_requests`) were
# read in trtllm-bench's `reporting.py` at two main-branch commits (one of them 1.2.0rc3), not at
# the 1.1.0 tag. If this container's report names either `performance` key otherwise, the cell
# stops and lists the keys the report has; a report without `request_info.num_requests` gets the
# requested count in the `requests` column, and its printed line says `requested, not reported`.
# A method the runs above marked as failed is recorded as skipped (in the list of skipped pairs and
# in `results.json`), with the concurrency it failed at and its log's last lines; the levels it
# measured before that are read. The rows so far go to `results.json` and `results.csv` at the end
# of the cell.

# %%
BENCH = [(TARGET, "llama", m) for m in ("baseline", "baseline_no_overlap", "ngram", "draft_target", "eagle3")]
if MTP_OK:
    BENCH += [(MTP_MODEL, "deepseek", m) for m in ("baseline", "mtp")]
SKIPPED[:] = [s for s in SKIPPED if not s.get("failed_at")]  # this cell records the failed runs afresh
for key in [k for k in ROWS if k[0] == "trtllm-bench"]:
    del ROWS[key]
for model, prefix, method in BENCH:
    name = method if model == TARGET else f"{method} ({SHORT[model]})"
    for c, n in SWEEP:
        path = Path(f"bench/{prefix}_{method}_c{c}.json")
        if not path.is_file():
            continue  # failed or not run: recorded below
        report = json.loads(path.read_text())
        perf = report.get("performance") or {}
        if "system_output_throughput_tok_s" not in perf or "output_throughput_per_user_tok_s" not in perf:
            raise KeyError(f"{path}: no performance.system_output_throughput_tok_s / output_throughput_per_user_tok_s; "
                           f"this trtllm-bench reports {sorted(perf)}")
        reported = (report.get("request_info") or {}).get("num_requests")
        done = reported if reported is not None else n
        row("trtllm-bench", model, method, c, done, perf["system_output_throughput_tok_s"],
            perf["output_throughput_per_user_tok_s"])
        print(f"trtllm-bench {SHORT[model]} {method:19} c={c:<3} {done:4} requests"
              f"{'' if reported is not None else ' (requested, not reported)'}  "
              f"{perf['system_output_throughput_tok_s']:9.1f} tok/s  {perf['output_throughput_per_user_tok_s']:8.1f} tok/s/user")
    marker = Path(f"bench/{prefix}_{method}.failed")
    missing = [c for c, _ in SWEEP if not Path(f"bench/{prefix}_{method}_c{c}.json").is_file()]
    if marker.is_file():
        at = marker.read_text().strip()
        log = Path(f"bench/{prefix}_{method}_c{at}.log")
        tail = log.read_text(errors="replace").splitlines()[-40:] if log.is_file() else ["(no log)"]
        SKIPPED.append({"harness": "trtllm-bench", "method": name, "failed_at": int(at),
                        "reason": f"trtllm-bench failed at concurrency {at} (levels not measured: "
                                  f"{', '.join(map(str, missing))}); the last lines of {log}", "log_tail": tail})
        print(f"skipped: {name} in trtllm-bench from concurrency {at}: it failed; the last lines of {log}:",
              *tail, sep="\n  ")
    elif missing:
        print(f"not run: {name} in trtllm-bench at concurrency {', '.join(map(str, missing))} (no report, no failure "
              "recorded: run the trtllm-bench cell again)")
write_results()
print("written:", WORK / "results.json", WORK / "results.csv", sep="\n  ")

# %% [markdown]
# ### trtllm-bench's acceptance figure, per method and concurrency
#
# The acceptance figure each run's report gives, read from the same `--report_json` files: one per
# method and concurrency, for the whole run at that level (every request of it, not one batch or one
# iteration). It goes into the column `trtllm_bench_tokens_per_iteration` of `results.json` and
# `results.csv`, with the report key it came from in `trtllm_bench_acceptance_key`; the Triton and
# LLM API rows have no figure there (their key column says they are not trtllm-bench rows).
#
# **What it is (read on main, not at 1.1.0): output tokens per decoding iteration, the target's own
# token included.** trtllm-bench calls it an acceptance rate, but on TensorRT-LLM's main branch (as
# of May 2026) it computes the run's figure as the output tokens of all requests divided by their
# decoding iterations (the line that TensorRT-LLM PR #14724, closed unmerged, proposed to replace;
# PR #6476, August 2025, added the detailed speculative figures of trtllm-bench for the PyTorch
# backend, which every run here uses).
# The guide's field note [trtllm-bench's 'acceptance rate' is tokens per iteration](../field_notes.md#trtllm_bench_acceptance_reporting)
# has the history (its confidence: likely). So 1.0 means no draft was accepted, and no run can pass
# max_draft_len + 1: 5 for NGram and Draft/Target here, 4 for EAGLE-3, 2 for MTP.
#
# **What it is not.** Not TensorRT-LLM's per-request `acceptance_rate` (accepted drafts over drafted
# ones, with `return_perf_metrics`), which reads 0 on 1.1.0 ([why](../triton_cpu.md#4-requests)).
# Not a draft acceptance rate either: (figure - 1) / max_draft_len equals accepted over drafted
# only where every iteration proposes max_draft_len drafts, which NGram does not when the tail of a
# sequence has no earlier match. And not a figure of the Triton or LLM API runs.
#
# **Unconfirmed at 1.1.0.** Neither trtllm-bench's report code nor the 1.1.0 benchmarking and
# `trtllm-bench` pages were read at 1.1.0 for this section. That 1.1.0 computes the figure as tokens
# per iteration is likely (the field note's reading, on main) but not checked; and which section and
# key of a 1.1.0 report hold it is not known here, so the cell names no key. It finds the figure by
# rule, in every report:
#
# - an entry whose name has `accept` in it, anywhere in the report, but not `draft` (a draft
#   acceptance rate is accepted over drafted, another measure) and not a count (`num_...`,
#   `total_...`): a number as it stands, or the `average` (`mean`, `avg`) of a block of percentiles,
#   which is a mean over requests;
# - of several, they are tried in this order: one in a top-level section named for decoding or
#   speculation first, a number before a mean over requests; the first that lies in the range below
#   is stored, the ones refused before it are named in `trtllm_bench_acceptance_key`, and the others
#   are printed beside the table;
# - the range is 1 to max_draft_len + 1 (read from the method's options file; 1 without
#   speculation), give or take the first token, which the context step produces: whether 1.1.0
#   counts that step as an iteration is not known here, so the upper bound is max_draft_len + 1
#   times 128 / 127 (the output budget over one token fewer; 1.008 for a baseline). A fraction
#   below 1, a percentage above the bound and a value that is not finite are refused; a
#   percentage below max_draft_len + 1 (3.5 meaning 3.5 %) cannot be told from tokens per
#   iteration and would be stored as it is. Where nothing lies in range the cell stores nothing
#   and says so.
#
# A report without such an entry gets `absent` in the table (likely for the baselines, which do not
# speculate), and the cell prints the report's top-level keys and those of any section named for
# decoding or speculation, so that you can read the figure yourself; `results.json` keeps, per report,
# those keys, every section named for decoding or speculation as it is, and every entry the rule found
# (`trtllm_bench_acceptance`).

# %%
import yaml

BENCH_OPTIONS = {("llama", "ngram"): "ngram.yaml", ("llama", "draft_target"): "draft_target.yaml",
                 ("llama", "eagle3"): "eagle3.yaml", ("deepseek", "mtp"): "mtp_deepseek_r1.yaml"}
SPEC_SECTION = ("decod", "specul")  # a top-level section named for decoding or speculation


def most_tokens_per_iteration(prefix: str, method: str) -> int:
    """max_draft_len + 1 from the method's options file (MTP: num_nextn_predict_layers + 1); 1 without speculation."""
    if (prefix, method) not in BENCH_OPTIONS:
        return 1
    spec = yaml.safe_load(Path(BENCH_OPTIONS[prefix, method]).read_text())["speculative_config"]
    return 1 + int(spec.get("max_draft_len") or spec["num_nextn_predict_layers"])


def is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def acceptance_entries(node: dict, path: tuple = ()) -> list[tuple[str, float, bool]]:
    """(key path, value, a mean over requests) for every acceptance entry under node; draft rates and counts left out."""
    found = []
    for key, value in node.items():
        name, here = str(key).lower(), path + (str(key),)
        named = "accept" in name and "draft" not in name and not name.startswith(("num_", "total_"))
        mean = None
        if isinstance(value, dict):
            mean = next((m for m in ("average", "mean", "avg") if is_number(value.get(m))), None)
        if named and mean:
            found.append((".".join(here + (mean,)), float(value[mean]), True))
        elif isinstance(value, dict):
            found += acceptance_entries(value, here)
        elif named and is_number(value):
            found.append((".".join(here), float(value), False))
    return found


def in_spec_section(key_path: str) -> bool:
    return any(w in key_path.split(".")[0].lower() for w in SPEC_SECTION)


BENCH_ACCEPTANCE.clear()
for model, prefix, method in BENCH:
    top = most_tokens_per_iteration(prefix, method)
    bound = top * OUTPUT_TOKENS / (OUTPUT_TOKENS - 1)  # give or take the first token, from the context step

    def in_range(value: float) -> bool:
        return math.isfinite(value) and 1 - 1e-3 <= value <= bound + 1e-3  # 1e-3: a report's rounding

    for c, n in SWEEP:
        r = ROWS.get(("trtllm-bench", model, method, c))
        if r is None:
            continue  # no report: the run failed or did not run (the reading cell above says which)
        path = Path(f"bench/{prefix}_{method}_c{c}.json")
        report = json.loads(path.read_text())
        sections = {k: v for k, v in report.items() if isinstance(v, dict) and in_spec_section(k)}
        found = sorted(acceptance_entries(report), key=lambda f: (not in_spec_section(f[0]), f[2], f[0]))
        chosen = next((f for f in found if in_range(f[1])), None)
        refused = [f"{k} = {v:g}" for k, v, _ in (found[:found.index(chosen)] if chosen else found)]
        r[TPI] = None
        if not found:
            r[TPI_KEY] = key = "absent from the report"
        elif chosen:
            r[TPI], key = round(chosen[1], 3), chosen[0]
            r[TPI_KEY] = key + (f" (refused before it, outside 1..{bound:.3g}: {'; '.join(refused)})" if refused else "")
        else:
            r[TPI_KEY] = key = f"none in 1..{bound:.3g} ({'; '.join(refused)}): not tokens per iteration, not stored"
        BENCH_ACCEPTANCE.append({
            "report": str(path), "model": SHORT[model], "method": method, "concurrency": c,
            "most_tokens_per_iteration": top, "bound": round(bound, 4), "stored": r[TPI], "key": key,
            "refused": refused, "found": {k: v for k, v, _ in found}, "report_keys": sorted(report),
            "spec_sections": sections})
write_results()

print("trtllm-bench: output tokens per decoding iteration as its report gives it (what it calls an acceptance rate;")
print("  1.00 = no draft accepted; 'most' = max_draft_len + 1). Not TensorRT-LLM's per-request acceptance_rate.")
print(f"{'model':22} {'method':19} {'most':>4} " + " ".join(f"{'c=' + str(c):>10}" for c, _ in SWEEP))
for model, prefix, method in BENCH:
    cells = []
    for c, _ in SWEEP:
        r = ROWS.get(("trtllm-bench", model, method, c))
        cells.append(f"{'no run':>10}" if r is None else f"{r[TPI]:10.2f}" if r[TPI] is not None
                     else f"{'absent' if r[TPI_KEY] == 'absent from the report' else 'not stored':>10}")
    print(f"{SHORT[model]:22} {method:19} {most_tokens_per_iteration(prefix, method):4} " + " ".join(cells))
print("read from:", ", ".join(sorted({e["key"] for e in BENCH_ACCEPTANCE if e["stored"] is not None})) or "no report")
for e in BENCH_ACCEPTANCE:
    where = f"{e['report']} ({e['method']}, concurrency {e['concurrency']})"
    if not e["found"]:
        print(f"absent: {where}: no acceptance entry; the report's keys: {e['report_keys']}"
              + "".join(f"; {name}: {sorted(section)}" for name, section in e["spec_sections"].items()))
    elif e["stored"] is None:
        print(f"not stored: {where}: {e['key']}; the report's acceptance entries: {e['found']}")
    else:
        if e["refused"]:
            print(f"refused before {e['key']} in {where}: {'; '.join(e['refused'])}")
        others = [f"{k} = {v:g}" for k, v in e["found"].items()
                  if k != e["key"] and not any(x.startswith(f"{k} = ") for x in e["refused"])]
        if others:
            print(f"also in {where}: " + ", ".join(others))

# %% [markdown]
# ## 2. Triton's `llmapi` model
#
# One model repository per method, copied from the container's `/app/all_models/llmapi/`. The
# container's launcher (`/app/scripts/launch_triton_server.py`) starts `tritonserver` with
# `--disable-auto-complete-config`, so Triton reads only `config.pbtxt`, never `model.yaml`'s
# `triton_config`: the cell writes `max_batch_size: 0` and the decoupled policy into `config.pbtxt`
# where no line starts with them (a second one fails to parse), the same values `model.yaml` gives.
# The client further down does not stream (the paragraph before it says why), so the policy only
# keeps the two files in agreement.

# %% language="bash"
# set -euo pipefail
# for name in baseline baseline_no_overlap ngram draft_target eagle3 deepseek_baseline mtp; do
#   repo="repo_$name"
#   rm -rf "$repo"
#   cp -r /app/all_models/llmapi "$repo"
#   pbtxt="$repo/tensorrt_llm/config.pbtxt"
#   grep -q '^max_batch_size' "$pbtxt" || printf '\nmax_batch_size: 0\n' >> "$pbtxt"
#   grep -q '^model_transaction_policy' "$pbtxt" || \
#     printf '\nmodel_transaction_policy {\n  decoupled: true\n}\n' >> "$pbtxt"
# done
# find repo_baseline -type f | sort
# grep -A2 -E '^(max_batch_size|model_transaction_policy)' repo_baseline/tensorrt_llm/config.pbtxt

# %% [markdown]
# Each `model.yaml`: every key except `triton_config` goes to `LLM(...)`, so it holds the target
# and the same keys as the method's file above; `triton_config` matches `config.pbtxt`.

# %%
# %%writefile repo_baseline/tensorrt_llm/1/model.yaml
# specdec-guide: trtllm=1.1.0
# The target alone: no speculative_config.
model: meta-llama/Llama-3.1-8B-Instruct
backend: pytorch
tensor_parallel_size: 1
triton_config:
  max_batch_size: 0
  decoupled: true

# %%
# %%writefile repo_baseline_no_overlap/tensorrt_llm/1/model.yaml
# specdec-guide: trtllm=1.1.0
# The target alone with the overlap scheduler off: the like-for-like baseline.
model: meta-llama/Llama-3.1-8B-Instruct
backend: pytorch
tensor_parallel_size: 1
disable_overlap_scheduler: true
triton_config:
  max_batch_size: 0
  decoupled: true

# %%
# %%writefile repo_ngram/tensorrt_llm/1/model.yaml
# specdec-guide: trtllm=1.1.0
model: meta-llama/Llama-3.1-8B-Instruct
backend: pytorch
tensor_parallel_size: 1
disable_overlap_scheduler: true
speculative_config:
  decoding_type: NGram
  max_draft_len: 4
  max_matching_ngram_size: 2
  is_keep_all: true
  is_use_oldest: true
  is_public_pool: false
triton_config:
  max_batch_size: 0
  decoupled: true

# %%
# %%writefile repo_draft_target/tensorrt_llm/1/model.yaml
# specdec-guide: trtllm=1.1.0
model: meta-llama/Llama-3.1-8B-Instruct
backend: pytorch
tensor_parallel_size: 1
disable_overlap_scheduler: true
speculative_config:
  decoding_type: DraftTarget
  max_draft_len: 4
  speculative_model_dir: /tmp/specdec-models/Llama-3.2-1B-Instruct
triton_config:
  max_batch_size: 0
  decoupled: true

# %%
# %%writefile repo_eagle3/tensorrt_llm/1/model.yaml
# specdec-guide: trtllm=1.1.0
model: meta-llama/Llama-3.1-8B-Instruct
backend: pytorch
tensor_parallel_size: 1
disable_overlap_scheduler: true
speculative_config:
  decoding_type: Eagle
  max_draft_len: 3
  speculative_model_dir: /tmp/specdec-models/EAGLE3-LLaMA3.1-Instruct-8B
  eagle3_one_model: false
triton_config:
  max_batch_size: 0
  decoupled: true

# %%
# %%writefile repo_deepseek_baseline/tensorrt_llm/1/model.yaml
# specdec-guide: trtllm=1.1.0
# DeepSeek-R1-0528 on eight GPUs (launcher --world_size 8), as in notebook 07, without speculation.
model: deepseek-ai/DeepSeek-R1-0528
backend: pytorch
tensor_parallel_size: 8
moe_expert_parallel_size: 8
trust_remote_code: true
triton_config:
  max_batch_size: 0
  decoupled: true

# %%
# %%writefile repo_mtp/tensorrt_llm/1/model.yaml
# specdec-guide: trtllm=1.1.0
# MTP on DeepSeek-R1-0528 on eight GPUs (launcher --world_size 8), as in notebook 07.
model: deepseek-ai/DeepSeek-R1-0528
backend: pytorch
tensor_parallel_size: 8
moe_expert_parallel_size: 8
trust_remote_code: true
speculative_config:
  decoding_type: MTP
  num_nextn_predict_layers: 1
triton_config:
  max_batch_size: 0
  decoupled: true

# %%
import yaml

for name, options in (("baseline_no_overlap", "baseline_no_overlap.yaml"), ("ngram", "ngram.yaml"),
                      ("draft_target", "draft_target.yaml"), ("eagle3", "eagle3.yaml"),
                      ("deepseek_baseline", "deepseek_r1.yaml"), ("mtp", "mtp_deepseek_r1.yaml")):
    served = yaml.safe_load(Path(f"repo_{name}/tensorrt_llm/1/model.yaml").read_text())
    for key, value in yaml.safe_load(Path(options).read_text()).items():
        assert served.get(key) == value, f"repo_{name}/tensorrt_llm/1/model.yaml: {key} is not what {options} says"
    print(f"repo_{name}: the keys of {options}, plus the target and triton_config")

# %% [markdown]
# The client. On 1.1.0 the `llmapi` model does not stream one event per step (it passes
# `streaming` to `generate_async` in the slot of another argument; read at a 1.2.0rc2-era commit
# of `model.py`, fixed by TensorRT-LLM PR #14079 after 1.2.1), so the client asks
# `/v2/models/tensorrt_llm/generate` for whole answers and measures throughput, not time to first
# token. Per request: `text_input`, `sampling_param_max_tokens` and
# `sampling_param_exclude_input_from_output` (inputs of the model's `config.pbtxt`; the endpoint
# drops any other key). Greedy decoding: no temperature, top-k or top-p is sent. The per-request
# draft counters read zero on 1.1.0 ([why](../triton_cpu.md#4-requests)), so none is asked for.
#
# N requests at concurrency c are N calls shared by c threads; the wall time runs from the first
# call to the last answer. Output tokens/s is all answers' tokens over that time; tokens/s/user is
# the mean of each answer's tokens over its own latency. The launcher starts `tritonserver` in the
# background and returns; readiness is polled with a deadline (and fails early, with the log's
# tail, if the server exits), and the server is stopped in a `finally` whatever happens (even if
# writing the results there fails). It is
# stopped by name: `start_triton` refuses to start while another `tritonserver` runs, so the one
# stopped is the one it started. `stop_triton` sends SIGTERM, then SIGKILL after 300 s, and if a
# `tritonserver` is still listed 60 s after that (stuck in the driver, or a zombie nobody reaps) it
# fails, naming each PID with its state from `/proc/PID/stat`: the GPU may still be held. No
# `tritonserver` process left does not yet mean a free GPU: the engine runs in the Python
# backend's stub and the worker its `LLM` started, which can outlive the server. So `stop_triton`
# then waits for `gpu_free.py` (no compute process listed, memory back to idle, within 300 s) and
# fails with the leftover PIDs; `start_triton` runs the same check first. After each server,
# `results.json` and `results.csv` are written again with every row so far.

# %%
TRITON = "http://127.0.0.1:8000"
REQUEST_TIMEOUT_S = 900


def tritonserver_running() -> bool:
    return subprocess.run(["pgrep", "-x", "tritonserver"], capture_output=True).returncode == 0


def start_triton(name: str, world_size: int) -> None:
    if tritonserver_running():
        raise RuntimeError("a tritonserver already runs in this container; stop it before this cell")
    gpu_free(f"before tritonserver ({name})")
    with open(f"triton_{name}.log", "w") as log:  # the server, started in the background, writes here
        subprocess.run([sys.executable, "/app/scripts/launch_triton_server.py", "--model_repo", str(WORK / f"repo_{name}"),
                        "--world_size", str(world_size)], stdout=log, stderr=subprocess.STDOUT, check=True)


def wait_ready(name: str, timeout_s: float) -> None:
    started = time.monotonic()
    while time.monotonic() - started < timeout_s:
        try:
            with urllib.request.urlopen(f"{TRITON}/v2/models/tensorrt_llm/ready", timeout=5) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        if time.monotonic() - started > 60 and not tritonserver_running():
            tail = Path(f"triton_{name}.log").read_text(errors="replace").splitlines()[-40:]
            raise RuntimeError(f"tritonserver ({name}) exited before it was ready:\n" + "\n".join(tail))
        time.sleep(5)
    raise TimeoutError(f"tritonserver ({name}) not ready after {timeout_s:.0f} s; see triton_{name}.log")


def process_states() -> list[str]:
    """Each tritonserver pgrep lists, with its state from /proc/PID/stat (D: stuck in the kernel, Z: zombie)."""
    out = []
    for line in subprocess.run(["pgrep", "-a", "-x", "tritonserver"], capture_output=True, text=True).stdout.splitlines():
        pid = line.split()[0]
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            state = "?"
        out.append(f"{line} (state {state})")
    return out


def stop_triton(name: str, timeout_s: float = 300, after_kill_s: float = 60) -> None:
    subprocess.run(["pkill", "-x", "tritonserver"], check=False)
    started, killed = time.monotonic(), None
    while tritonserver_running():
        if killed is None and time.monotonic() - started > timeout_s:
            subprocess.run(["pkill", "-9", "-x", "tritonserver"], check=False)
            killed = time.monotonic()
        if killed is not None and time.monotonic() - killed > after_kill_s:
            raise RuntimeError(f"tritonserver ({name}) still runs {after_kill_s:.0f} s after SIGKILL: "
                               f"{'; '.join(process_states()) or 'gone just now'}. The GPU may still be held; "
                               "stop it from the host (or restart the container) before the next run")
        time.sleep(1)
    gpu_free(f"after stopping tritonserver ({name})")  # the stub and the LLM's worker, not tritonserver, hold the engine


def generate(prompt: str) -> tuple[str, float]:
    body = json.dumps({"text_input": prompt, "sampling_param_max_tokens": OUTPUT_TOKENS,
                       "sampling_param_exclude_input_from_output": True}).encode()
    request = urllib.request.Request(f"{TRITON}/v2/models/tensorrt_llm/generate", data=body,
                                     headers={"Content-Type": "application/json"})
    started = time.perf_counter()
    with urllib.request.urlopen(request, timeout=REQUEST_TIMEOUT_S) as r:
        text = json.loads(r.read())["text_output"]
    return text, time.perf_counter() - started


def sweep_triton(model: str, method: str) -> None:
    prompts, tokenizer = PROMPTS[model], TOKENIZERS[model]
    for i in range(WARMUP):
        generate(prompts[i % len(prompts)])
    for c, n in SWEEP:
        batch = [prompts[i % len(prompts)] for i in range(n)]
        started = time.perf_counter()
        with ThreadPoolExecutor(max_workers=c) as pool:
            answers = list(pool.map(generate, batch))
        wall = time.perf_counter() - started
        tokens = [len(tokenizer.encode(text, add_special_tokens=False)) for text, _ in answers]
        per_user = sum(t / latency for t, (_, latency) in zip(tokens, answers)) / n
        row("triton", model, method, c, n, sum(tokens) / wall, per_user)
        print(f"triton {SHORT[model]} {method:19} c={c:<3} {n:4} requests  {sum(tokens):6} tokens in {wall:7.1f} s")


TRITON_RUNS = [("baseline", TARGET, "baseline", 1, 3600),
               ("baseline_no_overlap", TARGET, "baseline_no_overlap", 1, 3600), ("ngram", TARGET, "ngram", 1, 3600),
               ("draft_target", TARGET, "draft_target", 1, 3600), ("eagle3", TARGET, "eagle3", 1, 3600)]
if MTP_OK:  # 07 waits up to 5400 s for a DeepSeek-R1 server (a first download included)
    TRITON_RUNS += [("deepseek_baseline", MTP_MODEL, "baseline", 8, 5400), ("mtp", MTP_MODEL, "mtp", 8, 5400)]
else:
    print(f"skipped: MTP and its baseline behind Triton: {MTP_SKIP}")
for name, model, method, world_size, ready_s in TRITON_RUNS:
    start_triton(name, world_size)
    try:
        wait_ready(name, ready_s)
        sweep_triton(model, method)
    finally:
        try:
            write_results()  # the rows so far, whatever happens next
        finally:
            stop_triton(name)  # the server goes even if the results cannot be written

# %% [markdown]
# ## 3. The LLM API: a user-provided drafter
#
# The drafter of [User-provided drafters](../user_provided.md), the same class, written to a file
# in the work folder: it proposes what followed the latest earlier occurrence of the sequence's
# last tokens. It subclasses 1.1.0's
# `Drafter` (`prepare_draft_tokens(scheduled_requests, resource_manager=None)`; the base
# constructor takes only `max_concurrency`; `max_draft_tokens` is read by the base class's CUDA-graph
# padding), an interface the guide's snapshot read at 1.1.0rc6, not at the release tag. The
# baselines (overlap scheduler on and off) and NGram run in the same harness, with the same prompts
# and levels, so that the drafter's speed-up has both baselines and a built-in drafter of the same
# kind beside it. The drafter matches at most 2 tail tokens, as NGram's `max_matching_ngram_size`.
#
# **Why a file, not a cell.** That page keeps the drafter in a file next to the script for this
# reason: on one GPU the 1.1.0 `LLM` runs its executor in a worker process that it starts through
# mpi4py, and the LLM's arguments, the drafter object inside `speculative_config` included, travel
# there pickled (read in the 1.1.0 sources of `llm.py` and `mpi_session.py`, not run on a GPU).
# A pickled object names its class by module: a class defined in a notebook cell
# belongs to the kernel's `__main__`, which the worker cannot import, so `LLM(...)` would fail for
# this run. A class imported from `prompt_lookup_drafter.py` unpickles wherever that file can be
# imported, and 1.1.0 starts the worker pool with the kernel's `sys.path` (`MpiPoolSession`), so the
# cell after the file puts the work folder, as an absolute path, on `sys.path` before the first
# `LLM(...)`.
#
# The requests go through `generate_async`, awaited as in the 1.1.0 example "Generate text
# asynchronously", at most c at a time. The kernel already runs an event loop, so the sweep runs
# its own in a worker thread. Output tokens are the token ids each request returned. Each run is
# checked like the others: `gpu_free.py` before its `LLM` is built and after it is shut down (in a
# `finally`, also when the constructor fails), so no worker of an earlier `LLM` holds memory the
# next one sizes its KV cache from.

# %%
# %%writefile prompt_lookup_drafter.py
# specdec-guide: trtllm=1.1.0
"""The prompt-lookup drafter of the guide's page User-provided drafters, in a file the LLM's worker can import."""

from tensorrt_llm._torch.speculative.drafter import Drafter


class PromptLookupDrafter(Drafter):
    """Propose the continuation of the latest earlier occurrence of the sequence's tail."""

    def __init__(self, max_draft_len: int = 4, max_matching_ngram_size: int = 3):
        super().__init__()  # TensorRT-LLM 1.1.0's Drafter takes only max_concurrency (default None)
        self.max_draft_len = max_draft_len
        self.max_draft_tokens = max_draft_len  # read by the base class's CUDA-graph padding helper
        self.max_matching_ngram_size = max_matching_ngram_size

    def prepare_draft_tokens(self, scheduled_requests, resource_manager=None) -> None:
        # Called once per iteration; context (prefill) requests get no draft.
        for request in scheduled_requests.generation_requests:
            request.py_draft_tokens = self.lookup(list(request.get_tokens(0)))

    def lookup(self, tokens: list[int]) -> list[int]:
        # Longest tail first: a 3-token match predicts better than a 1-token one.
        for size in range(min(self.max_matching_ngram_size, len(tokens) - 1), 0, -1):
            tail = tokens[-size:]
            # Scan backwards so the most recent occurrence wins; exclude the tail itself.
            for start in range(len(tokens) - size - 1, -1, -1):
                if tokens[start : start + size] == tail:
                    follow = tokens[start + size : start + size + self.max_draft_len]
                    if follow:
                        return follow
        return []

# %%
import asyncio

if str(WORK) not in sys.path:  # before the first LLM(...): its worker pool gets this sys.path
    sys.path.insert(0, str(WORK))
from prompt_lookup_drafter import PromptLookupDrafter
from tensorrt_llm import LLM, SamplingParams
from tensorrt_llm.llmapi import NGramDecodingConfig, UserProvidedDecodingConfig

assert PromptLookupDrafter.__module__ == "prompt_lookup_drafter", PromptLookupDrafter.__module__


async def one_level(llm, batch: list[str], params, c: int):
    gate = asyncio.Semaphore(c)

    async def one(prompt: str) -> tuple[int, float]:
        async with gate:
            started = time.perf_counter()
            output = await llm.generate_async(prompt, params)
            return len(output.outputs[0].token_ids), time.perf_counter() - started

    started = time.perf_counter()
    done = await asyncio.gather(*(one(p) for p in batch))
    return done, time.perf_counter() - started


def in_worker_loop(coro):
    with ThreadPoolExecutor(max_workers=1) as worker:
        return worker.submit(asyncio.run, coro).result()


def sweep_llm_api(method: str, new_llm) -> None:
    prompts = PROMPTS[TARGET]
    params = SamplingParams(max_tokens=OUTPUT_TOKENS)  # greedy: no temperature, top-k or top-p
    gpu_free(f"before LLM API {method}")  # no worker of an earlier LLM (or a failed one) left on the GPU
    llm = None
    try:
        llm = new_llm()  # inside the try: a constructor that fails is still followed by the check below
        in_worker_loop(one_level(llm, prompts[:WARMUP], params, 1))
        for c, n in SWEEP:
            batch = [prompts[i % len(prompts)] for i in range(n)]
            done, wall = in_worker_loop(one_level(llm, batch, params, c))
            tokens = sum(t for t, _ in done)
            row("llm-api", TARGET, method, c, n, tokens / wall, sum(t / latency for t, latency in done) / n)
            print(f"llm-api {SHORT[TARGET]} {method:19} c={c:<3} {n:4} requests  {tokens:6} tokens in {wall:7.1f} s")
    finally:
        try:
            write_results()  # the rows so far, whatever happens next
        finally:
            if llm is not None:
                llm.shutdown()  # the LLM's worker goes even if the results cannot be written
            gpu_free(f"after LLM API {method}")  # and it has gone from the GPU


sweep_llm_api("baseline", lambda: LLM(model=TARGET))
sweep_llm_api("baseline_no_overlap", lambda: LLM(model=TARGET, disable_overlap_scheduler=True))
sweep_llm_api("ngram", lambda: LLM(
    model=TARGET, disable_overlap_scheduler=True,
    speculative_config=NGramDecodingConfig(max_draft_len=4, max_matching_ngram_size=2, is_keep_all=True,
                                           is_use_oldest=True, is_public_pool=False)))
sweep_llm_api("user_provided", lambda: LLM(
    model=TARGET, disable_overlap_scheduler=True,
    speculative_config=UserProvidedDecodingConfig(
        drafter=PromptLookupDrafter(max_draft_len=4, max_matching_ngram_size=2), max_draft_len=4)))

# %% [markdown]
# ## The results, stored
#
# `results.json` and `results.csv`, written once more with every row (the sections wrote them as
# they went), and the table: harness, model, method, overlap scheduler, concurrency, requests,
# output tokens/s, tokens/s per user, then the two speed-ups of the same harness and model at the
# same concurrency: over `baseline` (overlap scheduler on), and like for like over the baseline
# named beside it (1.0 for a baseline over itself), and for trtllm-bench's rows the output tokens per
# decoding iteration its report gave (`tok/iter`; `-` where it gave none, and on the other
# harnesses' rows). `results.json` says what each speed-up column divides by and what the
# acceptance column measures.

# %%
rows = write_results()


def times(value) -> str:
    return f"{value:6.2f}" if value is not None else f"{'-':>6}"


print(f"{'harness':13} {'model':22} {'method':19} {'overlap':7} {'conc':>4} {'reqs':>5} {'tok/s':>9} "
      f"{'tok/s/user':>10} {'tok/iter':>8} {'x baseline':>10}  x like-for-like baseline")
for r in rows:
    print(f"{r['harness']:13} {r['model']:22} {r['method']:19} {r['overlap_scheduler']:7} {r['concurrency']:4} "
          f"{r['requests']:5} {r['output_tok_s']:9.1f} {r['tok_s_per_user']:10.1f} {times(r[TPI]):>8} "
          f"{times(r['speedup']):>10}  {times(r['speedup_like_for_like'])} ({r['like_for_like_baseline']})")
print("tok/iter: output tokens per decoding iteration as trtllm-bench's report gives it (trtllm-bench rows only;")
print("  not TensorRT-LLM's per-request acceptance_rate); results.json: acceptance_column, trtllm_bench_acceptance")
for s in SKIPPED:
    print(f"skipped: {s['method']} in {s['harness']}: {s['reason']}")
print("written:", WORK / "results.json", WORK / "results.csv", sep="\n  ")

# %% [markdown]
# The plot: per harness, output tokens/s (top) and the speed-ups (bottom: solid over `baseline`;
# dashed, for the methods run without the overlap scheduler, like for like over `baseline_no_overlap`)
# against concurrency, with the provenance underneath. matplotlib comes with TensorRT-LLM's requirements
# (read on a main-branch commit, not at 1.1.0); if this container lacks it, the cell says so and
# the table above stands alone. Each method keeps one colour in every panel of both plots
# (`COLOURS`).

# %%
COLOURS = {"baseline": "tab:blue", "baseline_no_overlap": "tab:orange", "ngram": "tab:green",
           "draft_target": "tab:red", "eagle3": "tab:purple", "user_provided": "tab:brown",
           "baseline (DeepSeek-R1-0528)": "tab:gray", "mtp (DeepSeek-R1-0528)": "tab:pink"}  # one per line label


def label_of(model: str, method: str) -> str:
    return method if model == SHORT[TARGET] else f"{method} ({model})"


try:
    import matplotlib.pyplot as plt
except ImportError as err:
    print(f"no plot: matplotlib cannot be imported in this container ({err}); results.json and results.csv hold the numbers")
else:
    harnesses = [h for h in ("trtllm-bench", "triton", "llm-api") if any(r["harness"] == h for r in rows)]
    fig, axes = plt.subplots(2, len(harnesses), figsize=(5.5 * len(harnesses), 8), squeeze=False)
    for col, harness in enumerate(harnesses):
        series = sorted({(r["model"], r["method"]) for r in rows if r["harness"] == harness})
        for model, method in series:
            points = [r for r in rows if (r["harness"], r["model"], r["method"]) == (harness, model, method)]
            label = label_of(model, method)
            colour = COLOURS.get(label, "black")
            xs = [p["concurrency"] for p in points]
            axes[0][col].plot(xs, [p["output_tok_s"] for p in points], marker="o", color=colour, label=label)
            if method != "baseline":  # the baseline is the grey line at 1.0
                axes[1][col].plot(xs, [p["speedup"] for p in points], marker="o", color=colour, label=label)
            if method in OVERLAP_OFF and method != "baseline_no_overlap":  # like for like, same colour, dashed
                axes[1][col].plot(xs, [p["speedup_like_for_like"] for p in points], marker="o", linestyle="--",
                                  color=colour, label=f"{label} over baseline_no_overlap")
        axes[0][col].set_title(harness)
        axes[0][col].set_ylabel("output tokens/s")
        axes[1][col].set_ylabel("speed-up (dashed: over baseline_no_overlap)")
        axes[1][col].axhline(1.0, color="grey", linewidth=0.8)
        for ax in (axes[0][col], axes[1][col]):
            ax.set_xscale("log", base=2)
            ax.set_xticks(list(CONCURRENCY), [str(c) for c in CONCURRENCY])
            ax.set_xlabel("concurrency")
            ax.legend(fontsize=8)
    fig.text(0.01, 0.005, f"{PROVENANCE['date']}  |  {PROVENANCE['gpu_count']} x {PROVENANCE['gpu']}, driver "
             f"{PROVENANCE['driver']}  |  Triton {PROVENANCE['triton_server_version']}, TensorRT-LLM "
             f"{PROVENANCE['tensorrt_llm']}  |  {OUTPUT_TOKENS} output tokens, greedy", fontsize=8)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    fig.savefig("speedup.png", dpi=120)
    print("written:", WORK / "speedup.png")
    plt.show()

# %% [markdown]
# A second plot: trtllm-bench's acceptance figure, output tokens per decoding iteration as its report
# gives it (the section after the trtllm-bench runs says what it is and is not, and that its
# computation and key are unconfirmed at 1.1.0), per method against concurrency, one line per
# method with a stored figure, in the colour it has in the first plot; the solid grey line at 1.0 is
# no draft accepted, and each dotted grey line is a most, max_draft_len + 1, drawn once per value and
# labelled with the methods it bounds (`max 5: draft_target, ngram`). Where no report gave a figure
# in range, the cell says so and draws nothing.

# %%
bench_tpi = [r for r in rows if r["harness"] == "trtllm-bench" and r[TPI] is not None]
if not bench_tpi:
    print("no acceptance plot: no trtllm-bench report gave a figure the acceptance table could store "
          "(its cell printed what each report holds)")
else:
    try:
        import matplotlib.pyplot as plt
    except ImportError as err:
        print(f"no acceptance plot: matplotlib cannot be imported in this container ({err}); "
              "results.json and results.csv hold the numbers")
    else:
        fig, ax = plt.subplots(figsize=(7, 4.8))
        most = {(SHORT[model], method): most_tokens_per_iteration(prefix, method) for model, prefix, method in BENCH}
        bounded: dict = {}  # max_draft_len + 1 -> the methods it bounds
        for model, method in sorted({(r["model"], r["method"]) for r in bench_tpi}):
            points = [r for r in bench_tpi if (r["model"], r["method"]) == (model, method)]
            label = label_of(model, method)
            ax.plot([p["concurrency"] for p in points], [p[TPI] for p in points], marker="o",
                    color=COLOURS.get(label, "black"), label=label)
            if most[model, method] > 1:
                bounded.setdefault(most[model, method], []).append(label)
        for value, labels in sorted(bounded.items()):  # one dotted grey line per distinct bound
            ax.axhline(value, color="grey", linestyle=":", linewidth=0.8, label=f"max {value}: {', '.join(labels)}")
        ax.axhline(1.0, color="grey", linewidth=0.8)
        ax.set_title("trtllm-bench: output tokens per decoding iteration\n"
                     "(its 'acceptance rate'; not TensorRT-LLM's per-request acceptance_rate)", fontsize=10)
        ax.set_ylabel("output tokens per decoding iteration")
        ax.set_xscale("log", base=2)
        ax.set_xticks(list(CONCURRENCY), [str(c) for c in CONCURRENCY])
        ax.set_xlabel("concurrency")
        ax.legend(fontsize=8)
        keys = ", ".join(sorted({e["key"] for e in BENCH_ACCEPTANCE if e["stored"] is not None}))
        fig.text(0.01, 0.005, f"report key: {keys}  |  {PROVENANCE['gpu_count']} x {PROVENANCE['gpu']}  |  "
                 f"TensorRT-LLM {PROVENANCE['tensorrt_llm']}  |  {OUTPUT_TOKENS} output tokens, greedy", fontsize=7)
        fig.tight_layout(rect=(0, 0.04, 1, 1))
        fig.savefig("acceptance_trtllm_bench.png", dpi=120)
        print("written:", WORK / "acceptance_trtllm_bench.png")
        plt.show()

# %% [markdown]
# ## Reading it
#
# - In each harness, follow a method's speed-up from concurrency 1 to 64. Speculation spends spare
#   GPU compute on drafts; as the batch grows that spare compute shrinks
#   ([Choosing a method](../choosing_a_method.md) explains the cost of checking drafts as the batch
#   grows). For MTP, which keeps the overlap scheduler as its baseline does, the level where the
#   speed-up falls to 1.0 marks where speculation stops paying on this GPU for these prompts.
# - NGram, Draft/Target, two-model EAGLE-3 and the user-provided drafter run with the overlap
#   scheduler off, so their speed-up over `baseline` also counts the loss of the overlap scheduler: it says what switching
#   from the default deployment to the method gains or costs at that concurrency, and where it
#   falls to 1.0 is not where checking drafts alone stops paying. Their like-for-like speed-up, over
#   `baseline_no_overlap`, leaves the scheduler out; `baseline_no_overlap`'s own speed-up over
#   `baseline` is what turning the overlap scheduler off costs at each level.
# - Compare methods within a harness, not harnesses with each other: trtllm-bench generates the
#   whole output budget, the two clients stop at the end-of-sequence token, and only the Triton
#   runs pay for HTTP and a Python model in front of the engine.
# - The user-provided drafter and NGram (with a private pool here) both propose what followed an
#   earlier occurrence of the sequence's last tokens, from that sequence only: up to 4 tokens, after
#   a tail of at most 2, the longest tail first. They still differ in which occurrence: NGram, with
#   04's `is_use_oldest` and `is_keep_all`, proposes the oldest of the longest continuations it has
#   stored for the tail, the drafter the continuation of the latest occurrence; and NGram updates
#   its pool step by step, while the drafter scans the whole sequence at every step. So compare
#   their LLM API rows with both differences in mind (and with each other like for like: both run
#   without the overlap scheduler), not as the cost of the drafting code alone.
# - Acceptance is in the table for trtllm-bench only, as its report gives it: output tokens per
#   decoding iteration (`tok/iter`, the second plot), not TensorRT-LLM's per-request
#   `acceptance_rate`; how it is computed and where the 1.1.0 report keeps it are unconfirmed (its
#   section says why). Read it beside the speed-up at the same level: where a method's tokens per
#   iteration hold up while its speed-up falls, its drafts are still accepted and each iteration
#   costs more. Triton and the LLM API report none here. [Reading the numbers](../reading_the_numbers.md) says
#   what each acceptance figure means and which ones 1.1.0 leaves at zero; the method notebooks
#   measure it as output tokens per target iteration.
