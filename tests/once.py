"""A result computed once per test session, shared by pytest-xdist's worker processes.

The first worker that asks computes it under a file lock and stores it (pickled) in the folder
the workers share; a worker that asks meanwhile waits on the lock, then reads it. A computation
that raises stores nothing: the next worker that asks computes it again (and most likely fails
the same way, in its own test).
"""

from __future__ import annotations

import os
import pickle
from pathlib import Path
from typing import Callable, TypeVar

from filelock import FileLock

T = TypeVar("T")


def session_dir(tmp_path_factory) -> Path:
    """The temp folder of the whole session: under xdist, the parent of every worker's own."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def once(tmp_path_factory, name: str, compute: Callable[[], T]) -> T:
    """``compute()`` the first time any worker of this session asks for ``name``; its stored value after."""
    folder = session_dir(tmp_path_factory)
    stored = folder / f"once-{name}.pickle"
    with FileLock(str(folder / f"once-{name}.lock")):
        if stored.exists():
            return pickle.loads(stored.read_bytes())
        value = compute()
        stored.write_bytes(pickle.dumps(value))
        return value
