# The same request twice, asking for 8 tokens: once as "max_tokens", once under the model's
# input name. Prints how much text came back (the CPU stand-in's tokenizer is byte-level, so
# characters are tokens).
for key in max_tokens sampling_param_max_tokens; do
  printf '%s: ' "$key"
  curl -sS --fail-with-body -X POST "http://${TRITON_HTTP:-localhost:8000}/v2/models/tensorrt_llm/generate" \
    -H 'Content-Type: application/json' \
    -d "{\"text_input\": \"abc abc abc\", \"$key\": 8, \"sampling_param_exclude_input_from_output\": true}" |
    python3 -c 'import json, sys; print(len(json.load(sys.stdin)["text_output"]), "characters")'
done
