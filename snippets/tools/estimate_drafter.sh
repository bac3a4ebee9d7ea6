# Replay your own drafter class (here the guide's prompt-lookup drafter, in your clone) instead of NGram.
specdec-guide estimate log.jsonl --tokenizer "$TARGET" --summary --max-draft-len 4 \
  --drafter ../snippets/drafters/prompt_lookup_drafter.py:PromptLookupDrafter
