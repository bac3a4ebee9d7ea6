# specdec-guide: trtllm=1.1.0
# decoding_type Eagle3, as newer guides write it, checked against the 1.1.0 release.
cat > extra_llm_api_options.yaml <<'YAML'
speculative_config:
  decoding_type: Eagle3
  max_draft_len: 3
  speculative_model_dir: yuhuili/EAGLE3-LLaMA3.1-Instruct-8B
YAML
specdec-guide validate --trtllm 1.1.0 extra_llm_api_options.yaml
