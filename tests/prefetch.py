"""Work done ahead, on a second lane: expensive, self-contained results computed in a background
thread while pytest runs other tests in the main thread.

pytest runs one test at a time, which on 2 cores leaves a core idle for most of the session. A
few results are large, independent of any one test, and spend their time in other processes (a
notebook's kernel, a page walk's shell and servers, an ``mkdocs build``): those are *jobs*. At
the first test of the session the lane starts one background thread that computes the jobs the
collected tests need, in :data:`ORDER`, one at a time (so the main thread and the lane use about
one core each). A test asks for a job's result with :meth:`Lane.result`:

- done: it gets the result (or the job's exception is raised again, in that test);
- running in the background: it waits for it;
- not started yet: it computes it itself, in the main thread, and the lane skips it.

So the outcome of every test is what it was without the lane; only the moment the work is done
changes. ``SPECDEC_TEST_LANE=0`` turns the background thread off (every job is then computed by
the first test that asks, as a plain session fixture would).

Adding a job (for a fixture of your own): ``LANE.add(key, fn, needed_by)`` at import time of a
conftest, where ``fn(tmp_path_factory)`` computes the result and ``needed_by(item)`` says whether a
collected test item uses it; then ``LANE.result(key)`` in the fixture. A job must not touch
per-test state (monkeypatch, capsys, the working directory) and must stop every process it
starts before it returns (the launcher ties tritonserver to the thread that started it with
PR_SET_PDEATHSIG). At the end of the session the lane takes no new job and waits for the one
it is running, so nothing it started outlives the session.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from typing import Any, Callable

#: The lane's order: the prefixes of job keys, first to last. The page walks and the site build
#: come first because tests in the middle of the session need them; the notebooks (collected from
#: notebooks/, run last by pytest) after, the longest first so that the main thread, once it gets
#: there, takes the shorter one if the lane is still busy.
ORDER = ("walk:", "site:", "notebook:notebooks/08_", "notebook:")


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


class Lane:
    def __init__(self) -> None:
        self._jobs: dict[str, _Job] = {}
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._closing = False
        self._tmp = None
        self._queue: list[str] = []

    def add(self, key: str, fn: Callable[[Any], Any], needed_by: Callable[[Any], bool]) -> None:
        with self._lock:
            self._jobs.setdefault(key, _Job(key, fn, needed_by))

    def has(self, key: str) -> bool:
        return key in self._jobs

    def start(self, items, tmp_path_factory) -> list[str]:
        """Start the background thread on the jobs that ``items`` need; returns their keys in order."""
        self._tmp = tmp_path_factory
        if self._thread is not None:
            return []
        wanted = [job for job in self._jobs.values() if any(job.needed_by(item) for item in items)]
        rank = {job.key: next((i for i, p in enumerate(ORDER) if job.key.startswith(p)), len(ORDER)) for job in wanted}
        queue = [job.key for job in sorted(wanted, key=lambda j: rank[j.key])]  # stable: registration order within a rank
        if os.environ.get("SPECDEC_TEST_LANE", "1") == "0" or not queue:
            return []
        self._queue = queue
        self._thread = threading.Thread(target=self._work, args=(queue,), name="specdec-test-lane", daemon=True)
        self._thread.start()
        return queue

    def _claim(self, key: str) -> _Job | None:
        with self._lock:
            job = self._jobs[key]
            if job.state != "pending" or (self._closing and threading.current_thread() is self._thread):
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
        for key in queue:
            job = self._claim(key)
            if job is not None:
                self._run(job, "lane")

    def result(self, key: str):
        """The job's result: computed here if nobody started it, awaited if the lane runs it."""
        job = self._claim(key)
        if job is not None:
            self._run(job, "main")
        while not self._jobs[key].done.is_set():
            # The lane runs it: meanwhile take another job of the same kind that nobody started
            # (the next page walk, say), so both cores work; else wait.
            other = next((j for k, j in self._queue_of_kind(key) if self._claim(k) is j), None)
            if other is not None:
                self._run(other, "main")
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
        """Take no new job; wait for the one running (it may have a server or a kernel up)."""
        with self._lock:
            self._closing = True
        if self._thread is not None:
            self._thread.join()

    def summary(self) -> list[str]:
        return [f"{job.key}: {job.seconds:.0f}s in the {job.where} thread" for job in self._jobs.values()
                if job.state == "done"]


LANE = Lane()
