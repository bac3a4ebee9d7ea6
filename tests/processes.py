"""The machine's processes as the tests look at them (from /proc), and waiting for a condition."""

from __future__ import annotations

import time
from pathlib import Path


def procs() -> list[tuple[int, int, int]]:
    """(pid, ppid, pgid) of every live (non-zombie) process."""
    rows = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[0] != "Z":
                rows.append((int(d.name), int(fields[1]), int(fields[2])))
    return rows


def children(pid: int) -> list[int]:
    return [p for p, ppid, _ in procs() if ppid == pid]


def descendants(root: int) -> list[int]:
    """Every live process below ``root``: its children, theirs, and so on."""
    rows, found, frontier = procs(), [], [root]
    while frontier:
        frontier = [pid for pid, ppid, _ in rows if ppid in frontier]
        found += frontier
    return found


def until(condition, timeout: float = 30.0) -> bool:
    """Whether ``condition()`` came true within ``timeout`` seconds (asked every 10 ms)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True
