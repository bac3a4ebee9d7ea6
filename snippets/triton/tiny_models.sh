# Write the deterministic tiny target and draft models to models/target and models/draft.
specdec-guide tiny-model --out models
