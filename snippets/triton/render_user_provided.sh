# Render the user_provided template with the drafter class. The drafter file is copied next to
# model.yaml, so the repository is self-contained.
specdec-guide repo render --method user_provided --model "$TARGET" \
  --drafter prompt_lookup_drafter.py:PromptLookupDrafter --engine cpu --out repo_user_provided
