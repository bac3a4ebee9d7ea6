# specdec-guide: trtllm=1.1.0
# The EAGLE-3 YAML as TensorRT-LLM 1.1.0's own speculative-decoding page writes it,
# checked against the 1.1.0 release.
cat > extra_llm_api_options.yaml <<'YAML'
disable_overlap_scheduler: true
speculative_config:
  decoding_type: Eagle
  max_draft_len: 4
  speculative_model: /path/to/draft/model
YAML
specdec-guide validate --trtllm 1.1.0 extra_llm_api_options.yaml
