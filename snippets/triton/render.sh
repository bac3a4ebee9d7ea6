# Render the NGram template into a model repository for the CPU reference engine.
# TARGET: the model folder from `specdec-guide models fetch` (or any local Hugging Face checkpoint).
specdec-guide repo render --method ngram --model "$TARGET" --engine cpu --out repo_ngram
