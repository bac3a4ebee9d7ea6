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
#     title: The legacy engine workflow (TensorRT-LLM 1.1.0, Triton 25.12)
#     gpu: one NVIDIA H100 80 GB (Ampere or newer for draft/target and n-gram)
# ---

# %% [markdown]
# # The legacy engine workflow: TensorRT-LLM 1.1.0 on Triton 25.12
#
# *To run it:* [Run a GPU notebook in the container](../../index.md#run-a-gpu-notebook-in-the-container)
# (or `make test-gpu`, which runs every GPU notebook).
#
# Before the LLM API, speculative decoding on Triton meant compiling a TensorRT **engine** with
# the method baked in, then filling the `inflight_batcher_llm` model repository with
# `fill_template.py`. TensorRT-LLM removed this engine backend from its main branch in 2026;
# TensorRT-LLM 1.1.0, the version inside the Triton 25.12 container, still ships it. This
# notebook walks it end to end for the four methods that release builds engines for:
#
# | Method | What is built | `trtllm-build --speculative_decoding_mode` | Served through |
# | --- | --- | --- | --- |
# | Draft/Target | a draft engine and a target engine | `draft_tokens_external` (target only) | `tensorrt_llm_bls` |
# | n-gram (prompt lookup) | the same target engine, no draft model | `draft_tokens_external` | `examples/run.py --ngram_config` |
# | EAGLE | one engine: base model + EAGLE-1 head | `eagle` | the ensemble |
# | Medusa | one engine: base model + Medusa heads | `medusa` | the ensemble |
#
# Where each fact comes from (the comments in the cells name these ids):
#
# - **[build]** TensorRT-LLM 1.1.0 `trtllm-build` reference, `gh-pages:1.1.0/commands/trtllm-build.html`:
#   `--speculative_decoding_mode {draft_tokens_external, lookahead_decoding, medusa, explicit_draft_tokens, eagle}`
#   and `--max_draft_len`; there is no n-gram mode.
# - **[spec]** TensorRT-LLM 1.1.0 `gh-pages:1.1.0/legacy/advanced/speculative-decoding.html`.
# - **[config]** tensorrtllm_backend r25.12 `docs/model_config.md`: the template keys, `decoding_mode`,
#   `medusa_choices`, `eagle_choices`, the BLS keys and request inputs, and the BLS limit.
# - **[tutorial]** triton-inference-server/tutorials r25.12
#   `Feature_Guide/Speculative_Decoding/TRT-LLM/README.md`: EAGLE and Medusa checkpoints and engines. It notes
#   that EAGLE-2 (the dynamic tree, which the 1.1.0 engine supports per [spec]) is not supported through
#   Triton's TensorRT-LLM backend, so the Triton part here serves EAGLE-1's static tree.
# - **[backend]** tensorrtllm_backend at commit c2e65b8 (r25.05), the last copy of the backend's C++ code and Python
#   models in that repository: how a `parameters` value still in `${...}` form is read. **Not tied to 1.1.0.**
# - **[pr822]** tensorrtllm_backend PR #822 (commit c7e6fde, on the r25.12 branch): the backend's own examples fill
#   `prompt_embedding_table_data_type` for `tensorrt_llm` and `tensorrt_llm_bls`.
# - **[dtm]**, **[ngram]** TensorRT-LLM `examples/draft_target_model/README.md` (commit 11925f6) and
#   `examples/ngram/README.md` (commit 2612fb4). **Not tied to 1.1.0**: these two READMEs could not be read at
#   the release commit. The cells that rely on them are marked, and the GPU run is what confirms them.

# %% [markdown]
# ## 0. Where things are in the container
#
# The r25.12 backend Dockerfile copies TensorRT-LLM's `triton_backend/{scripts,all_models,tools}` and
# `examples/` into `/app`. The first cell fails at once, with the missing path, if this container lays
# them out differently.

# %%
import os
import pathlib

