# Render the NGram template into a model repository for the CPU reference engine.
# TARGET: a local Hugging Face checkpoint (e.g. the tiny test model: specdec-guide tiny-model --out models).
specdec-guide repo render --method ngram --model "${TARGET:-models/target}" --engine cpu --out repo_ngram
