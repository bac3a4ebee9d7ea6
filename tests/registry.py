"""The tracks and methods the per-track and per-method tests run over, from the registries.

``@pytest.mark.parametrize("track", tracks())`` gives a new track in ``schemas/tracks.yaml`` every
per-track test at once; ``methods()`` does the same from ``schemas/methods.yaml``, and
``track_methods()`` gives the (track, method) pairs where the method exists on the track (its
``tracks:`` list). All read the package's own registries (not ``SPECDEC_GUIDE_SCHEMA_DIR``, which
some tests point at fixtures).
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


def default_track() -> str:
    """The id of tracks.yaml's default track (what a file without a trtllm= comment is read as)."""
    return registry().resolve(None).id


def methods(on: str | None = None, **flags) -> list[str]:
    """Method ids in methods.yaml's order; ``methods(cpu_engine=True)`` keeps those whose fields match,
    ``methods(on="1.2.1")`` those that exist on that track."""
    return [m.id for m in _methods.load() if (on is None or m.exists_on(on))
            and all(getattr(m, k) == v for k, v in flags.items())]


def track_methods(**flags) -> list[tuple[str, str]]:
    """(track id, method id) for every method on every track it exists on; flags as for :func:`methods`."""
    return [(t, m) for t in tracks() for m in methods(on=t, **flags)]
