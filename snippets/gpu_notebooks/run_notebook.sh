# Inside the container, in /guide. Runs one notebook top to bottom and fails on the first failing
# cell; the .ipynb in the clone is left as it was (nbmake keeps no outputs). A cell that downloads
# weights or builds a model can take long, hence the per-cell timeout of an hour.
python3 -m pytest -p no:cacheprovider --nbmake --nbmake-timeout=3600 notebooks/04_ngram.ipynb
