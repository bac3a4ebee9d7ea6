# specdec-guide: trtllm=1.1.0
# Serve Llama-3.1-8B-Instruct on the PyTorch backend with the settings of ngram.yaml.
trtllm-serve meta-llama/Llama-3.1-8B-Instruct \
  --backend pytorch \
  --host 0.0.0.0 --port 8000 \
  --max_batch_size 16 \
  --extra_llm_api_options ngram.yaml
