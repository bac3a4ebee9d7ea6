# Or open the notebooks in JupyterLab (it serves /guide, the working directory): browse to
# http://<host>:8888/lab, give the token it prints, and open notebooks/04_ngram.ipynb.
jupyter lab --ip=0.0.0.0 --port=8888 --no-browser --allow-root
