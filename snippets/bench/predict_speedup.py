"""Predict the speed-up of speculation from a measured acceptance length and the draft's cost.

Usage: python3 predict_speedup.py ACCEPTANCE_LENGTH DRAFT_LEN DRAFT_COST
  ACCEPTANCE_LENGTH  tokens per target step you measured (>= 1)
  DRAFT_LEN          max_draft_len of your speculative_config
  DRAFT_COST         one draft step's time / one target step's time (0 for NGram)
The formulas are the guide's own (specdec_guide.speculation, Leviathan et al. 2023): they
assume a target step that scores DRAFT_LEN + 1 tokens costs what a one-token step costs.
"""

import sys

from specdec_guide.speculation import expected_speedup, per_token_acceptance_from_length

length, draft_len, draft_cost = float(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
a = per_token_acceptance_from_length(length, draft_len)
print(f"per-token acceptance a = {a:.3f}")
print(f"TensorRT-LLM acceptance_rate if every step drafts {draft_len}: {(length - 1) / draft_len:.3f}")
print(f"predicted speed-up: {expected_speedup(a, draft_len, draft_cost):.2f}x")
