# Inside the container. The image ships TensorRT-LLM's Triton "llmapi" model at /app/all_models/llmapi.
# Copy its contents ("/." at the end) so that running this twice does not nest a second copy.
mkdir -p /workspace/repo
cp -R /app/all_models/llmapi/. /workspace/repo/
