# specdec-guide: trtllm=1.1.0
# Keys from a 1.0 release candidate (pytorch_weights_path, use_cuda_graph),
# checked against the 1.1.0 release.
cat > extra_llm_api_options.yaml <<'YAML'
use_cuda_graph: true
speculative_config:
  decoding_type: Eagle
  max_draft_len: 4
  pytorch_weights_path: /models/eagle3
YAML
specdec-guide validate --trtllm 1.1.0 extra_llm_api_options.yaml
