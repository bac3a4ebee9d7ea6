# Try max_draft_len x max_matching_ngram_size on the same log; plot acceptance length.
specdec-guide estimate log.jsonl --tokenizer "$TARGET" --sweep --draft-lens 1,2,4,6 --ngram-sizes 1,2,3 \
  --plot sweep.png
