# One request, one response. The llmapi model passes text_input to the model as it is, so the client
# applies the model's chat template (SmolLM2's <|im_start|> turns). Only keys named like the model's
# inputs reach it: the token budget is sampling_param_max_tokens ("max_tokens" would be ignored).
curl -sS --fail-with-body -X POST "http://localhost:${TRITON_HTTP_PORT:-8000}/v2/models/tensorrt_llm/generate" \
  -H 'Content-Type: application/json' \
  -d '{
        "text_input": "<|im_start|>user\nWhat is the capital of Germany?<|im_end|>\n<|im_start|>assistant\n",
        "sampling_param_max_tokens": 32,
        "sampling_param_exclude_input_from_output": true
      }'
