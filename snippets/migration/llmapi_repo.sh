# specdec-guide: trtllm=1.1.0
# AFTER: the same Draft/Target with the LLM API (Triton 25.12). No engines, no build: one Triton
# model, tensorrt_llm, whose model.yaml names both checkpoints (the download step's, in the mounted
# /workspace). Clients call tensorrt_llm.
REPO=/workspace/repo
mkdir -p "$REPO" && cp -R /app/all_models/llmapi/. "$REPO/"
cat > "$REPO/tensorrt_llm/1/model.yaml" <<'YAML'
model: /workspace/hf/Llama-3.1-8B-Instruct
backend: pytorch
tensor_parallel_size: 1
speculative_config:
  decoding_type: DraftTarget
  max_draft_len: 4
  speculative_model_dir: /workspace/hf/Llama-3.2-1B-Instruct
disable_overlap_scheduler: true
kv_cache_config:
  free_gpu_memory_fraction: 0.8
triton_config:
  max_batch_size: 0
  decoupled: false
YAML
python3 /app/scripts/launch_triton_server.py --model_repo "$REPO"
