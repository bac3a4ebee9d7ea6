# A log to estimate from: serve the prompts with the CPU engine and the real model, using the
# NGram template's keys, and keep each request and response (Triton /generate JSON lines).
# MODEL: the real model's checkpoint folder (fetched and converted once, then cached).
MODEL="${MODEL:-$(specdec-guide models fetch | tail -n 1)}"
specdec-guide repo render --method ngram --model "$MODEL" --engine cpu --out repo_ngram --force
python snippets/tools/serve_log.py repo_ngram/tensorrt_llm/1/model.yaml snippets/tools/prompts.jsonl log.jsonl --max-tokens 48
