# In the second terminal, in the same scratch folder: activate the venv here too.
source ../.venv/bin/activate
