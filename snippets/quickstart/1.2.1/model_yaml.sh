# specdec-guide: trtllm=1.2.1
# Replace the shipped model.yaml: every key except triton_config is passed to TensorRT-LLM's LLM(...).
cat > /workspace/repo/tensorrt_llm/1/model.yaml <<'YAML'
# A Hugging Face model name (downloaded into the mounted cache; gated: needs HF_TOKEN) or a local
# checkpoint directory.
model: meta-llama/Llama-3.1-8B-Instruct
backend: pytorch
tensor_parallel_size: 1

# NGram (prompt lookup): drafts are copied from n-grams already seen in the prompt and the output.
speculative_config:
  decoding_type: NGram
  max_draft_len: 4              # tokens proposed per step
  max_matching_ngram_size: 2    # must be set (> 0): the default 0 matches nothing
  is_public_pool: true          # one pool for all requests; false when tenants must not see each other

# Upstream's NGram examples run with the overlap scheduler off. That scheduler prepares the next
# step on the CPU while the GPU runs the current one; NGram, a two-model method, does not support it.
disable_overlap_scheduler: true

# Read by the llmapi model.py, not by LLM(). The launcher turns Triton's auto-complete off, so
# Triton does not see these: config.pbtxt must say the same (next step).
triton_config:
  max_batch_size: 0
  decoupled: true
YAML