# Source: tensorrtllm_backend r25.12 dockerfile/Dockerfile.triton.trt_llm_backend (copies into /app).
APP = pathlib.Path("/app")
PATHS = {
    "llama_convert": APP / "examples/models/core/llama/convert_checkpoint.py",  # [ngram]: 1.x examples layout
    "eagle_convert": APP / "examples/eagle/convert_checkpoint.py",  # [tutorial]
    "medusa_convert": APP / "examples/medusa/convert_checkpoint.py",  # [tutorial]
    "run_py": APP / "examples/run.py",  # [dtm], [ngram]
    "fill_template": APP / "tools/fill_template.py",  # [tutorial]
    "launch": APP / "scripts/launch_triton_server.py",  # [tutorial]
    "ifb_repo": APP / "all_models/inflight_batcher_llm",  # [config]
}
missing = [f"{k}: {p}" for k, p in PATHS.items() if not p.exists()]
assert not missing, "not in this container: " + "; ".join(missing)

WORK = pathlib.Path(os.environ.get("SPECDEC_WORK", "/tmp/specdec-legacy"))
os.environ.update({
    "WORK": str(WORK),
    "HF": str(WORK / "hf"),
    "CKPT": str(WORK / "ckpt"),
    "ENGINES": str(WORK / "engines"),
    "REPOS": str(WORK / "repos"),
})
WORK.mkdir(parents=True, exist_ok=True)
print(WORK)

# %% [markdown]
# ## 1. The models
#
# EAGLE and Medusa need a base model with a trained head; the [tutorial] uses Vicuna-7B v1.3 with
# `yuhuili/EAGLE-Vicuna-7B-v1.3` and `FasterDecoding/medusa-vicuna-7b-v1.3`. Draft/Target needs a small
# model with the **same vocabulary** ([spec]: "trained independently but sharing the same vocabulary");
# `double7/vicuna-68m` is a 68M-parameter Vicuna-style model, and the cell after the download checks that its
# tokenizer really is the target's instead of assuming it.

# %%
from huggingface_hub import snapshot_download

MODELS = {
    "target": "lmsys/vicuna-7b-v1.3",
    "draft": "double7/vicuna-68m",
    "eagle": "yuhuili/EAGLE-Vicuna-7B-v1.3",
    "medusa": "FasterDecoding/medusa-vicuna-7b-v1.3",
}
LOCAL = {name: snapshot_download(repo, local_dir=str(WORK / "hf" / name)) for name, repo in MODELS.items()}
for name, path in LOCAL.items():
    os.environ[f"HF_{name.upper()}"] = path
print(LOCAL)

# %%
from transformers import AutoTokenizer

target_vocab = AutoTokenizer.from_pretrained(LOCAL["target"]).get_vocab()
draft_vocab = AutoTokenizer.from_pretrained(LOCAL["draft"]).get_vocab()
# Draft tokens are token ids: a different vocabulary would make every draft meaningless to the target.
assert draft_vocab == target_vocab, f"vocabularies differ ({len(draft_vocab)} vs {len(target_vocab)} entries)"
print(f"same vocabulary: {len(target_vocab)} tokens")

# %% [markdown]
# ## 2. Checkpoints: `convert_checkpoint.py`
#
# Each model is first converted to a TensorRT-LLM checkpoint. Draft and target use the Llama converter; EAGLE
# and Medusa have their own converters that read the base model **and** the head:
#
# - `--eagle_model_dir`, `--num_eagle_layers`, `--max_non_leaves_per_layer`, `--max_draft_len` ([tutorial]):
#   the EAGLE head and the shape of the draft tree the engine will grow; `--max_draft_len` here is the number of
#   draft tokens in the tree (63 for the default `mc_sim_7b_63` choices).
# - `--medusa_model_dir`, `--num_medusa_heads` ([tutorial]): the Medusa heads; head *k* predicts the token *k*
#   steps ahead ([spec]).

# %%
# %%bash
# Draft and target checkpoints. Source: [dtm] (flags), [ngram] (converter path in the 1.x layout).
set -euo pipefail
python3 /app/examples/models/core/llama/convert_checkpoint.py --model_dir "$HF_TARGET" \
    --output_dir "$CKPT/target" --dtype float16
python3 /app/examples/models/core/llama/convert_checkpoint.py --model_dir "$HF_DRAFT" \
    --output_dir "$CKPT/draft" --dtype float16

# %%
# %%bash
# EAGLE checkpoint: base model + EAGLE head in one checkpoint. Source: [tutorial] (EAGLE section).
set -euo pipefail
python3 /app/examples/eagle/convert_checkpoint.py --model_dir "$HF_TARGET" \
    --eagle_model_dir "$HF_EAGLE" --output_dir "$CKPT/eagle" --dtype float16 \
    --max_draft_len 63 --num_eagle_layers 4 --max_non_leaves_per_layer 10

