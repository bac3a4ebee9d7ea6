"""Fixtures shared by several test modules. Reuse them before you start anything expensive.

The CPU tier must stay within 4 minutes of pytest on 2 cores, so what costs seconds is made once
per session and shared:

- ``tiny_models``: (target_dir, draft_dir), the deterministic tiny HF models (unit tests, servers).
- ``smollm2_dir``: the real model's checkpoint (downloaded and converted once per machine).
- ``stand_in_server``: ONE tritonserver for the session serving the guide's templates on the tiny
  models: ``tensorrt_llm`` (baseline, decoupled), ``tensorrt_llm_sync`` (decoupled: false),
  ``ngram``, ``draft_target``, ``user_provided``, ``draft_target_later_release``, ``no_policy``
  (no policy in config.pbtxt, for the launcher tests) and the per-track models of the fidelity
  tests; launched at the first test, so that it loads while other tests run (tests/stand_in.py
  says what to mind).
- ``built_site``: the site of this checkout built once with ``mkdocs build --strict`` (folder).
- ``walked_page(PAGE)``: each page of ``pagewalk.WALKED_PAGES`` walked once per session.

``built_site`` and the walks are jobs of the lane (tests/prefetch.py): they are computed in a
background thread while other tests run, and a test that needs one before it is done waits for
it (or computes it, if the lane has not started it). A module that needs a walk without being
parametrized by ``page`` names it in a module-level ``WALKS_NEEDED`` so the lane knows.
A test that mostly waits on processes of its own (a tritonserver of its own, its shutdown
polling) can run on the lane too: ``@ahead`` from tests/prefetch.py (arguments: tmp_path,
smollm2_dir, tiny_models, stand_in_server; test_triton_server.py, test_quickstart.py, the
load-failure tests and the page-flow test use it).

The lane's jobs run beside every other test, in the same process: a test must not change the
process's environment for what they read (``SPECDEC_GUIDE_SCHEMA_DIR``, say); give the changed
environment to a subprocess instead (test_coverage.py does).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from prefetch import LANE, prepare_smollm2, smollm2_checkpoint
from prefetch import STAND_IN, stand_in_ready
from prefetch import tiny_models as prefetch_tiny_models

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def tiny_models(tmp_path_factory):
    """(target_dir, draft_dir): the deterministic tiny HF models, written once per test session
    (the same folders the lane's jobs get: prefetch.tiny_models)."""
    return prefetch_tiny_models(tmp_path_factory)


@pytest.fixture(scope="session")
def smollm2_dir():
    """The real model's checkpoint folder: downloaded and converted once per machine (cached); the
    same one the lane's jobs use (prefetch.smollm2_checkpoint)."""
    return smollm2_checkpoint()




@pytest.fixture(scope="session")
def stand_in_launched(tmp_path_factory, tiny_models):
    """The session's tritonserver with the models of tests/stand_in.py MODELS, on the tiny models,
    launched (not waited for) at the first test under tests/ (``_launch_early``); stopped at the
    end, leaving no process and no shared-memory file."""
    from pathlib import Path

    from stand_in import MODELS, STAND_IN_READY_S, launch, render_models

    repo = render_models(tmp_path_factory.mktemp("stand_in_repo"), MODELS, *tiny_models)
    server = launch(repo, STAND_IN_READY_S)
    STAND_IN.publish(server, STAND_IN_READY_S)  # for the lane's jobs that use it; watched from now on
    pid = server.proc.pid
    try:
        yield server
    finally:
        # Killed, not stopped in order: 15 stubs take seconds to shut down at the very end of the
        # session, with nothing else left to run. The orderly stop of the launcher and of stand-in
        # models is tested where it is the subject (test_triton_server.py, test_triton_llmapi.py,
        # the page walks' `triton up`). Stopped before its watcher is: a session cut short ends
        # its wait; then once more, for a server the watcher launched again meanwhile.
        host = server.host_proc.pid if server.host_proc is not None else None
        server.stop(grace_s=0)
        STAND_IN.stop_watching()
        server.stop(grace_s=0)
    assert not server.shm_files()
    assert not Path(f"/proc/{pid}").exists()  # the server (and its process group) is gone
    assert host is not None, "the session server's CPU-engine models were served without an engine host"
    assert not Path(f"/proc/{host}").exists()  # and its engine host (its engines die with it)


@pytest.fixture(scope="session")
def stand_in_server(stand_in_launched):
    """The session's stand-in server, ready (tests/stand_in.py says what it serves)."""
    from stand_in import STAND_IN_READY_S

    return stand_in_ready(STAND_IN_READY_S)


def _uses_stand_in(item) -> bool:
    return "stand_in_server" in getattr(item, "fixturenames", ())


def pytest_collection_modifyitems(config, items):
    """The modules that use the session server run after the others (each module keeps its own
    order), so that the server, launched at the first test, loads its models while they run; the
    notebooks stay last, as collected (their runs are the lane's; the main thread only reports them).
    (Moving every module that reads a lane job's result later was measured: no faster.)"""
    def module(item):
        return getattr(getattr(item, "module", None), "__name__", None)

    late = {module(item) for item in items if _uses_stand_in(item)}

    def rank(item) -> int:
        if str(item.fspath).endswith(".ipynb"):
            return 2
        return 1 if module(item) in late else 0

    items.sort(key=rank)


@pytest.fixture(scope="session", autouse=True)
def _launch_early(request):
    """Launch the session server at the first test when a collected test will use it: its models then
    load while other tests run, instead of in front of the first test that needs it."""
    if any(_uses_stand_in(item) for item in request.session.items):
        request.getfixturevalue("stand_in_launched")


# -- jobs of the lane ---------------------------------------------------------------------------
def _uses(fixture: str):
    return lambda item: fixture in getattr(item, "fixturenames", ())


def _build_site(tmp_path_factory):
    from site_build import ROOT, build

    out = tmp_path_factory.mktemp("site")
    return out, build(ROOT, out)


LANE.add("site:built", _build_site, _uses("built_site"))


@pytest.fixture(scope="session")
def built_site():
    """The site of this checkout, built once per session with ``mkdocs build --strict`` (in the lane):
    the static checks of test_site.py and the browser checks of test_browser.py read the same build."""
    out, result = LANE.result("site:built")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return out


def _walk(page: str):
    def job(tmp_path_factory):
        from specdec_guide import pagewalk
        from specdec_guide.diagnostics import UserError

        # Fetched before the walk (once per machine, in the main thread: prefetch.prepare_smollm2),
        # so the page's `models fetch` prints the cached form that the page shows; the download
        # itself is tested in test_models_smollm2.py.
        smollm2_checkpoint()
        workdir = tmp_path_factory.mktemp("walk")
        try:
            # The root named, not found from the working directory: a test running meanwhile may
            # have changed it (monkeypatch.chdir), and the lane shares the process with it.
            return pagewalk.walk(page, root=ROOT, workdir=workdir), workdir / "clone"
        except UserError as err:
            return err

    return job


def _walk_needed(page: str):
    def needed(item) -> bool:
        if "walked_page" not in getattr(item, "fixturenames", ()):
            return False
        callspec = getattr(item, "callspec", None)
        if callspec is not None and "page" in callspec.params:
            return callspec.params["page"] == page
        return page in getattr(getattr(item, "module", None), "WALKS_NEEDED", ())

    return needed


def _add_walks() -> None:
    from specdec_guide import pagewalk

    for page in pagewalk.WALKED_PAGES:
        LANE.add(f"walk:{page}", _walk(page), _walk_needed(page), prepare=prepare_smollm2)


_add_walks()


@pytest.fixture(scope="session")
def walked_page():
    """walked_page(PAGE) -> (WalkResult, the reader's clone it ran in): each page walked once per
    session. A walk is the expensive part (it runs the real model): test_page_walk checks what it
    printed, other tests check what it wrote (test_tools_pages reads the estimate page's log)."""
    from specdec_guide.diagnostics import UserError

    def walk(page: str):
        if not LANE.has(f"walk:{page}"):  # a page outside WALKED_PAGES (none today)
            LANE.add(f"walk:{page}", _walk(page), lambda item: False)
        got = LANE.result(f"walk:{page}")
        if isinstance(got, UserError):
            pytest.fail(f"walking docs/{page} failed: {got}", pytrace=False)
        return got

    return walk
