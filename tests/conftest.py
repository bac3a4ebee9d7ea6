"""Fixtures shared by several test modules, and how the tests are spread over xdist's workers.

The CPU tier runs on pytest-xdist (``-n`` and ``--dist loadgroup`` in pyproject.toml). What costs
seconds is made once and shared; reuse these before you start anything expensive:

- ``tiny_models``: (target_dir, draft_dir), the deterministic tiny HF models (per worker: cheap).
- ``smollm2_dir``: the real model's checkpoint (downloaded and converted once per machine, locked).
- ``stand_in_server``: ONE tritonserver serving the guide's templates on the tiny models
  (tests/stand_in.py says which models). Every test that uses it is put in the xdist group
  ``stand_in``, so one worker runs them all against one server.
- ``built_site``: the site of this checkout built once per session with ``mkdocs build --strict``.
- ``walked_page(PAGE)``: each page of ``pagewalk.WALKED_PAGES`` walked once per session.

``built_site`` and the walks are computed once across the workers (tests/once.py: a file lock
and a pickle in the session's shared temp folder); tests parametrized by a walked page are grouped
per page so that one worker walks it and runs its checks.

Tests run in worker processes, one test at a time in each: a test may change its own process's
state (monkeypatch, the working directory) as in any pytest run.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from once import once, session_dir

ROOT = Path(__file__).resolve().parents[1]


def _group(item) -> str:
    """The xdist group an item runs in: the tests sharing a costly fixture together, else its file.
    (Whole files, not single tests: module-scoped fixtures are then made once.)"""
    names = getattr(item, "fixturenames", ())
    if "stand_in_server" in names:
        return "stand_in"
    params = getattr(getattr(item, "callspec", None), "params", {})
    if "walked_page" in names and "page" in params:
        return f"walk:{params['page']}"
    return Path(str(item.fspath)).relative_to(ROOT).as_posix()


#: The groups that spend their time in child processes (kernels, shells, servers, builds) start
#: first, so that their waits overlap the other workers' CPU work and none of them is the session's
#: tail: the notebooks, the page walks, then the session server's group and every group with a
#: test marked ``triton`` (it starts a tritonserver); within a kind, collection order.
def _kind(item, serving: set[str]) -> int:
    group = _group(item)
    if Path(str(item.fspath)).suffix == ".ipynb":
        return 0
    if group.startswith("walk:"):
        return 1
    if group in serving:
        return 2
    return 3


def pytest_itemcollected(item):
    # Marked as collected: xdist's worker reads the groups in its own pytest_collection_modifyitems.
    item.add_marker(pytest.mark.xdist_group(_group(item)))


def pytest_collection_modifyitems(config, items):
    # The kind is the group's, so every test of a group sorts alike and keeps its file's order
    # (xdist runs a group on one worker whatever the order). The session server's group starts
    # early by name: its tests use the server, they need not be marked.
    serving = {"stand_in"} | {_group(item) for item in items if item.get_closest_marker("triton")}
    items.sort(key=lambda item: _kind(item, serving))


@pytest.fixture(scope="session")
def tiny_models(tmp_path_factory):
    """(target_dir, draft_dir): the deterministic tiny HF models, written once per worker."""
    from specdec_guide.models.tiny import write_tiny_models

    return write_tiny_models(tmp_path_factory.mktemp("tiny_models"))


@pytest.fixture(scope="session")
def smollm2_dir():
    """The real model's checkpoint folder: downloaded and converted once per machine (cached and
    locked by ensure_checkpoint itself, so two workers asking at once make it once)."""
    from specdec_guide.models.smollm2 import ensure_checkpoint

    return ensure_checkpoint()


@pytest.fixture(scope="session")
def stand_in_server(tmp_path_factory, tiny_models):
    """The session's tritonserver with the models of tests/stand_in.py MODELS, on the tiny models,
    ready; stopped at the end, leaving no process and no shared-memory file."""
    from stand_in import MODELS, STAND_IN_READY_S, launch, render_models

    # One per session, not one per worker: a second means the `stand_in` group was split (an xdist
    # that cannot set groups: pytest-xdist 3.8 under pytest 9.2 could not).
    try:
        with (session_dir(tmp_path_factory) / "stand_in_server.worker").open("x") as mark:
            mark.write(os.environ.get("PYTEST_XDIST_WORKER", "main"))
    except FileExistsError:
        pytest.fail("the session server was already started by another worker", pytrace=False)
    repo = render_models(tmp_path_factory.mktemp("stand_in_repo"), MODELS, *tiny_models)
    server = launch(repo, STAND_IN_READY_S)
    try:
        server.wait_ready()
        pid = server.proc.pid
        host = server.host_proc.pid if server.host_proc is not None else None
        yield server
    finally:
        # Killed, not stopped in order: its stubs take seconds to shut down at the very end of the
        # session. The orderly stop is tested where it is the subject (test_triton_server.py,
        # test_triton_llmapi.py, the page walks' `triton up`).
        server.stop(grace_s=0)
    assert not server.shm_files()
    assert not Path(f"/proc/{pid}").exists()  # the server (and its process group) is gone
    assert host is not None, "the session server's CPU-engine models were served without an engine host"
    assert not Path(f"/proc/{host}").exists()  # and its engine host (its engines die with it)


def _build_site(tmp_path_factory):
    from site_build import build

    out = tmp_path_factory.mktemp("site")
    result = build(ROOT, out)
    return out, result.returncode, result.stdout[-3000:] + result.stderr[-3000:]


@pytest.fixture(scope="session")
def built_site(tmp_path_factory):
    """The site of this checkout, built once per session with ``mkdocs build --strict``: the static
    checks of test_site.py and the browser checks of test_browser.py read the same build."""
    out, returncode, tail = once(tmp_path_factory, "built_site", lambda: _build_site(tmp_path_factory))
    assert returncode == 0, tail
    return out


def _walk(page: str, tmp_path_factory):
    from specdec_guide import pagewalk
    from specdec_guide.diagnostics import UserError
    from specdec_guide.models.smollm2 import ensure_checkpoint

    # Fetched before the walk (once per machine), so the page's `models fetch` prints the cached
    # form that the page shows; the download itself is tested in test_models_smollm2.py.
    ensure_checkpoint()
    workdir = tmp_path_factory.mktemp("walk")
    try:
        return pagewalk.walk(page, root=ROOT, workdir=workdir), workdir / "clone"
    except UserError as err:
        return err


@pytest.fixture(scope="session")
def walked_page(tmp_path_factory):
    """walked_page(PAGE) -> (WalkResult, the reader's clone it ran in): each page walked once per
    session. A walk is the expensive part (it runs the real model): test_page_walk checks what it
    printed, other tests check what it wrote (test_tools_pages reads the estimate page's log)."""
    from specdec_guide.diagnostics import UserError

    def walk(page: str):
        got = once(tmp_path_factory, "walk-" + page.replace("/", "-"), lambda: _walk(page, tmp_path_factory))
        if isinstance(got, UserError):
            pytest.fail(f"walking docs/{page} failed: {got}", pytrace=False)
        return got

    return walk
