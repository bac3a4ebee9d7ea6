# The same request, asking for the per-request speculative-decoding counters as well.
curl -sS --fail-with-body -X POST "http://localhost:${TRITON_HTTP_PORT:-8000}/v2/models/tensorrt_llm/generate" \
  -H 'Content-Type: application/json' \
  -d '{
        "text_input": "<|im_start|>user\nWhat is the capital of France?<|im_end|>\n<|im_start|>assistant\n",
        "sampling_param_max_tokens": 32,
        "sampling_param_exclude_input_from_output": true,
        "sampling_param_return_perf_metrics": true
      }'
