# In your clone, with the venv active: NAME is the new method's id, LIKE the method of
# methods.yaml closest to it. tests/test_add_method.py runs these lines in a copy of the repository.
NAME=suffix_automaton
LIKE=ngram
python scripts/add_method.py "$NAME" --like "$LIKE"
python -m pytest -p no:cacheprovider tests/test_registry.py -q
python scripts/add_method.py --left
