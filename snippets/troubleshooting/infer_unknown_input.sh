# A KServe /infer request, as a benchmark client builds it, with an OpenAI-style max_tokens
# input. TRITON_MODEL names a model that is not decoupled (/infer refuses decoupled ones).
curl -sS -X POST "http://${TRITON_HTTP:-localhost:8000}/v2/models/${TRITON_MODEL:-tensorrt_llm}/infer" \
  -H 'Content-Type: application/json' \
  -d '{"inputs": [
        {"name": "text_input", "shape": [1], "datatype": "BYTES", "data": ["abc abc abc"]},
        {"name": "max_tokens", "shape": [1], "datatype": "INT32", "data": [8]}
      ]}'
echo
