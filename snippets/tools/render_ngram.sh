# The NGram template rendered for the CPU engine and the real model: the next commands read its
# keys. --force replaces repo_ngram/tensorrt_llm only (an earlier page may have rendered it).
specdec-guide repo render --method ngram --model "$TARGET" --engine cpu --out repo_ngram --force
