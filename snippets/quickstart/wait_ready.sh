# Wait until the model is loaded (HTTP 200 from the ready endpoint); loading an 8B model takes minutes.
until curl -sf "http://localhost:${TRITON_HTTP_PORT:-8000}/v2/models/tensorrt_llm/ready"; do sleep 5; done
echo "tensorrt_llm is ready"
