# Streaming: server-sent events ("data: {...}"), each holding the whole text so far, not only
# the new piece. Needs a decoupled model and "streaming": true in the request.
curl -sS --fail-with-body -N -X POST "http://localhost:${TRITON_HTTP_PORT:-8000}/v2/models/tensorrt_llm/generate_stream" \
  -H 'Content-Type: application/json' \
  -d '{
        "text_input": "<|im_start|>user\nWhat is the capital of France?<|im_end|>\n<|im_start|>assistant\n",
        "streaming": true,
        "sampling_param_max_tokens": 32,
        "sampling_param_exclude_input_from_output": true
      }'
