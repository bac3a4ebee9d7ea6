# Is the server up, and is the model loaded? (HTTP 200 = ready.)
curl -sS --fail-with-body "http://localhost:${TRITON_HTTP_PORT:-8000}/v2/health/ready" && echo "server ready"
curl -sS --fail-with-body "http://localhost:${TRITON_HTTP_PORT:-8000}/v2/models/tensorrt_llm/ready" && echo "model ready"
