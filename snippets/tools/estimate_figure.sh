# An acceptance figure instead of a log: NGram at acceptance length 2.5, max_draft_len 4, batch 16.
specdec-guide estimate --method ngram --acceptance-length 2.5 --max-draft-len 4 --batch-size 16
