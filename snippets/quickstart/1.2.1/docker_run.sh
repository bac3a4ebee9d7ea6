# On the GPU host. Starts the pinned container (TensorRT-LLM 1.2.1) with a shell inside it.
# --shm-size: Triton's Python backend passes tensors through shared memory (Docker's default is 64 MB).
# The Hugging Face cache is mounted so the weights are downloaded once; the container runs as root,
# so its cache is /root/.cache/huggingface. HF_TOKEN (exported on the host) is passed for gated models.
docker run --rm -it --name specdec-quickstart \
  --gpus all --shm-size=2g --ulimit memlock=-1 --ulimit stack=67108864 \
  -p 8000:8000 -p 8001:8001 -p 8002:8002 \
  -v "$HOME/.cache/huggingface:/root/.cache/huggingface" \
  -e HF_TOKEN \
  nvcr.io/nvidia/tritonserver:26.04-trtllm-python-py3 bash
