# One request, one response. Only keys named like the model's inputs reach it: the token budget is
# sampling_param_max_tokens (a plain "max_tokens" would be silently ignored).
curl -sS --fail-with-body -X POST "http://localhost:${TRITON_HTTP_PORT:-8000}/v2/models/tensorrt_llm/generate" \
  -H 'Content-Type: application/json' \
  -d '{
        "text_input": "The quick brown fox jumps over the lazy dog. The quick brown",
        "sampling_param_max_tokens": 24,
        "sampling_param_exclude_input_from_output": true
      }'
