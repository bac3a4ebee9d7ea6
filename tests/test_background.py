"""specdec_guide.background: the helpers GPU notebooks use around servers they start in the background.

Exercised here against a real process (Python's http.server) on a free port: readiness, a
server that died, a deadline, stopping by pid file, and an HTTP error's message. The GPU notebooks
write the same helpers out in a cell of their own (they need only their container); every case runs
against the package and against each notebook's cell (tests/notebook_cells.py), whose errors are
RuntimeError with the same messages.
"""

from __future__ import annotations

import subprocess
import sys
from types import SimpleNamespace

import pytest

from notebook_cells import HELPER_NOTEBOOKS, load_helpers
from specdec_guide import background
from specdec_guide.diagnostics import UserError
from specdec_guide.triton import free_ports

IMPLEMENTATIONS = ["package", *(stem for stem, names in sorted(HELPER_NOTEBOOKS.items()) if "wait_ready" in names)]


@pytest.fixture(params=IMPLEMENTATIONS)
def impl(request):
    """The package's helpers (errors: UserError) or a notebook's helper cell (errors: RuntimeError)."""
    if request.param == "package":
        return SimpleNamespace(alive=background.alive, wait_ready=background.wait_ready, stop=background.stop,
                               post_json=background.post_json, error=UserError)
    helpers = load_helpers(request.param)
    helpers.error = RuntimeError
    return helpers


@pytest.fixture()
def http_server(tmp_path):
    port = free_ports(1)[0]
    proc = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
                            cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    pid_file = tmp_path / "serve.pid"
    pid_file.write_text(f"{proc.pid}\n")
    try:
        yield f"http://127.0.0.1:{port}", pid_file, proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)


def test_wait_ready_then_stop_by_pid_file(http_server, impl):
    url, pid_file, proc = http_server
    impl.wait_ready(url + "/", timeout_s=60, pid_file=pid_file, interval_s=0.2)
    assert impl.alive(pid_file)
    impl.stop(pid_file, timeout_s=30)
    proc.wait(timeout=30)
    assert not impl.alive(pid_file) and proc.returncode is not None


def test_a_server_that_died_is_reported_at_once_with_its_log(http_server, impl):
    url, pid_file, proc = http_server
    proc.kill()
    proc.wait(timeout=30)
    with pytest.raises(impl.error, match=r"exited before .* was ready \(see .*serve\.log\)"):
        impl.wait_ready(url + "/", timeout_s=60, pid_file=pid_file, interval_s=0.2)


def test_a_deadline_ends_the_wait(impl):
    port = free_ports(1)[0]  # nothing listens there
    with pytest.raises(impl.error, match=r"was not ready after 0.5 s"):
        impl.wait_ready(f"http://127.0.0.1:{port}/", timeout_s=0.5, interval_s=0.1)


def test_an_http_error_carries_the_status_and_the_server_message(http_server, impl):
    url, pid_file, _ = http_server
    impl.wait_ready(url + "/", timeout_s=60, pid_file=pid_file, interval_s=0.2)
    with pytest.raises(impl.error, match=r"HTTP 501: .*Unsupported method \('POST'\)"):
        impl.post_json(url + "/", {"text_input": "x"})


def test_a_pid_file_without_a_pid_is_a_clear_error(tmp_path, impl):
    bad = tmp_path / "serve.pid"
    bad.write_text("not a pid\n")
    assert not impl.alive(bad)
    assert not impl.alive(tmp_path / "missing.pid")  # no file: not running either
    with pytest.raises(impl.error, match="expected a process id"):
        impl.stop(bad)
