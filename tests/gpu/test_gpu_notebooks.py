"""GPU tier: execute every GPU notebook in its container and store its outputs with a stamp.

``notebooks.execute`` runs the notebook top to bottom in a fresh kernel (nbclient, as nbmake
does) and writes the outputs into the .ipynb with the provenance stamp: GPU, driver, container
image (``SPECDEC_GUIDE_CONTAINER_IMAGE``), package versions, date, duration and the hash of the
code that ran. The GPU workflow commits the stamped notebooks back for review.
"""

from __future__ import annotations

import os
from importlib import metadata
from pathlib import Path

import pytest

from specdec_guide.gpu_tier import SKIP_REASON, missing
from specdec_guide.notebooks import CONTAINER_ENV, GPU_CELL_TIMEOUT_S, execute, list_notebooks, stale_outputs

REPO = Path(__file__).resolve().parents[2]
GPU_NOTEBOOKS = [i for i in list_notebooks(REPO) if i.tier == "gpu"]


@pytest.mark.gpu
@pytest.mark.skipif(bool(missing()), reason=SKIP_REASON)
@pytest.mark.parametrize("info", GPU_NOTEBOOKS, ids=lambda i: i.source.name)
def test_gpu_notebook_runs_in_its_container_and_stores_stamped_outputs(info):
    image = os.environ.get(CONTAINER_ENV)
    # A notebook that needs several GPUs (MTP on DeepSeek-R1: eight) declares min_gpus.
    needed = int(info.meta.get("min_gpus", 1))
    if needed > 1:
        import torch

        if torch.cuda.device_count() < needed:
            pytest.skip(f"{info.source.name} needs {needed} GPUs; this machine has {torch.cuda.device_count()}")
    if image and image != info.meta.get("container"):
        pytest.skip(f"{info.source.name} is pinned to {info.meta.get('container')}; this run is in {image}")
    installed = metadata.version("tensorrt_llm")
    if installed != str(info.meta.get("trtllm_version")):
        pytest.skip(f"{info.source.name} is pinned to TensorRT-LLM {info.meta.get('trtllm_version')}; "
                    f"this container has {installed}")
    execute(info, timeout=GPU_CELL_TIMEOUT_S)
    assert stale_outputs(info) is None
