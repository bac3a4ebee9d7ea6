"""The tracks and methods the per-track and per-method tests run over, from the registries.

``@pytest.mark.parametrize("track", tracks())`` gives a new track in ``schemas/tracks.yaml`` every
per-track test at once; ``methods()`` does the same from ``schemas/methods.yaml``. Both read the
package's own registries (not ``SPECDEC_GUIDE_SCHEMA_DIR``, which some tests point at fixtures).
"""

from __future__ import annotations

from pathlib import Path

import specdec_guide
from specdec_guide.releases import methods as _methods
from specdec_guide.releases.tracks import Registry

SCHEMA_DIR = Path(specdec_guide.__file__).resolve().parent / "schemas"


def registry() -> Registry:
    return Registry(SCHEMA_DIR)


def tracks() -> list[str]:
    """Every pinned track id, in tracks.yaml's order."""
    return [t.id for t in registry().tracks]


def methods(**flags) -> list[str]:
    """Method ids in methods.yaml's order; ``methods(cpu_engine=True)`` keeps those whose fields match."""
    return [m.id for m in _methods.load() if all(getattr(m, k) == v for k, v in flags.items())]
