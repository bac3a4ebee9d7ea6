"""Repository-wide pytest setup: the notebooks' tiers, and the second lane.

nbmake collects every ``notebooks/*.ipynb``. CPU notebooks run in the CPU tier; GPU notebooks
are marked ``gpu`` and skipped with their reason unless this machine has an NVIDIA GPU and
tensorrt_llm (then ``make test-gpu`` runs them).

The CPU notebooks' runs are jobs of the lane (tests/prefetch.py): nbmake's own run of each
notebook, started in the background while the other tests run; the notebook's test item then
reports that run exactly as nbmake would. Without tests/prefetch.py (a copy of this file in a
throw-away tree) nbmake runs them itself.
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "tests"))
try:
    from prefetch import LANE, STAND_IN
except ImportError:
    LANE = STAND_IN = None


@functools.lru_cache(maxsize=None)
def _tier(path: str) -> str:
    import nbformat

    return (nbformat.read(path, as_version=4).metadata.get("specdec_guide") or {}).get("tier", "")


@functools.lru_cache(maxsize=None)
def _gpu_missing() -> tuple[str, ...]:
    from specdec_guide.gpu_tier import missing

    return tuple(missing())


def pytest_collection_modifyitems(config, items):
    from specdec_guide.gpu_tier import SKIP_REASON

    for item in items:
        path = Path(str(item.fspath))
        if path.suffix != ".ipynb":
            continue
        if _tier(str(path)) == "gpu":
            item.add_marker(pytest.mark.gpu)
            if _gpu_missing():
                item.add_marker(pytest.mark.skip(reason=SKIP_REASON))
        elif LANE is not None and hasattr(item, "filename"):
            _run_on_the_lane(item)


def _run_on_the_lane(item) -> None:
    """nbmake's NotebookItem.runtest in two halves: the run (a lane job), then its verdict here."""
    from nbmake.nb_run import NotebookRun
    from nbmake.pytest_items import NotebookFailedException

    option = item.config.option
    source = Path(item.config.rootdir) / item.filename
    key = f"notebook:{Path(item.filename).resolve().relative_to(Path(str(item.config.rootdir)).resolve())}"

    def run(_tmp):
        return NotebookRun(source, option.nbmake_timeout, verbose=bool(option.verbose), kernel=option.nbmake_kernel,
                           find_import_errors=option.nbmake_find_import_errors).execute()

    def runtest():
        import nbformat

        res = LANE.result(key)
        if option.overwrite:
            nbformat.write(res.nb, str(source))
        if res.error is not None:
            raise NotebookFailedException(res)

    LANE.add(key, run, lambda other: other is item)
    item.runtest = runtest


@pytest.fixture(scope="session", autouse=True)
def lane(request, tmp_path_factory):
    """Starts the lane's thread on the jobs the collected tests need; at the end, waits for it."""
    if LANE is None:
        yield None
        return
    # Made here, before the lane's threads exist: pytest computes the base folder lazily, and two
    # threads asking first at once would each make one (a mktemp then fails, "not a normalized and
    # relative path").
    tmp_path_factory.getbasetemp()
    LANE.start(request.session.items, tmp_path_factory)
    try:
        yield LANE
    finally:
        LANE.close()


def pytest_terminal_summary(terminalreporter):
    if LANE is not None and LANE.summary():
        terminalreporter.write_sep("-", "jobs of the lane (tests/prefetch.py)")
        for line in LANE.summary():
            terminalreporter.write_line(line)
    if STAND_IN is not None and STAND_IN.report():
        terminalreporter.write_line(STAND_IN.report())
