# Show a configuration file, then check it against TensorRT-LLM 1.1.0 before a server sees it.
# CONFIG names the file (the page runs this on the YAML of each upstream report).
CONFIG="${CONFIG:-extra_llm_api_options.yaml}"
cat "$CONFIG"
echo "----"
specdec-guide validate --trtllm 1.1.0 "$CONFIG"