# %%
# %%bash
# Medusa checkpoint: base model + 4 Medusa heads. Source: [tutorial] (MEDUSA section).
set -euo pipefail
python3 /app/examples/medusa/convert_checkpoint.py --model_dir "$HF_TARGET" \
    --medusa_model_dir "$HF_MEDUSA" --output_dir "$CKPT/medusa" --dtype float16 --num_medusa_heads 4

# %% [markdown]
# ## 3. Engines: `trtllm-build`
#
# The speculative method is fixed **when the engine is built**; the Triton model only selects matching runtime
# behaviour. What each flag means and which runtime check it feeds:
#
# | Flag | Meaning | What it feeds at run time |
# | --- | --- | --- |
# | `--speculative_decoding_mode draft_tokens_external` | the target accepts draft tokens from outside: a draft engine or an n-gram pool ([dtm], [ngram]) | the BLS model's `num_draft_tokens` requests, `examples/run.py --draft_target_model_config` / `--ngram_config` |
# | `--max_draft_len N` | the most draft tokens one step can verify; sizes the engine's buffers | the draft length asked at run time must not exceed it ([ngram]: the engine's value must be "larger or equal to" the n-gram `max_draft_len`) |
# | `--speculative_decoding_mode eagle` / `medusa` | the head's drafting and acceptance run inside the engine ([spec]) | `decoding_mode` in `config.pbtxt`, which TensorRT-LLM overrides to match the engine, with a warning ([config]); `eagle_choices` / `medusa_choices` |
# | `--use_paged_context_fmha enable` | paged context attention, required for the KV-cache reuse that draft/target and n-gram rely on ([dtm], [ngram]) | `enable_kv_cache_reuse:true` in `config.pbtxt`, `--kv_cache_enable_block_reuse` for `examples/run.py` |
# | `--gather_generation_logits` | keep generation logits; needed only to accept drafts by comparing logits ([dtm]) | `use_draft_logits: true` in a BLS request |
# | `--max_batch_size`, `--max_input_len`, `--max_seq_len` | engine limits ([build]) | `triton_max_batch_size` and the request lengths |
#
# What a release does when a request asks for more than `--max_draft_len` is not stated in a 1.1.0 source we
# could read; this notebook stays within the limit.

# %%
# %%bash
# Draft engine: a plain engine. Target engine: draft_tokens_external + max_draft_len. Source: [build] (flags
# and the mode's choices), [dtm] (which flags draft/target needs).
set -euo pipefail
trtllm-build --checkpoint_dir "$CKPT/draft" --output_dir "$ENGINES/draft" --gemm_plugin float16 \
    --use_paged_context_fmha enable --max_batch_size 4 --max_input_len 3200 --max_seq_len 4800
trtllm-build --checkpoint_dir "$CKPT/target" --output_dir "$ENGINES/target" --gemm_plugin float16 \
    --use_paged_context_fmha enable --speculative_decoding_mode draft_tokens_external \
    --max_draft_len 10 --max_batch_size 4 --max_input_len 3200 --max_seq_len 4800

# %%
# %%bash
# EAGLE and Medusa engines. Source: [tutorial]; mode names from [build].
set -euo pipefail
trtllm-build --checkpoint_dir "$CKPT/eagle" --output_dir "$ENGINES/eagle" --gemm_plugin float16 \
    --use_paged_context_fmha enable --speculative_decoding_mode eagle --max_batch_size 4
trtllm-build --checkpoint_dir "$CKPT/medusa" --output_dir "$ENGINES/medusa" --gemm_plugin float16 \
    --speculative_decoding_mode medusa --max_batch_size 4

# %% [markdown]
# ## 4. n-gram (prompt lookup) on the engine backend
#
# TensorRT-LLM 1.1.0 has no n-gram engine mode ([build]). Its engine-backend n-gram ("V1" in [ngram]) reuses a
# `draft_tokens_external` target engine, the one built above, and proposes drafts from an n-gram pool in Python.
# `--ngram_config "[max_draft_len, max_matching_ngram_size, [device ids]]"` ([ngram]):
# `max_draft_len` draft tokens at most per step (at most the engine's `--max_draft_len`), matched on up to
# `max_matching_ngram_size` trailing tokens. It needs `--kv_cache_enable_block_reuse`. This path is not served
# by Triton's `inflight_batcher_llm` models; on Triton, the LLM API's NGram (next notebooks) replaces it.

