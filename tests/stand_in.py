"""The CPU stand-in behind several test modules: guide templates on a real tritonserver."""

from __future__ import annotations


def serve_templates(repo, renders):
    """Render templates into ``repo`` and serve them on a real tritonserver; yields the server.

    For module fixtures (``yield from serve_templates(...)``): ``renders`` is a list of
    (method, render keyword arguments). One engine thread each: tests share two cores. The server
    is stopped when the fixture ends, and it must leave no shared-memory file behind.
    """
    from specdec_guide import templates
    from specdec_guide.triton import serve

    for method, kwargs in renders:
        templates.render(method, out=repo, force=True, **kwargs)
    with serve(repo, timeout=180, env={"SPECDEC_ENGINE_THREADS": "1"}) as server:
        yield server
    assert not server.shm_files()
