# Inside the container. The guide's package without dependencies, so the container's torch and
# tensorrt_llm stay as shipped (make test-gpu's tests use it; the notebooks do not import it); then
# the notebook tools (the versions make test-gpu installs, plus JupyterLab to open a notebook).
python3 -m pip install --no-deps -e /guide
python3 -m pip install pytest==9.1.1 nbmake==1.5.5 jupytext==1.19.6 jupyterlab==4.6.6
