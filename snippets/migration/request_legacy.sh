# BEFORE: a request to the BLS model (the ensemble takes the same inputs, without num_draft_tokens).
curl -sS -X POST "http://localhost:${TRITON_HTTP_PORT:-8000}/v2/models/tensorrt_llm_bls/generate" -d '{
  "text_input": "Write the numbers from 1 to 20, comma separated:",
  "max_tokens": 64, "temperature": 0.0, "top_k": 1,
  "exclude_input_in_output": true, "return_perf_metrics": true, "num_draft_tokens": 4
}'
