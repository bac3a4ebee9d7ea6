"""A throw-away copy of this repository, and the commands a page shows run in it.

tests/test_add_track.py and tests/test_add_method.py scaffold a track or a method there, as
docs/contributors.md says to, and check the result without touching this checkout.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ASSIGNMENT = re.compile(r"(\w+)=(\S+)")


def load_script(name: str):
    """scripts/<name>.py as a module (its ROOT is this checkout until a test points it elsewhere)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def copy_repository(dest: Path) -> None:
    """The files git tracks, or would track, copied to ``dest`` (links stay links; no venv, no site)."""
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                         capture_output=True, check=True).stdout.decode()
    for rel in filter(None, out.split("\0")):
        src, dst = ROOT / rel, dest / rel
        if not os.path.lexists(src):
            continue  # deleted in the working tree, not yet in git
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_symlink():
            os.symlink(os.readlink(src), dst)
        else:
            shutil.copy2(src, dst)


def tree(root: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``root`` with its size and modification time (a write changes one or both)."""
    out = {}
    for here, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in names:
            path = os.path.join(here, name)
            if os.path.isfile(path):
                st = os.stat(path)
                out[os.path.relpath(path, root).replace(os.sep, "/")] = (st.st_size, st.st_mtime_ns)
    return out


def page_commands(text: str) -> tuple[dict[str, str], list[str]]:
    """A shell snippet's variable assignments (``NAME=value`` lines) and its other commands, in order."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    assigned = dict(ASSIGNMENT.fullmatch(ln).groups() for ln in lines if ASSIGNMENT.fullmatch(ln))
    return assigned, [ln for ln in lines if not ASSIGNMENT.fullmatch(ln)]


def run_page_commands(root: Path, snippet: str, values: dict[str, str]) -> list[tuple[str, subprocess.CompletedProcess]]:
    """Each command of the snippet, run in ``root`` by bash with the snippet's variables (``values``
    replacing the page's examples), the venv's python first on PATH, the copy's src on PYTHONPATH and
    pytest without worker processes."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPECDEC_GUIDE_", "PYTEST_"))}
    env.update(PYTHONPATH=str(root / "src"), PYTHONDONTWRITEBYTECODE="1",
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
               # A pytest the page runs stays in one process: this test already holds one of the
               # session's xdist workers, and two more would cost twice its CPU for a few seconds' run.
               PYTEST_ADDOPTS="-n 0")
    assigned, commands = page_commands((root / snippet).read_text(encoding="utf-8"))
    prefix = "".join(f"{k}={values.get(k, v)}; " for k, v in assigned.items())
    return [(cmd, subprocess.run(["bash", "-c", prefix + cmd], cwd=root, env=env, capture_output=True, text=True,
                                 timeout=400)) for cmd in commands]


def scaffold_in_copy(root: Path, snippet: str, values: dict[str, str]):
    """Copy the repository to ``root``, run the page's ``snippet`` there with ``values``; returns the
    runs and what they created and edited (repository-relative paths, sorted)."""
    from types import SimpleNamespace

    copy_repository(root)
    before = tree(root)
    runs = run_page_commands(root, snippet, values)
    after = tree(root)
    return SimpleNamespace(root=root, runs=runs, created=sorted(set(after) - set(before)),
                           edited=sorted(k for k in before if k in after and before[k] != after[k]))