# %%
# %%bash
# Source: [ngram] (V1 workflow). examples/run.py is not a CLI the schema records: its flags are not checked here.
set -euo pipefail
python3 /app/examples/run.py --engine_dir "$ENGINES/target" --tokenizer_dir "$HF_TARGET" \
    --ngram_config "[4,2,[0]]" --kv_cache_enable_block_reuse --max_output_len 64 \
    --input_text "Repeat this list twice: alpha, beta, gamma, delta, epsilon."

# %% [markdown]
# ## 5. The `inflight_batcher_llm` repository, filled with `fill_template.py`
#
# The templates have `${key}` placeholders; `fill_template.py -i FILE key:value,...` substitutes them in place and
# stops on a key that the file does not contain (**[fill]**: the script as read at TensorRT-LLM commit 2a9abd9, not
# tied to 1.1.0; recorded in the 1.1.0 snapshot, `triton.yaml`). [config] lists each model's keys. A comma inside a value must
# be escaped (`gpu_device_ids:0\,1`) ([config]). Mandatory keys per model ([config]): ensemble
# `triton_max_batch_size`, `logits_datatype`; preprocessing `triton_max_batch_size`, `tokenizer_dir`,
# `preprocessing_instance_count`, `max_queue_delay_microseconds`, `max_queue_size`; postprocessing
# `triton_max_batch_size`, `tokenizer_dir`, `postprocessing_instance_count`; `tensorrt_llm` also `max_queue_size`
# (with `triton_backend`, `decoupled_mode`, `engine_dir`, `batching_strategy`, `max_queue_delay_microseconds`,
# `encoder_input_features_data_type`, `logits_datatype`); `tensorrt_llm_bls` `triton_max_batch_size`,
# `decoupled_mode`, `bls_instance_count`, `logits_datatype`. The calls below leave `max_queue_size` (and the
# preprocessing queue delay) to `fill_template.py`, which fills both with 0 when they are not given ([fill]).
#
# Where a placeholder stands decides what an unfilled one does (the templates' `structural_keys` in the 1.1.0
# snapshot, read at commits not tied to 1.1.0). Inside a `parameters { ... string_value: "${key}" }` value it stays
# a string that the backend cannot parse and reads as not given, so the default applies ([backend];
# `engine_dir` and `batching_strategy` of tensorrt_llm and `tokenizer_dir` of pre/postprocessing have none, so
# they must be filled). Anywhere else (a `data_type` of an input or output,
# `max_batch_size`, `decoupled`, an instance `count`, the `backend` name), a `${...}` left in place breaks the
# config, or names a type or backend that does not exist, and Triton does not load the model. [config] leaves one
# of these out of its mandatory keys:
# `prompt_embedding_table_data_type`, the type of the `prompt_embedding_table` input of `tensorrt_llm` and
# `tensorrt_llm_bls`, which the r25.12 examples fill with `TYPE_FP16` ([pr822]) and so do the calls below.
# `specdec-guide validate` refuses a sequence of calls that leaves such a placeholder in a file.
#
# Speculative keys of the `tensorrt_llm` model ([config]): `decoding_mode` (`medusa`, `eagle`, `lookahead`,
# `redrafter` or a sampling mode; TensorRT-LLM overrides it to match a Medusa/EAGLE engine with a warning),
# `medusa_choices` and `eagle_choices` (the tree, e.g. `{0, 0, 0}, {0, 1}`; default `mc_sim_7b_63`). The template
# also has a `speculative_decoding_fast_logits` placeholder ([fill]: the 1.1.0 snapshot's template keys, read at a commit
# not tied to 1.1.0); [config] does not document it, so this notebook leaves it unfilled. There is **no** key for the
# method or the draft length: the engine fixed them.

# %%
# %%bash
# EAGLE behind the ensemble. Source: [tutorial] (commands), [config] (keys). decoding_mode:eagle is stated
# although the engine would force it: the config then says what the server does.
set -euo pipefail
REPO="$REPOS/eagle"
rm -rf "$REPO" && mkdir -p "$REPOS" && cp -R /app/all_models/inflight_batcher_llm "$REPO"
rm -rf "$REPO/multimodal_encoders"
python3 /app/tools/fill_template.py -i "$REPO/preprocessing/config.pbtxt" \
    tokenizer_dir:$HF_TARGET,triton_max_batch_size:4,preprocessing_instance_count:1
