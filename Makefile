# Two commands on a fresh machine (Python 3.11 or 3.12, and make): `make serve`, `make test`.
# The first interpreter of 3.11/3.12 found: the pinned set has no wheels beyond that range
# (numpy<2, which nvidia-pytriton needs, stops at 3.12; transformers 5 and matplotlib 3.11 need 3.11+).
PYTHON ?= $(shell for p in python3.11 python3.12 python3; do \
  $$p -c 'import sys; sys.exit(not (3, 11) <= sys.version_info[:2] <= (3, 12))' >/dev/null 2>&1 && { echo $$p; break; }; done)
VENV ?= .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
# Not 8000: Triton's HTTP endpoint takes 8000 in the tutorials, so both can run side by side.
PORT ?= 8080
STAMP := $(VENV)/.installed-stamp
export NO_MKDOCS_2_WARNING := 1
# As if the venv were activated: snippets call `specdec-guide` and `python3` by name.
export PATH := $(abspath $(BIN)):$(PATH)
export PYTHONDONTWRITEBYTECODE := 1

.PHONY: venv aiperf serve build test test-gpu mutation regen lock aiperf-lock clean

# Re-install only when the dependency pins change.
$(STAMP): pyproject.toml constraints.txt
	@test -x $(BIN)/python || test -n "$(PYTHON)" || { \
	  echo "make: the guide needs Python 3.11 or 3.12 (none found on PATH; set PYTHON=/path/to/python3.11)" >&2; exit 1; }
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade "pip>=24"
	$(BIN)/python -m pip install --quiet -c constraints.txt -e ".[docs,engine,test]"
	@touch $@

venv: $(STAMP)

# AIPerf (the benchmarking notebook's load generator) in its own venv: ~140 packages, 1.2 GB, none
# of which the guide itself needs, some pinned differently (numpy 2). This package goes in without
# dependencies so that AIPerf finds our endpoint plugin (entry point `aiperf.plugins`).
AIPERF_VENV ?= .venv-aiperf
AIPERF_STAMP := $(AIPERF_VENV)/.installed-stamp
$(AIPERF_STAMP): constraints-aiperf.txt pyproject.toml
	@test -x $(AIPERF_VENV)/bin/python || test -n "$(PYTHON)" || { \
	  echo "make: AIPerf needs Python 3.11 or 3.12 (none found on PATH; set PYTHON=/path/to/python3.11)" >&2; exit 1; }
	@test -x $(AIPERF_VENV)/bin/python || $(PYTHON) -m venv $(AIPERF_VENV)
	$(AIPERF_VENV)/bin/python -m pip install --quiet --upgrade "pip>=24"
	$(AIPERF_VENV)/bin/python -m pip install --quiet -c constraints-aiperf.txt aiperf==0.13.0
	$(AIPERF_VENV)/bin/python -m pip install --quiet --no-deps -e .
	@touch $@

aiperf: $(AIPERF_STAMP)  ## AIPerf 0.13.0 in .venv-aiperf, with the guide's Triton endpoint plugin

serve: venv  ## build and serve the guide at http://$(HOST):$(PORT)
	$(BIN)/mkdocs serve --strict --dev-addr $(HOST):$(PORT)

build: venv  ## build the static site into site/
	$(BIN)/mkdocs build --strict

test: venv aiperf  ## the CPU tier: site, notebooks, validators, real tritonserver
	$(BIN)/python -m pytest

# Not part of `make test`: mutmut mutates each core module and runs its own unit tests against every
# mutant (one worker, niced: minutes per module). scripts/mutation.py maps modules to tests, prints
# killed/survived/equivalent and the score per module, and fails under 90%.
mutation: venv  ## mutation run of the core modules against their unit tests (MODULES="ngram ..." for some)
	nice -n 15 $(BIN)/python scripts/mutation.py $(MODULES)

# Not part of `make test` either: each mutant breaks the CPU stand-in on one fact, in a copy of src/,
# and runs only that fact's fidelity tests (a tritonserver per mutant; about a minute each on 2 cores).
# Fails when a mutant survives or no longer applies (scripts/fidelity_mutants.py; audit/fidelity_mutants.yaml).
fidelity-mutants: venv  ## break the stand-in once per behaviour fact and check its fidelity test fails
	nice -n 10 $(BIN)/python scripts/fidelity_mutants.py $(MUTANTS)

# The GPU tier runs in the TensorRT-LLM / Triton container's own Python (its torch and
# tensorrt_llm must stay as shipped), not in .venv: it checks the machine first, then installs
# this package without dependencies plus the test tools, then runs what is marked `gpu`:
# tests/gpu executes each GPU notebook pinned to this container (SPECDEC_GUIDE_CONTAINER_IMAGE)
# and stores its outputs with a provenance stamp (tests/gpu/test_gpu_notebooks.py).
GPU_PYTHON ?= python3
test-gpu:  ## the GPU tier: needs an NVIDIA GPU and tensorrt_llm (run it inside the container)
	PYTHONPATH=src $(GPU_PYTHON) -m specdec_guide.gpu_tier
	$(GPU_PYTHON) -m pip install --quiet --no-deps -e .
	$(GPU_PYTHON) -m pip install --quiet pytest==9.1.1 pytest-timeout==2.4.0 nbmake==1.5.5 jupytext==1.19.6
	$(GPU_PYTHON) -m pytest -m gpu -p no:cacheprovider -o timeout=7200 --override-ini="addopts=-ra" tests/gpu

# The one way to refresh what the repository stores from a run (notebook outputs, what the walked
# pages print, generated snippets, benchmark boxes): `python -m specdec_guide.regen` lists the targets.
# WHAT="walks notebooks:04_ngram" for some; review the diff before committing it.
regen: venv aiperf  ## regenerate stored outputs (WHAT="TARGET[:ITEM] ..."; default all)
	$(BIN)/python -m specdec_guide.regen $(or $(WHAT),all)

lock: venv  ## refresh constraints.txt from the current venv
	$(BIN)/python -m pip freeze --exclude-editable --exclude specdec-guide > constraints.txt

aiperf-lock: aiperf  ## refresh constraints-aiperf.txt from .venv-aiperf
	{ sed -n '1,2p' constraints-aiperf.txt; $(AIPERF_VENV)/bin/python -m pip freeze --exclude-editable \
	  --exclude specdec-guide --exclude pip; } > constraints-aiperf.txt.new && mv constraints-aiperf.txt.new constraints-aiperf.txt

clean:
	rm -rf site .cache .pytest_cache
