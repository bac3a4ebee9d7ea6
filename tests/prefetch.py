"""Work done ahead, on a second lane: expensive, self-contained results computed in a background
thread while pytest runs other tests in the main thread.

pytest runs one test at a time, which on 2 cores leaves a core idle for most of the session. A
few results are large, independent of any one test, and spend their time in other processes (a
notebook's kernel, a page walk's shell and servers, an ``mkdocs build``): those are *jobs*. At
the first test of the session the lane starts one background thread that computes the jobs the
collected tests need, in :data:`ORDER`: two threads, each taking the next job nobody started.
Most of a job's time is spent waiting for its own processes or the tests' waiting for servers,
so the two cores stay busy. A test asks for a job's result with :meth:`Lane.result`:

- done: it gets the result (or the job's exception is raised again, in that test);
- running in the background: it waits for it;
- not started yet: it computes it itself, in the main thread, and the lane skips it.

So the outcome of every test is what it was without the lane; only the moment the work is done
changes. ``SPECDEC_TEST_LANE=N`` sets the number of threads (default 2); ``0`` turns the lane
off (every job is then computed by the first test that asks, as a plain session fixture would).

Adding a job (for a fixture of your own): ``LANE.add(key, fn, needed_by)`` at import time of a
conftest, where ``fn(tmp_path_factory)`` computes the result and ``needed_by(item)`` says whether a
collected test item uses it; then ``LANE.result(key)`` in the fixture. A job must not touch
per-test state (monkeypatch, capsys, the working directory) nor depend on it (it names paths from
the repository root: a test running beside it may change the working directory or the
environment; what it needs from them goes in a ``prepare`` step), and must stop every process it
starts before it returns (the launcher ties tritonserver to the thread that started it with
PR_SET_PDEATHSIG). At the end of the session the lane takes no new job and waits for the one
it is running, so nothing it started outlives the session.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from typing import Any, Callable

#: The lane's order: the prefixes of job keys, first to last. The longest job first (the
#: benchmarking notebook, ~80 s on 2 idle cores and up to 190 s in the suite, reported by nbmake at
#: the very end of the session), so it never ends last; then the longest page walk (the estimate
#: page, ~60 s: the main thread reaches its test early and would wait for it), the other walks and
#: the quick start's own server, then the site builds, the other tests marked :func:`ahead` (they
#: wait on servers, seconds each), then the other notebooks. The main thread takes from the front
#: what nobody has started when a test needs it.
ORDER = ("notebook:notebooks/08_", "walk:speculative_decoding/estimate.md", "walk:", "ahead:test_quickstart::",
         "site:", "ahead:", "notebook:")
THREADS = 2
CLEANUP_TIMEOUT_S = 120  # at the end of the session, for a job that was stopped to clean up


@dataclass
class _Job:
    key: str
    fn: Callable[[Any], Any]
    needed_by: Callable[[Any], bool]
    state: str = "pending"  # pending -> running -> done
    value: Any = None
    error: BaseException | None = None
    done: threading.Event = field(default_factory=threading.Event)
    where: str = ""  # "lane" or "main": who computed it (reported in the session summary)
    seconds: float = 0.0
    prepare: Callable[[], Any] | None = None  # run in the main thread before the lane starts


class Lane:
    def __init__(self) -> None:
        self._jobs: dict[str, _Job] = {}
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._closing = False
        self._tmp = None
        self._queue: list[str] = []

    def add(self, key: str, fn: Callable[[Any], Any], needed_by: Callable[[Any], bool],
            prepare: Callable[[], Any] | None = None) -> None:
        """``prepare``: what the job needs computed in the main thread, once, before any test runs
        (state that a test's monkeypatch could change under a job running beside it)."""
        with self._lock:
            self._jobs.setdefault(key, _Job(key, fn, needed_by, prepare=prepare))

    def has(self, key: str) -> bool:
        return key in self._jobs

    def start(self, items, tmp_path_factory) -> list[str]:
        """Start the background thread on the jobs that ``items`` need; returns their keys in order."""
        self._tmp = tmp_path_factory
        if self._threads:
            return []
        wanted = [job for job in self._jobs.values() if any(job.needed_by(item) for item in items)]
        for prepare in dict.fromkeys(job.prepare for job in wanted if job.prepare is not None):
            prepare()
        rank = {job.key: next((i for i, p in enumerate(ORDER) if job.key.startswith(p)), len(ORDER)) for job in wanted}
        queue = [job.key for job in sorted(wanted, key=lambda j: rank[j.key])]  # stable: registration order within a rank
        threads = int(os.environ.get("SPECDEC_TEST_LANE", THREADS))
        if threads < 1 or not queue:
            return []
        self._queue = queue
        self._threads = [threading.Thread(target=self._work, args=(queue,), name=f"specdec-test-lane-{i}", daemon=True)
                         for i in range(min(threads, len(queue)))]
        for thread in self._threads:
            thread.start()
        return queue

    def _claim(self, key: str) -> _Job | None:
        with self._lock:
            job = self._jobs[key]
            if job.state != "pending" or (self._closing and threading.current_thread() in self._threads):
                return None
            job.state = "running"
            return job

    def _run(self, job: _Job, where: str) -> None:
        import time

        started = time.monotonic()
        try:
            job.value = job.fn(self._tmp)
        except BaseException as err:  # noqa: BLE001 - kept and raised again in the test that asks
            job.error = err
        finally:
            job.where, job.seconds = where, time.monotonic() - started
            with self._lock:
                job.state = "done"
            job.done.set()

    def _work(self, queue: list[str]) -> None:
        try:
            for key in queue:
                job = self._claim(key)
                if job is not None:
                    self._run(job, threading.current_thread().name)
        except KeyboardInterrupt:  # from close(), between two jobs
            pass

    def result(self, key: str):
        """The job's result: computed here if nobody started it, awaited if the lane runs it."""
        job = self._claim(key)
        if job is not None:
            self._run(job, "the main thread")
        while not self._jobs[key].done.is_set():
            # The lane runs it: meanwhile take another job of the same kind that nobody started
            # (the next page walk, say), so both cores work; else wait.
            other = next((j for k, j in self._queue_of_kind(key) if self._claim(k) is j), None)
            if other is not None:
                self._run(other, "the main thread")
            else:
                self._jobs[key].done.wait()
        job = self._jobs[key]
        if job.error is not None:
            raise job.error
        return job.value

    def _queue_of_kind(self, key: str):
        kind = key.split(":", 1)[0]
        return [(k, self._jobs[k]) for k in self._queue if k.split(":", 1)[0] == kind and k != key]

    def close(self) -> None:
        """Take no new job; stop the ones still running, and wait until they have cleaned up.

        After the last test a job still running is one nobody will ask for (the session was cut
        short: ``-x``, Ctrl-C, a failure before the test that needed it). It gets a
        KeyboardInterrupt in its thread, as Ctrl-C would give it in the main thread, so that its
        ``finally`` blocks stop the servers and kernels it started.
        """
        import ctypes

        with self._lock:
            self._closing = True
        for thread in self._threads:
            if thread.is_alive():  # once: a second one could cut the job's own clean-up short
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread.ident), ctypes.py_object(KeyboardInterrupt))
            thread.join(timeout=CLEANUP_TIMEOUT_S)

    def summary(self) -> list[str]:
        return [f"{job.key}: {job.seconds:.0f}s in {job.where}" for job in self._jobs.values()
                if job.state == "done"]


