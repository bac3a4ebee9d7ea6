# AFTER: the same request to the llmapi model. num_draft_tokens is gone (max_draft_len in model.yaml).
# No stop strings: sampling_param_stop fails the request on 1.1.0 and 1.2.1 (see the inputs table).
curl -sS -X POST "http://localhost:${TRITON_HTTP_PORT:-8000}/v2/models/tensorrt_llm/generate" -d '{
  "text_input": "Write the numbers from 1 to 20, comma separated:",
  "sampling_param_max_tokens": 64, "sampling_param_temperature": 0.0, "sampling_param_top_k": 1,
  "sampling_param_exclude_input_from_output": true, "sampling_param_return_perf_metrics": true
}'
