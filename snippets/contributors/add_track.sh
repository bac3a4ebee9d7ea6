# In your clone, with the venv active: NEW is the new release's track id, OLD the pinned track
# closest to it. tests/test_add_track.py runs these lines in a copy of the repository.
NEW=1.3.0
OLD=1.2.1
python scripts/add_track.py "$NEW" --from "$OLD"
python -m pytest -p no:cacheprovider tests/test_registry.py -q
python scripts/add_track.py --left
