# Inside the container. TensorRT-LLM 1.1.0 reads the EAGLE-3 head from a local directory only (a hub
# id there is not downloaded), so fetch it first. The folder is inside the mounted Hugging Face cache,
# so it survives the container's --rm and the next start skips the download. The head is not gated.
python3 -c "from huggingface_hub import snapshot_download; snapshot_download('yuhuili/EAGLE3-LLaMA3.1-Instruct-8B', local_dir='/root/.cache/huggingface/heads/EAGLE3-LLaMA3.1-Instruct-8B')"
