"""Helpers for building the site in tests: on the real tree or on a throw-away copy."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: What a site build reads: copying these gives an independent tree a test may break.
SITE_INPUTS = ("mkdocs.yml", "docs", "notebooks", "snippets", "model_repo_templates", "benchmarks", "src", "tests")
#: mkdocs-jupyter's render cache (its default cache_dir), which a build of this checkout fills. An
#: entry is keyed by a notebook's bytes and the plugin's options, so a copy that carries it converts
#: only the notebooks it changed (a whole conversion costs a build about 4 CPU s).
RENDER_CACHE = Path(".cache") / "mkdocs-jupyter"


def build(root: Path, out: Path) -> subprocess.CompletedProcess:
    """``mkdocs build --strict`` of ``root`` into ``out``; returns the finished process."""
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=root, env=env, capture_output=True, text=True, timeout=300,
    )


def copy_tree(dest: Path) -> Path:
    """A copy of the site's inputs (symlinks kept as links) that a test can break safely, with the
    notebook render cache where a build of this checkout has written it."""
    dest.mkdir(parents=True, exist_ok=True)
    if (ROOT / RENDER_CACHE).is_dir():
        shutil.copytree(ROOT / RENDER_CACHE, dest / RENDER_CACHE)
    for name in SITE_INPUTS:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, dest / name, symlinks=True,
                            ignore=shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints"))
        elif src.is_file():
            shutil.copy2(src, dest / name)
    return dest
