# On the GPU host. One container per server, from the same image: each has its own GPU, and its
# host ports are its own (-p), while inside each the launcher keeps its defaults 8000-8002, so
# neither launcher sees the other's tritonserver. /workspace is a folder on the host in both:
# the containers are --rm, and the checkpoints, engines and repositories must outlive them.
# Ports go to the host's loopback only (Triton has no authentication); -p 9000:8000 without the
# address would open them on every interface of the host.
mkdir -p "$HOME/specdec-workspace"
# The legacy server (engines): GPU 0, on the host's ports 9000 (HTTP), 9001 (gRPC), 9002 (metrics).
docker run --rm -it --name specdec-legacy \
  --gpus '"device=0"' --shm-size=2g --ulimit memlock=-1 --ulimit stack=67108864 \
  -p 127.0.0.1:9000:8000 -p 127.0.0.1:9001:8001 -p 127.0.0.1:9002:8002 \
  -v "$HOME/specdec-workspace:/workspace" -e HF_TOKEN \
  nvcr.io/nvidia/tritonserver:25.12-trtllm-python-py3 bash
# In a second terminal, the llmapi server: GPU 1, on the host's ports 8000-8002.
docker run --rm -it --name specdec-llmapi \
  --gpus '"device=1"' --shm-size=2g --ulimit memlock=-1 --ulimit stack=67108864 \
  -p 127.0.0.1:8000:8000 -p 127.0.0.1:8001:8001 -p 127.0.0.1:8002:8002 \
  -v "$HOME/specdec-workspace:/workspace" -e HF_TOKEN \
  nvcr.io/nvidia/tritonserver:25.12-trtllm-python-py3 bash
