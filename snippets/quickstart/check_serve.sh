# specdec-guide: trtllm=1.1.0
# Inside the container. The same NGram keys through trtllm-serve, whose /metrics reports every
# iteration. Triton holds the GPU: stop it first (the container keeps running).
pkill -x tritonserver; while pgrep -x tritonserver > /dev/null; do sleep 1; done
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
curl -sf http://127.0.0.1:8000/health > /dev/null || { tail -20 /workspace/serve_check.log; kill "$serve"; exit 1; }
python3 /workspace/check_acceptance.py --openai http://127.0.0.1:8000 \
  --model meta-llama/Llama-3.1-8B-Instruct --max-draft-len 4
kill "$serve"; wait "$serve" 2> /dev/null || true  # stopped by the kill: not a failure
