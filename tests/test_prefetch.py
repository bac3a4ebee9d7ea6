"""The lane's own machinery (tests/prefetch.py), on stand-ins: the session server's watcher.

The session server is launched at the first test and waited for by a thread of its own from then
on, so that a stalled load is found (and launched again) while other tests run, not when the first
test that needs the server asks for it.
"""

from __future__ import annotations

import threading
import time

import pytest

from prefetch import StandIn
from processes import until


class FakeServer:
    """wait_ready as TritonServer's: blocks until the models are loaded (``loaded``), or raises."""

    def __init__(self, error: BaseException | None = None):
        self.launches, self.error = 1, error
        self.asked_at: list[tuple[float, str]] = []
        self.loaded = threading.Event()

    def wait_ready(self):
        self.asked_at.append((time.monotonic(), threading.current_thread().name))
        self.loaded.wait(10)
        if self.error is not None:
            raise self.error
        return self


def test_the_server_is_waited_for_from_its_launch_without_a_test_asking():
    stand_in, server = StandIn(), FakeServer()
    published = time.monotonic()
    stand_in.publish(server, timeout=30)
    try:
        assert until(lambda: server.asked_at), "nobody waited for the server after its launch"
        (asked, thread), = server.asked_at
        assert asked - published < 1 and thread == "specdec-stand-in-watch"
        assert not stand_in.is_ready()  # still loading: jobs that need it are passed by
        server.loaded.set()
        assert until(stand_in.is_ready)
        assert stand_in.ready(timeout=1) is server
        assert len(server.asked_at) == 1  # the test that asks gets the watcher's outcome
        assert until(lambda: stand_in.ready_after_s is not None)
        assert stand_in.report() == ("the session's stand-in server: ready "
                                     f"{stand_in.ready_after_s:.0f}s after its launch, in 1 launch(es)")
    finally:
        server.loaded.set()
        stand_in.stop_watching()
    assert not stand_in._watcher.is_alive()


def test_a_server_that_never_gets_ready_fails_every_test_that_asks():
    stand_in, server = StandIn(), FakeServer(error=RuntimeError("tritonserver stalled: nothing happened for 60s"))
    server.loaded.set()
    stand_in.publish(server, timeout=30)
    try:
        assert until(stand_in.is_ready)  # known: the jobs that need it run, and report it
        for _ in range(2):
            with pytest.raises(RuntimeError, match="stalled"):
                stand_in.ready(timeout=1)
        assert len(server.asked_at) == 1
        assert until(lambda: stand_in.ready_after_s is not None)
        assert stand_in.report() == "the session's stand-in server: never ready, in 1 launch(es)"
    finally:
        stand_in.stop_watching()


def test_asking_before_a_launch_times_out_with_the_reason():
    with pytest.raises(RuntimeError, match="not launched within 1 s"):
        StandIn().ready(timeout=1)
    assert StandIn().report() is None
