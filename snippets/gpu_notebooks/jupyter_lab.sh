# Or open the notebooks in JupyterLab (it serves /guide, the working directory): browse to
# http://127.0.0.1:8888/lab on the GPU host (from another machine, through ssh -L 8888:127.0.0.1:8888 GPU_HOST),
# give the token it prints, and open notebooks/04_ngram.ipynb.
jupyter lab --ip=0.0.0.0 --port=8888 --no-browser --allow-root
