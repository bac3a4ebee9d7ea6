# The drafter file is snippets/drafters/prompt_lookup_drafter.py in your clone: copy it here.
cp ../snippets/drafters/prompt_lookup_drafter.py .
