"""An output a page shows that a test produces: compared with the test's fresh run, or stored.

``make regen WHAT=test-outputs`` (specdec_guide.regen) runs the test files that call :func:`check`
with ``SPECDEC_REGEN=test-outputs``; only then does :func:`check` write the fresh output instead
of comparing it. A failing comparison names that command.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Callable

from specdec_guide.regen import hint, regenerating

ROOT = Path(__file__).resolve().parents[1]
TARGET = "test-outputs"


def check(path: Path, fresh: str, same: Callable[[str, str], bool] | None = None) -> None:
    """``path`` holds ``fresh`` (or what ``same(fresh, stored)`` accepts); regenerating, store it."""
    rel = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)
    # The calling test file: `make regen WHAT=test-outputs:<it>` reruns only that file.
    item = Path(sys._getframe(1).f_globals["__file__"]).resolve().relative_to(ROOT).as_posix()
    if regenerating(TARGET):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(fresh)
        return
    assert path.is_file(), f"{rel} is missing: {hint(TARGET, item)}, then review it"
    stored = path.read_text()
    ok = same(fresh, stored) if same else fresh == stored
    assert ok, (f"{rel} differs from a fresh run: {hint(TARGET, item)}, then review the diff"
                f"\n--- stored\n{stored}\n--- fresh\n{fresh}")