python3 /app/tools/fill_template.py -i "$REPO/postprocessing/config.pbtxt" \
    tokenizer_dir:$HF_TARGET,triton_max_batch_size:4,postprocessing_instance_count:1
python3 /app/tools/fill_template.py -i "$REPO/tensorrt_llm_bls/config.pbtxt" \
    triton_max_batch_size:4,decoupled_mode:false,bls_instance_count:1,logits_datatype:TYPE_FP32,prompt_embedding_table_data_type:TYPE_FP16
python3 /app/tools/fill_template.py -i "$REPO/ensemble/config.pbtxt" triton_max_batch_size:4,logits_datatype:TYPE_FP32
python3 /app/tools/fill_template.py -i "$REPO/tensorrt_llm/config.pbtxt" \
    triton_backend:tensorrtllm,triton_max_batch_size:4,decoupled_mode:false,engine_dir:$ENGINES/eagle,max_queue_delay_microseconds:0,batching_strategy:inflight_fused_batching,encoder_input_features_data_type:TYPE_FP16,logits_datatype:TYPE_FP32,prompt_embedding_table_data_type:TYPE_FP16,decoding_mode:eagle
grep -c '\${' "$REPO"/*/config.pbtxt || true
# A ${...} outside a parameters value (and outside a comment) would keep Triton from loading the model.
if grep -n '\${' "$REPO"/*/config.pbtxt | grep -v string_value | grep -Ev ':[0-9]+:[[:space:]]*#'; then
    echo "structural placeholders left unfilled (above)" >&2; exit 1
fi

# %% [markdown]
# The `grep -c` line counts placeholders left unfilled per model; `fill_template.py` leaves them as literal `${...}`
# ([fill]). Those left here are `parameters` values, which the backend reads as not given and replaces by its
# default, and `enable_trt_overlap` in a comment; the cell stops if one stands anywhere else, where it would keep
# the model from loading (section 5). The `multimodal_encoders` model is not used here and is removed, so that
# its unfilled template is not loaded.
#
# ## 6. Serve and send a request to the ensemble
#
# `launch_triton_server.py` starts `tritonserver` under `mpirun` in the background and returns (the script as
# recorded in the 1.1.0 snapshot, read at TensorRT-LLM commit 0a2e2c1, not tied to 1.1.0); the next cell waits
# until the server is ready (with a time limit) and fails otherwise.

# %%
# %%bash
# Source: [tutorial] (--world_size=1 --model_repo=...).
python3 /app/scripts/launch_triton_server.py --world_size 1 --model_repo "$REPOS/eagle"

# %%
import json
import time
import urllib.error
import urllib.request

BASE = "http://localhost:8000"


