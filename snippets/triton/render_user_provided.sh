# The same drafter class on the CPU reference engine: render the user_provided template with it.
# The drafter file is copied next to model.yaml, so the repository is self-contained.
specdec-guide repo render --method user_provided --model "${TARGET:-models/target}" \
  --drafter "${DRAFTER_FILE:-prompt_lookup_drafter.py}:PromptLookupDrafter" \
  --engine cpu --out repo_user_provided
