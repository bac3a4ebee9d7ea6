# Replay NGram with the keys of the model.yaml you would deploy, over the logged requests.
specdec-guide estimate log.jsonl --tokenizer "$TARGET" --config repo_ngram/tensorrt_llm/1/model.yaml
