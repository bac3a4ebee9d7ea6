# The same replay with verification priced at batch 16, from the stored H200 measurement.
specdec-guide estimate log.jsonl --tokenizer "$TARGET" --config repo_ngram/tensorrt_llm/1/model.yaml \
  --summary --batch-size 16
