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
changes. ``SPECDEC_TEST_LANE=N`` sets the number of threads (default 2, plus one that takes only
the jobs that wait: :data:`WAIT_THREADS`); ``0`` turns the lane off (every job is then computed by
the first test that asks, as a plain session fixture would). A thread looking for work passes by a
job whose lock another thread holds (:func:`ahead`'s per-module lock) and takes it up later.

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

import contextlib
import os
import threading
from dataclasses import dataclass, field
from typing import Any, Callable

#: The lane's order: the prefixes of job keys, first to last. The longest job first (the
#: benchmarking notebook, ~80 s on 2 idle cores and 144-183 s in the suite, reported by nbmake at
#: the very end of the session), so it never ends last; then the longest page walk (the estimate
#: page, ~60-85 s: the main thread reaches its test early and would wait for it), the other walks
#: and the quick start's own server, then the site builds, the other tests marked :func:`ahead`
#: (the waiting thread takes them from the start), test_bench's AIPerf run, then the other notebooks.
#: No job loads a model in this process: transformers' loading is not thread-safe (two SmolLM2
#: engines built at once in two threads produced garbage tokens, seen once in CI), so
#: test_real_model's engines stay in the main thread.
#: Measured: the basics notebook ranked before the site builds ran beside the benchmarking one and
#: the walks, and every job got slower (the session ~40 s longer); ranked last, it runs in the
#: session's tail, when the cores have room. The main thread takes from the front what nobody has
#: started when a test needs it.
ORDER = ("notebook:notebooks/08_", "walk:speculative_decoding/estimate.md", "walk:", "ahead:test_quickstart::",
         "site:", "ahead:", "aiperf:", "notebook:")
THREADS = 2
#: One more thread that takes only the jobs that wait (``pool="wait"``: a tritonserver of their own
#: that starts and stops at almost no CPU): they then wait beside the CPU work instead of in front
#: of it. (A third thread for any job was measured: slower, the cores oversubscribed.)
WAIT_THREADS = 1
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
    prepare: Callable[[Any], Any] | None = None  # run in the main thread before the lane starts
    lock: Any = None  # held while it runs (ahead jobs of one module): not taken up while it is held
    pool: str = "cpu"  # "wait": also taken by the lane's waiting thread (WAIT_THREADS)
    ready: Callable[[], bool] | None = None  # False: not taken up by a thread looking for work yet


class Lane:
    def __init__(self) -> None:
        self._jobs: dict[str, _Job] = {}
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._closing = False
        self._tmp = None
        self._queue: list[str] = []

    def add(self, key: str, fn: Callable[[Any], Any], needed_by: Callable[[Any], bool],
            prepare: Callable[[Any], Any] | None = None, lock=None, pool: str = "cpu",
            ready: Callable[[], bool] | None = None) -> None:
        """``prepare(tmp_path_factory)``: what the job needs computed in the main thread, once, before
        any test runs (state that a test's monkeypatch could change under a job running beside it).
        ``lock``: one that ``fn`` holds while it runs; a thread looking for work passes the job by
        while another holds it (it would only wait) and comes back to it later. ``pool="wait"``: a
        job that mostly waits, which the waiting thread may take too. ``ready()``: False while the
        job would only wait for something (the session server): passed by until then."""
        with self._lock:
            self._jobs.setdefault(key, _Job(key, fn, needed_by, prepare=prepare, lock=lock, pool=pool, ready=ready))

    def has(self, key: str) -> bool:
        return key in self._jobs

    def start(self, items, tmp_path_factory) -> list[str]:
        """Start the background thread on the jobs that ``items`` need; returns their keys in order."""
        self._tmp = tmp_path_factory
        if self._threads:
            return []
        wanted = [job for job in self._jobs.values() if any(job.needed_by(item) for item in items)]
        for prepare in dict.fromkeys(job.prepare for job in wanted if job.prepare is not None):
            prepare(tmp_path_factory)
        rank = {job.key: next((i for i, p in enumerate(ORDER) if job.key.startswith(p)), len(ORDER)) for job in wanted}
        queue = [job.key for job in sorted(wanted, key=lambda j: rank[j.key])]  # stable: registration order within a rank
        threads = int(os.environ.get("SPECDEC_TEST_LANE", THREADS))
        if threads < 1 or not queue:
            return []
        self._queue = queue
        self._threads = [threading.Thread(target=self._work, args=(queue,), name=f"specdec-test-lane-{i}", daemon=True)
                         for i in range(min(threads, len(queue)))]
        waiting = [key for key in queue if self._jobs[key].pool == "wait"]
        self._threads += [threading.Thread(target=self._work, args=(waiting,), name=f"specdec-test-lane-wait{i}",
                                           daemon=True) for i in range(min(WAIT_THREADS, len(waiting)))]
        for thread in self._threads:
            thread.start()
        return queue

    def _claim(self, key: str, runnable_only: bool = False) -> _Job | None:
        job = self._jobs[key]
        # Asked outside the lane's lock (``ready`` may ask a server): a job found runnable here and
        # taken by another thread meanwhile is refused below; one that turns busy only waits.
        if runnable_only and job.state == "pending" and (
                (job.lock is not None and job.lock.locked()) or (job.ready is not None and not job.ready())):
            return None
        with self._lock:
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
        import time

        try:
            while True:
                # The first pending job in order whose lock is free; a locked one is passed by (it
                # would only wait, with a core idle) and taken up when it is free.
                job = next(filter(None, (self._claim(k, runnable_only=True) for k in queue)), None)
                if job is not None:
                    self._run(job, threading.current_thread().name)
                elif any(self._jobs[k].state == "pending" for k in queue) and not self._closing:
                    time.sleep(0.2)
                else:
                    return
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
            other = next((j for k, j in self._queue_of_kind(key) if self._claim(k, runnable_only=True) is j), None)
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


def prepare_smollm2(tmp_path_factory=None) -> None:
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


_TINY: dict[str, Any] = {}
_TINY_LOCK = threading.Lock()


def tiny_models(tmp_path_factory):
    """(target_dir, draft_dir): the deterministic tiny models, written once per session. The
    session fixture of that name and the :func:`ahead` jobs share them; a job's prepare step
    writes them in the main thread before the lane starts."""
    with _TINY_LOCK:
        if "dirs" not in _TINY:
            from specdec_guide.models.tiny import write_tiny_models

            _TINY["dirs"] = write_tiny_models(tmp_path_factory.mktemp("tiny_models"))
        return _TINY["dirs"]


class StandIn:
    """The session server as the lane's jobs and the tests share it (one instance: :data:`STAND_IN`).

    :meth:`publish` (tests/conftest.py, at its launch) starts a thread that waits for it from then
    on, so that a stalled load is found and launched again at once: the first test that asks comes
    ~150 s after the launch, and a stub that hung early used to be found only then, 60 s later
    (TritonServer.wait_ready's stall check). That thread lives until :meth:`stop_watching`, because
    a tritonserver it launched again dies with the thread that started it (PR_SET_PDEATHSIG).
    """

    def __init__(self) -> None:
        self.server = None
        self.outcome: Any = None  # the ready server, or the error wait_ready raised
        self.ready_after_s: float | None = None
        self._launched = threading.Event()
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._watcher: threading.Thread | None = None

    def publish(self, server, timeout: float) -> None:
        import time

        self.server, launched_at = server, time.monotonic()
        self._launched.set()

        def watch():
            with contextlib.suppress(BaseException):  # kept in self.outcome: ready() raises it in the tests
                self.ready(timeout)
            self.ready_after_s = time.monotonic() - launched_at
            self._done.wait()

        self._watcher = threading.Thread(target=watch, name="specdec-stand-in-watch", daemon=True)
        self._watcher.start()

    def stop_watching(self) -> None:
        self._done.set()
        if self._watcher is not None:
            self._watcher.join(timeout=CLEANUP_TIMEOUT_S)

    def ready(self, timeout: float):
        """The server, ready (or its error raised). ``wait_ready`` is not made for two threads: the
        first thread that asks waits, under a lock, and the others get its outcome."""
        import time

        deadline = time.monotonic() + timeout
        while not self._launched.wait(1):  # in steps: a job stays interruptible (Lane.close)
            if time.monotonic() > deadline:
                raise RuntimeError(f"the session's stand-in server was not launched within {timeout:g} s")
        with self._lock:
            if self.outcome is None:
                try:
                    self.outcome = self.server.wait_ready()
                except BaseException as err:
                    self.outcome = err
        if isinstance(self.outcome, BaseException):
            raise self.outcome
        return self.outcome

    def is_ready(self) -> bool:
        """Whether its outcome is known (ready, or failed): a job that needs it is then taken up."""
        return self.outcome is not None

    def report(self) -> str | None:
        """One line for the session's summary: when the server was ready, in how many launches."""
        if self.server is None:
            return None
        ready = "never ready" if self.ready_after_s is None or isinstance(self.outcome, BaseException) else \
            f"ready {self.ready_after_s:.0f}s after its launch"
        return f"the session's stand-in server: {ready}, in {self.server.launches} launch(es)"


STAND_IN = StandIn()
stand_in_ready, stand_in_is_ready = STAND_IN.ready, STAND_IN.is_ready


def _stand_in_server():
    from stand_in import STAND_IN_READY_S

    return stand_in_ready(STAND_IN_READY_S)


#: The arguments an :func:`ahead` test may take: name -> (tmp_path_factory, test name) -> value.
AHEAD_ARGUMENTS = {
    "tmp_path": lambda tmp_path_factory, name: tmp_path_factory.mktemp(name[:30]),
    "smollm2_dir": _smollm2_dir,
    "tiny_models": lambda tmp_path_factory, name: tiny_models(tmp_path_factory),
    "stand_in_server": lambda tmp_path_factory, name: _stand_in_server(),
}
#: What an argument needs done in the main thread before the lane starts (a prepare step).
AHEAD_PREPARES = {"smollm2_dir": prepare_smollm2, "tiny_models": tiny_models}


def ahead(test=None, *, waits: bool = True):
    """Decorator: the body of ``test(tmp_path)`` runs as a lane job (key ``ahead:<module>::<name>``).

    For a test that spends its time waiting on processes of its own (a tritonserver's start and
    its shutdown polling, seconds each at almost no CPU): the lane runs it while other tests run,
    and its waiting thread may take it (``pool="wait"``). ``@ahead(waits=False)``: a test whose own
    processes keep a core busy (a server on the real model), for the lane's other threads only.
    The test item stays, with the same assertions; it asks for the job's result, so a failure is
    raised in it (the assertion and its traceback as if it had run there). Only for a test whose
    arguments are among :data:`AHEAD_ARGUMENTS` (``tmp_path``: a fresh folder from
    ``tmp_path_factory``; ``smollm2_dir``: the cached checkpoint; ``tiny_models``: the session's
    tiny models; ``stand_in_server``: the session server, taken up once it is ready) and that
    touches no per-test state and stops every process it starts. The jobs of one module run one at
    a time (a lock per module), as they did in the main thread: a test that looks at what a killed
    launcher left behind must not see another of them start a server and sweep it.
    """
    import inspect

    if test is None:
        return lambda fn: ahead(fn, waits=waits)
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

    prepares = [AHEAD_PREPARES[name] for name in names if name in AHEAD_PREPARES]
    LANE.add(key, job, needed, prepare=(lambda factory: [p(factory) for p in prepares]) if prepares else None,
             lock=lock, pool="wait" if waits else "cpu",
             ready=stand_in_is_ready if "stand_in_server" in names else None)

    def run_ahead():
        LANE.result(key)

    run_ahead.__name__, run_ahead.__qualname__, run_ahead.__doc__ = test.__name__, test.__qualname__, test.__doc__
    run_ahead.__module__ = test.__module__
    run_ahead.pytestmark = getattr(test, "pytestmark", [])
    return run_ahead
