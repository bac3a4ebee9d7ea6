# specdec-guide: trtllm=1.2.1
# Serve Llama-3.1-8B-Instruct on the PyTorch backend with the settings of ngram.yaml, inside the
# container of the quick start: --host 0.0.0.0 lets Docker forward the port it publishes on the
# host's loopback. Run directly on a host (no container), use --host 127.0.0.1: trtllm-serve has no
# authentication.
trtllm-serve meta-llama/Llama-3.1-8B-Instruct \
  --backend pytorch \
  --host 0.0.0.0 --port 8000 \
  --max_batch_size 16 \
  --extra_llm_api_options ngram.yaml
