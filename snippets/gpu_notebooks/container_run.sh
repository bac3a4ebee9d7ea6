# On the GPU host, in the root of your clone of this guide. Starts the container named in the
# notebook's header (25.12: TensorRT-LLM 1.1.0) with the clone mounted at /guide, the Hugging Face
# cache mounted (weights are downloaded once), HF_TOKEN passed for gated models, and Jupyter's port.
# Jupyter's port is published on the host's loopback only: JupyterLab runs as root in the container,
# and only its token (printed in the terminal) stands between that port and a root shell. From another machine, tunnel it (ssh -L 8888:127.0.0.1:8888
# GPU_HOST) rather than writing -p 8888:8888, which opens it on every interface of the host.
docker run --rm -it --name specdec-notebooks \
  --gpus all --shm-size=2g --ulimit memlock=-1 --ulimit stack=67108864 \
  -p 127.0.0.1:8888:8888 \
  -v "$PWD:/guide" \
  -v "$HOME/.cache/huggingface:/root/.cache/huggingface" \
  -e HF_TOKEN -w /guide \
  nvcr.io/nvidia/tritonserver:25.12-trtllm-python-py3 bash
