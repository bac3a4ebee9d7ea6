"""The CPU stand-in behind several test modules: guide templates on a real tritonserver."""

from __future__ import annotations


def serve_templates(repo, renders, shows=()):
    """Render templates into ``repo`` and serve them on a real tritonserver; yields the server.

    For module fixtures (``yield from serve_templates(...)``): ``renders`` is a list of
    (method, render keyword arguments). One engine thread each: tests share two cores. The server
    is stopped when the fixture ends, and it must leave no shared-memory file behind.
    ``shows``: departures from the pinned release (triton_config.cpu_behaviour, e.g.
    ``("stream_per_step", "filled_draft_counters")``) for tests of what a later release sends.
    """
    from specdec_guide import templates
    from specdec_guide.triton import serve

    for method, kwargs in renders:
        model = templates.render(method, out=repo, force=True, **kwargs)
        if shows:
            path = model / "1" / "model.yaml"
            text = path.read_text()
            assert text.count("\ntriton_config:\n") == 1, path
            path.write_text(text.replace("\ntriton_config:\n", f"\ntriton_config:\n  cpu_behaviour: [{', '.join(shows)}]\n"))
    with serve(repo, timeout=180, env={"SPECDEC_ENGINE_THREADS": "1"}) as server:
        yield server
    assert not server.shm_files()
