# A draft from another model family: render a Draft/Target repository, then let doctor find it.
specdec-guide tiny-model --out models
specdec-guide repo render --method draft_target --model "$TARGET" --draft-model models/draft \
  --engine cpu --out repo_dt --force
# doctor exits with status 1 when it finds an error (a CI job stops there); here, show the status.
specdec-guide doctor repo_dt || echo "exit status $?"
