# Check the repository rendered above, and the checkpoint it names, before serving it.
specdec-guide doctor repo_ngram
