# In either container, once: both checkpoints into /workspace/hf (the host folder both mount).
# Both are gated on Hugging Face: accept each model's licence first; HF_TOKEN was passed in.
huggingface-cli download meta-llama/Llama-3.1-8B-Instruct --local-dir /workspace/hf/Llama-3.1-8B-Instruct
huggingface-cli download meta-llama/Llama-3.2-1B-Instruct --local-dir /workspace/hf/Llama-3.2-1B-Instruct
