# Streaming: server-sent events ("data: {...}"). On TensorRT-LLM 1.1.0 and 1.2.1 the llmapi model
# sends ONE event with the whole text (it hands `streaming` to the wrong argument; TensorRT-LLM PR
# #14079, after 1.2.1, streams one event per step, each with the whole text so far).
# The request needs "streaming": true and model.yaml's triton_config.decoupled: true.
curl -sS --fail-with-body -N -X POST "http://localhost:${TRITON_HTTP_PORT:-8000}/v2/models/tensorrt_llm/generate_stream" \
  -H 'Content-Type: application/json' \
  -d '{
        "text_input": "<|im_start|>user\nWhat is the capital of France?<|im_end|>\n<|im_start|>assistant\n",
        "streaming": true,
        "sampling_param_max_tokens": 32,
        "sampling_param_exclude_input_from_output": true
      }'
