# Streaming from a model rendered with --decoupled false (TRITON_MODEL names it).
curl -sS -N -X POST "http://${TRITON_HTTP:-localhost:8000}/v2/models/${TRITON_MODEL:-tensorrt_llm}/generate_stream" \
  -H 'Content-Type: application/json' \
  -d '{"text_input": "abc abc abc", "streaming": true, "sampling_param_max_tokens": 8}'
echo