def wait_ready(timeout_s: float = 900.0) -> None:
    """Poll Triton's readiness endpoint; raise with the log's tail when it does not come up in time."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{BASE}/v2/health/ready", timeout=5) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(5)
    log = pathlib.Path("triton_log.txt")
    raise TimeoutError("tritonserver not ready: " + (log.read_text()[-2000:] if log.exists() else "no log"))


def generate(model: str, body: dict) -> dict:
    req = urllib.request.Request(f"{BASE}/v2/models/{model}/generate", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=300) as r:
        return json.loads(r.read())


wait_ready()

# %%
# The ensemble's inputs (text_input, max_tokens, bad_words, stop_words, pad_id, end_id): [tutorial] request.
out = generate("ensemble", {"text_input": "What is machine learning?", "max_tokens": 64,
                            "bad_words": "", "stop_words": "", "pad_id": 2, "end_id": 2})
print(out["text_output"])
assert out["text_output"].strip(), "empty completion"

# %%
# %%bash
# Stop the server before the next repository (upstream stops it with pkill, [tutorial]).
pkill -x tritonserver || true
sleep 10

# %% [markdown]
# ## 7. Draft/Target through `tensorrt_llm_bls`
#
# The BLS model orchestrates the two engines: it asks the draft model (`tensorrt_llm_draft_model_name`) for
# `num_draft_tokens` tokens and has the target (`tensorrt_llm_model_name`) verify them ([config]). Its limits,
# as the r25.12 documentation states them ([config]):
#
# - speculative decoding is requested per request, with `num_draft_tokens` (and `use_draft_logits` for logits
#   comparison, which needs `--gather_generation_logits` in the engines);
# - `return_generation_logits` and `return_context_logits` are not supported with it;
# - requests with **batch size greater than 1** are not supported with it.
#
# Streaming: [dtm]'s request sends `"stream": false`, and we could not find a 1.1.0 source that states whether
# BLS speculative decoding streams. The cell after the request records what this release does; the page says no
# more than that run shows.
#
# The draft engine gets its own copy of the `tensorrt_llm` model named `tensorrt_llm_draft` ([dtm]).

# %%
# %%bash
# Source: [dtm] (Triton workflow, step 3), keys checked against [config].
set -euo pipefail
REPO="$REPOS/dtm"
rm -rf "$REPO" && mkdir -p "$REPOS" && cp -R /app/all_models/inflight_batcher_llm "$REPO"
rm -rf "$REPO/multimodal_encoders"
python3 /app/tools/fill_template.py -i "$REPO/ensemble/config.pbtxt" triton_max_batch_size:4,logits_datatype:TYPE_FP32
python3 /app/tools/fill_template.py -i "$REPO/preprocessing/config.pbtxt" \
    triton_max_batch_size:4,tokenizer_dir:$HF_TARGET,preprocessing_instance_count:1
python3 /app/tools/fill_template.py -i "$REPO/postprocessing/config.pbtxt" \
    triton_max_batch_size:4,tokenizer_dir:$HF_TARGET,postprocessing_instance_count:1
python3 /app/tools/fill_template.py -i "$REPO/tensorrt_llm_bls/config.pbtxt" \
    triton_max_batch_size:4,decoupled_mode:false,bls_instance_count:1,accumulate_tokens:false,tensorrt_llm_model_name:tensorrt_llm,tensorrt_llm_draft_model_name:tensorrt_llm_draft,logits_datatype:TYPE_FP32,prompt_embedding_table_data_type:TYPE_FP16
# The draft model is a second copy of the tensorrt_llm template: filled in a staging folder, then moved in
# under its own name (Triton wants the folder and the config's name to agree).
STAGE="$WORK/draft_stage"
rm -rf "$STAGE" && mkdir -p "$STAGE" && cp -R "$REPO/tensorrt_llm" "$STAGE/tensorrt_llm"
python3 /app/tools/fill_template.py -i "$STAGE/tensorrt_llm/config.pbtxt" \
    triton_backend:tensorrtllm,triton_max_batch_size:4,decoupled_mode:false,max_beam_width:1,engine_dir:$ENGINES/draft,kv_cache_free_gpu_mem_fraction:0.1,exclude_input_in_output:true,enable_kv_cache_reuse:true,batching_strategy:inflight_fused_batching,max_queue_delay_microseconds:0,encoder_input_features_data_type:TYPE_FP16,logits_datatype:TYPE_FP32,prompt_embedding_table_data_type:TYPE_FP16
sed -i 's/name: "tensorrt_llm"/name: "tensorrt_llm_draft"/' "$STAGE/tensorrt_llm/config.pbtxt"
mv "$STAGE/tensorrt_llm" "$REPO/tensorrt_llm_draft"
python3 /app/tools/fill_template.py -i "$REPO/tensorrt_llm/config.pbtxt" \
    triton_backend:tensorrtllm,triton_max_batch_size:4,decoupled_mode:false,max_beam_width:1,engine_dir:$ENGINES/target,kv_cache_free_gpu_mem_fraction:0.4,exclude_input_in_output:true,enable_kv_cache_reuse:true,batching_strategy:inflight_fused_batching,max_queue_delay_microseconds:0,encoder_input_features_data_type:TYPE_FP16,logits_datatype:TYPE_FP32,prompt_embedding_table_data_type:TYPE_FP16
# A ${...} outside a parameters value (and outside a comment) would keep Triton from loading the model.
if grep -n '\${' "$REPO"/*/config.pbtxt | grep -v string_value | grep -Ev ':[0-9]+:[[:space:]]*#'; then
    echo "structural placeholders left unfilled (above)" >&2; exit 1
fi
# --multi-model: one server process per TRT-LLM model (two here). Source: [dtm] step 4.
python3 /app/scripts/launch_triton_server.py --model_repo "$REPO" --multi-model --world_size 1

# %%
wait_ready()
plain = generate("tensorrt_llm_bls", {"text_input": "Write the numbers from 1 to 20, comma separated:",
                                      "max_tokens": 64})
spec = generate("tensorrt_llm_bls", {"text_input": "Write the numbers from 1 to 20, comma separated:",
                                     "max_tokens": 64, "num_draft_tokens": 4})  # [config]: BLS request input
print(spec["text_output"])
# Token-by-token acceptance keeps the target's greedy output (the BLS default compares tokens, not logits).
assert spec["text_output"] == plain["text_output"], (plain["text_output"], spec["text_output"])

# %%
# What this release does with a streaming request that asks for draft tokens: recorded, not assumed.
body = json.dumps({"text_input": "Count to five:", "max_tokens": 16, "num_draft_tokens": 4,
                   "stream": True}).encode()
req = urllib.request.Request(f"{BASE}/v2/models/tensorrt_llm_bls/generate_stream", data=body,
                             headers={"Content-Type": "application/json"})
try:
    with urllib.request.urlopen(req, timeout=120) as r:
        print("HTTP", r.status, r.read().decode()[:500])
except urllib.error.HTTPError as err:
    print("HTTP", err.code, err.read().decode()[:500])

# %%
# %%bash
pkill -x tritonserver || true
sleep 10

# %% [markdown]
# ## 8. Medusa behind the ensemble
#
# The same repository as EAGLE with the Medusa engine; `decoding_mode:medusa`, and `medusa_choices` may be
# given as a tree ([config]); without it the default `mc_sim_7b_63` tree is used. Medusa in TensorRT-LLM
# accepts by exact token match (temperature 0) and does not support beam search ([spec], Limitations).

# %%
# %%bash
# Source: [tutorial] (MEDUSA section) and [config] (decoding_mode).
set -euo pipefail
REPO="$REPOS/medusa"
rm -rf "$REPO" && mkdir -p "$REPOS" && cp -R /app/all_models/inflight_batcher_llm "$REPO"
rm -rf "$REPO/multimodal_encoders"
python3 /app/tools/fill_template.py -i "$REPO/preprocessing/config.pbtxt" \
    tokenizer_dir:$HF_TARGET,triton_max_batch_size:4,preprocessing_instance_count:1
python3 /app/tools/fill_template.py -i "$REPO/postprocessing/config.pbtxt" \
    tokenizer_dir:$HF_TARGET,triton_max_batch_size:4,postprocessing_instance_count:1
python3 /app/tools/fill_template.py -i "$REPO/tensorrt_llm_bls/config.pbtxt" \
    triton_max_batch_size:4,decoupled_mode:false,bls_instance_count:1,logits_datatype:TYPE_FP32,prompt_embedding_table_data_type:TYPE_FP16
python3 /app/tools/fill_template.py -i "$REPO/ensemble/config.pbtxt" triton_max_batch_size:4,logits_datatype:TYPE_FP32
python3 /app/tools/fill_template.py -i "$REPO/tensorrt_llm/config.pbtxt" \
    triton_backend:tensorrtllm,triton_max_batch_size:4,decoupled_mode:false,engine_dir:$ENGINES/medusa,max_queue_delay_microseconds:0,batching_strategy:inflight_fused_batching,encoder_input_features_data_type:TYPE_FP16,logits_datatype:TYPE_FP32,prompt_embedding_table_data_type:TYPE_FP16,decoding_mode:medusa
# A ${...} outside a parameters value (and outside a comment) would keep Triton from loading the model.
if grep -n '\${' "$REPO"/*/config.pbtxt | grep -v string_value | grep -Ev ':[0-9]+:[[:space:]]*#'; then
    echo "structural placeholders left unfilled (above)" >&2; exit 1
fi
python3 /app/scripts/launch_triton_server.py --world_size 1 --model_repo "$REPO"

# %%
wait_ready()
out = generate("ensemble", {"text_input": "What is machine learning?", "max_tokens": 64,
                            "bad_words": "", "stop_words": "", "pad_id": 2, "end_id": 2})
print(out["text_output"])
assert out["text_output"].strip(), "empty completion"

# %%
# %%bash
pkill -x tritonserver || true

# %% [markdown]
# ## What comes next
#
# The LLM API replaces all of this: no engine build, one `speculative_config` in `model.yaml`, and Draft/Target,
# NGram and EAGLE-3 served by one `tensorrt_llm` Python model that streams. The migration page maps every flag
# and key of this notebook to its LLM API equivalent, per release, and says what has none.
