# specdec-guide: trtllm=1.1.0
# Inside the container. The same NGram keys through trtllm-serve, whose /metrics reports every
# iteration. Triton holds the GPU: stop it first (the container keeps running), and wait until its
# launcher (mpirun) and its Python backend's processes, which hold the model, are gone too.
pkill -x tritonserver
# ([t] keeps pgrep -f from matching this command line itself.)
for try in $(seq 120); do
  pgrep -x tritonserver > /dev/null || pgrep -x mpirun > /dev/null || pgrep -f '[t]riton_python_backend_stub' > /dev/null || break
  sleep 1
done
nvidia-smi --query-gpu=memory.used --format=csv  # back near 0 MiB before trtllm-serve loads
cat > /workspace/serve_check.yaml <<'YAML'
enable_iter_perf_stats: true     # /metrics: one record per iteration
disable_overlap_scheduler: true
speculative_config:
  decoding_type: NGram
  max_draft_len: 4
  max_matching_ngram_size: 2
  is_public_pool: true
YAML
trtllm-serve meta-llama/Llama-3.1-8B-Instruct --backend pytorch --host 127.0.0.1 --port 8000 \
  --extra_llm_api_options /workspace/serve_check.yaml > /workspace/serve_check.log 2>&1 &
serve=$!
# Ready within 30 minutes, or stop with the log's tail.
for try in $(seq 180); do
  curl -sf http://127.0.0.1:8000/health > /dev/null && break
  kill -0 "$serve" 2> /dev/null || break
  sleep 10
done
# No `exit` here: this shell is the container's, and leaving it would stop (and remove) the container.
if curl -sf http://127.0.0.1:8000/health > /dev/null; then
  python3 /workspace/check_acceptance.py --openai http://127.0.0.1:8000 \
    --model meta-llama/Llama-3.1-8B-Instruct --max-draft-len 4
else
  tail -20 /workspace/serve_check.log
fi
kill "$serve" 2> /dev/null; wait "$serve" 2> /dev/null || true  # stopped by the kill: not a failure
