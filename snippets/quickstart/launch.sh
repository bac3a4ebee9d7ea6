# Start Triton on the repository: HTTP 8000, gRPC 8001, metrics 8002 (the script's defaults).
# The script starts tritonserver under mpirun in the background and returns at once; the server's
# log keeps printing in this terminal. The first start downloads the weights.
python3 /app/scripts/launch_triton_server.py --model_repo=/workspace/repo
