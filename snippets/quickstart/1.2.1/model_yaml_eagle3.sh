# specdec-guide: trtllm=1.2.1
# Replace the shipped model.yaml: every key except triton_config is passed to TensorRT-LLM's LLM(...).
cat > /workspace/repo/tensorrt_llm/1/model.yaml <<'YAML'
# A Hugging Face model name (downloaded into the mounted cache; gated: needs HF_TOKEN) or a local
# checkpoint directory.
model: meta-llama/Llama-3.1-8B-Instruct
backend: pytorch
tensor_parallel_size: 1

# EAGLE-3: a small head trained for this target drafts from the target's hidden states.
# On the PyTorch backend decoding_type Eagle is EAGLE-3.
speculative_config:
  decoding_type: Eagle
  max_draft_len: 3              # tokens proposed per step
  # The head downloaded in the step above: a local directory, which 1.1.0 requires.
  speculative_model_dir: /root/.cache/huggingface/heads/EAGLE3-LLaMA3.1-Instruct-8B
  # The two-model form: the head runs as a separate draft model. Both releases' feature tables list
  # Llama 3.1 8B under two-model EAGLE-3 only, and their EAGLE 3 example sets it false (see
  # "Versions and keys"). true (the release's default) selects one-model.
  eagle3_one_model: false

# Off, as the releases' EAGLE 3 example sets it for two-model. Their pages say two-model cannot use
# the overlap scheduler; the release code (PR #7651) can, so this is a choice (see "Choosing a method").
disable_overlap_scheduler: true

# Read by the llmapi model.py, not by LLM(). The launcher turns Triton's auto-complete off, so
# Triton does not see these: config.pbtxt must say the same (next step).
triton_config:
  max_batch_size: 0
  decoupled: true
YAML
