# In the root of your clone. `make test` (or `make venv`) created .venv there; activating it puts
# `specdec-guide` and the venv's python3 on PATH in this terminal.
source .venv/bin/activate
# The pages write models and model repositories: keep them in a scratch folder (git ignores it).
mkdir -p scratch && cd scratch
