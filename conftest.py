"""Repository-wide pytest setup: the notebooks' tiers.

nbmake collects every ``notebooks/*.ipynb`` and runs each as its own item. CPU notebooks run in
the CPU tier; GPU notebooks are marked ``gpu`` and skipped with their reason unless this machine
has an NVIDIA GPU and tensorrt_llm (then ``make test-gpu`` runs them).
"""

from __future__ import annotations

import functools
from pathlib import Path

import pytest


@functools.lru_cache(maxsize=None)
def _tier(path: str) -> str:
    import nbformat

    return (nbformat.read(path, as_version=4).metadata.get("specdec_guide") or {}).get("tier", "")


@functools.lru_cache(maxsize=None)
def _gpu_missing() -> tuple[str, ...]:
    from specdec_guide.gpu_tier import missing

    return tuple(missing())


def pytest_collection_modifyitems(config, items):
    from specdec_guide.gpu_tier import SKIP_REASON

    for item in items:
        path = Path(str(item.fspath))
        if path.suffix == ".ipynb" and _tier(str(path)) == "gpu":
            item.add_marker(pytest.mark.gpu)
            if _gpu_missing():
                item.add_marker(pytest.mark.skip(reason=SKIP_REASON))


def pytest_configure(config):
    # One way to store notebook outputs: `make regen WHAT=notebooks` stamps them with their provenance.
    if getattr(config.option, "overwrite", False):
        raise pytest.UsageError("notebook outputs are stored by `make regen WHAT=notebooks` (stamped), not --overwrite")
