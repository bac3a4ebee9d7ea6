# From the host or the container. The llmapi model applies no chat template: the prompt carries
# Llama 3.1's turn markers itself (the tokenizer adds <|begin_of_text|>). Only keys named like the
# model's inputs reach it: the budget is sampling_param_max_tokens, and the prompt is echoed in
# text_output unless sampling_param_exclude_input_from_output is true.
curl -sS --fail-with-body -X POST "http://localhost:${TRITON_HTTP_PORT:-8000}/v2/models/tensorrt_llm/generate" \
  -H 'Content-Type: application/json' \
  -d '{
        "text_input": "<|start_header_id|>user<|end_header_id|>\n\nRename the function add to plus:\n\ndef add(a, b):\n    return a + b\n\nprint(add(1, 2))<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n",
        "sampling_param_max_tokens": 64,
        "sampling_param_exclude_input_from_output": true
      }'
