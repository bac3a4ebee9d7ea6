# On the GPU host. Starts the pinned container (TensorRT-LLM 1.2.1) with a shell inside it.
# --shm-size: Triton's Python backend passes tensors through shared memory (Docker's default is 64 MB).
# The Hugging Face cache is mounted so the weights are downloaded once; the container runs as root,
# so its cache is /root/.cache/huggingface. HF_TOKEN (exported on the host) is passed for gated models.
# Ports are published on the host's loopback only (127.0.0.1): Triton has no authentication, so
# anyone who reaches a published port can use the model. To open one on purpose, write -p 8000:8000
# (every interface of the host: anyone who can reach the GPU box can then send requests).
docker run --rm -it --name specdec-quickstart \
  --gpus all --shm-size=2g --ulimit memlock=-1 --ulimit stack=67108864 \
  -p 127.0.0.1:8000:8000 -p 127.0.0.1:8001:8001 -p 127.0.0.1:8002:8002 \
  -v "$HOME/.cache/huggingface:/root/.cache/huggingface" \
  -e HF_TOKEN \
  nvcr.io/nvidia/tritonserver:26.04-trtllm-python-py3 bash
