# A draft from another model family: render a Draft/Target repository, then let doctor find it.
specdec-guide tiny-model --out models
specdec-guide repo render --method draft_target --model "$MODEL" --draft-model models/draft --engine cpu --out repo_dt --force
specdec-guide doctor repo_dt