LANE = Lane()

_MODULE_LOCKS: dict[str, threading.Lock] = {}


_CHECKPOINT: dict[str, Any] = {}


def prepare_smollm2() -> None:
    """The real model's checkpoint, made ready in the main thread before the lane starts (a prepare
    step): a job that called ensure_checkpoint itself could run while a test monkeypatches pip's
    environment or the pinned hash (tests/test_models_smollm2.py) and fetch the wrong file."""
    from specdec_guide.models.smollm2 import ensure_checkpoint

    if not _CHECKPOINT:
        try:
            _CHECKPOINT["dir"] = ensure_checkpoint()  # as the session fixture smollm2_dir (cached per machine)
        except Exception as err:  # noqa: BLE001 - raised again in each job that needs it
            _CHECKPOINT["error"] = err


def smollm2_checkpoint():
    """The checkpoint ``prepare_smollm2`` made ready (its error raised again, in the job)."""
    if not _CHECKPOINT:
        prepare_smollm2()  # the lane is off: the job runs in the main thread, as a fixture would
    if "error" in _CHECKPOINT:
        raise _CHECKPOINT["error"]
    return _CHECKPOINT["dir"]


def _smollm2_dir(tmp_path_factory, name):
    return smollm2_checkpoint()


#: The arguments an :func:`ahead` test may take: name -> (tmp_path_factory, test name) -> value.
AHEAD_ARGUMENTS = {
    "tmp_path": lambda tmp_path_factory, name: tmp_path_factory.mktemp(name[:30]),
    "smollm2_dir": _smollm2_dir,
}


def ahead(test):
    """Decorator: the body of ``test(tmp_path)`` runs as a lane job (key ``ahead:<module>::<name>``).

    For a test that spends its time waiting on processes of its own (a tritonserver's start and
    its shutdown polling, seconds each at almost no CPU): the lane runs it while other tests run.
    The test item stays, with the same assertions; it asks for the job's result, so a failure is
    raised in it (the assertion and its traceback as if it had run there). Only for a test whose
    arguments are among :data:`AHEAD_ARGUMENTS` (``tmp_path``: a fresh folder from
    ``tmp_path_factory``; ``smollm2_dir``: the cached checkpoint) and that touches no per-test
    state and stops every process it starts. The jobs of one module run one
    at a time (a lock per module), as they did in the main thread: a test that looks at what a
    killed launcher left behind must not see another of them start a server and sweep it.
    """
    import inspect

    names = list(inspect.signature(test).parameters)
    assert set(names) <= set(AHEAD_ARGUMENTS), f"{test.__name__}: only {sorted(AHEAD_ARGUMENTS)}"
    key = f"ahead:{test.__module__}::{test.__name__}"

    lock = _MODULE_LOCKS.setdefault(test.__module__, threading.Lock())

    def job(tmp_path_factory):
        with lock:
            return test(**{name: AHEAD_ARGUMENTS[name](tmp_path_factory, test.__name__) for name in names})

    def needed(item) -> bool:
        module = getattr(getattr(item, "module", None), "__name__", None)
        return getattr(item, "originalname", item.name) == test.__name__ and module == test.__module__

    LANE.add(key, job, needed, prepare=prepare_smollm2 if "smollm2_dir" in names else None)

    def run_ahead():
        LANE.result(key)

    run_ahead.__name__, run_ahead.__qualname__, run_ahead.__doc__ = test.__name__, test.__qualname__, test.__doc__
    run_ahead.__module__ = test.__module__
    run_ahead.pytestmark = getattr(test, "pytestmark", [])
    return run_ahead
