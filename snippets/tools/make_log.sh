# A log to estimate from: serve the prompts with the CPU engine, the real model and the
# repository's NGram keys, and keep each request and response (Triton /generate JSON lines).
# serve_log.py and prompts.jsonl are in your clone, under snippets/tools/ (shown below).
python ../snippets/tools/serve_log.py repo_ngram/tensorrt_llm/1/model.yaml \
  ../snippets/tools/prompts.jsonl log.jsonl --max-tokens 48
