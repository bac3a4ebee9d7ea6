# AIPerf 0.13.0 against Triton's llmapi model: streaming, one run per concurrency level.
# Needs `make aiperf` (AIPerf in .venv-aiperf with this guide's endpoint plugin `triton_llmapi`).
# TRITON_HTTP=host:port  MODEL=model name in the repository  TOKENIZER=local tokenizer dir
# PROMPTS=single_turn JSONL ({"text": ..., "output_length": N} per line)  OUT=results dir
# --prompt-corpus random: the prompts come from PROMPTS, so AIPerf need not tokenize its built-in
# corpus (5 MB of Shakespeare, for synthetic prompts) at start-up; the requests are the same.
# --request-rate 1000 --arrival-pattern constant: with --concurrency alone, AIPerf polls without pause
# for a free slot while all are taken, which keeps a CPU core busy until its last request is sent. At
# a constant 1000 requests/s it looks once a millisecond instead (measured on 2 cores: about a fifth
# of one), and --concurrency still caps the requests in flight. Level N starts its first N requests
# over N ms, and the rate holds requests back only if they take under N ms each. (An added warm-up,
# --warmup-request-count, over several levels is paced but not capped.)
aiperf profile \
  --model "${MODEL:-tensorrt_llm}" \
  --url "http://${TRITON_HTTP:-localhost:8000}/v2/models/${MODEL:-tensorrt_llm}" \
  --endpoint-type triton_llmapi \
  --streaming \
  --input-file "$PROMPTS" \
  --custom-dataset-type single_turn \
  --tokenizer "$TOKENIZER" \
  --concurrency "${CONCURRENCY:-1,2,4}" \
  --request-rate 1000 --arrival-pattern constant \
  --request-count "${REQUESTS:-8}" \
  --export-level raw \
  --artifact-dir "$OUT" \
  --no-server-metrics \
  --no-gpu-telemetry \
  --ui-type none \
  --prompt-corpus random
