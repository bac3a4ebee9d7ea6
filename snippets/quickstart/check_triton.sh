# Inside the container, with Triton still running: check_acceptance.py (above) saved as
# /workspace/check_acceptance.py. 4 is model.yaml's max_draft_len for NGram (3 on the EAGLE-3 tab).
python3 /workspace/check_acceptance.py --triton http://localhost:8000 --max-draft-len 4
