# A second copy of the model, not decoupled, for tritonclient's infer() (section 5). --force lets
# render add it to the non-empty repository; it replaces repo_ngram/tensorrt_llm_sync only.
specdec-guide repo render --method ngram --model "$TARGET" --engine cpu \
  --out repo_ngram --name tensorrt_llm_sync --decoupled false --force
