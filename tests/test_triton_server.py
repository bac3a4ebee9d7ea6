"""The launcher (`specdec-guide triton up`, `serve()`), on a throw-away echo model.

These tests check starting, readiness, failure reporting and cleanup of the real bundled
tritonserver, independent of the CPU engine (test_triton_llmapi.py covers that).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest
from processes import descendants, procs

from specdec_guide.diagnostics import UserError
from specdec_guide.triton import TritonServer, diagnose, free_ports, serve, sweep_lock

pytestmark = pytest.mark.triton
ROOT = Path(__file__).resolve().parents[1]

ECHO_CONFIG = """name: "{name}"
backend: "python"
max_batch_size: 0
model_transaction_policy {{ decoupled: true }}
instance_group [{{ count: 1 kind: KIND_CPU }}]
input [{{ name: "text_input" data_type: TYPE_STRING dims: [ -1 ] }}]
output [{{ name: "text_output" data_type: TYPE_STRING dims: [ -1 ] }}]
"""
ECHO_MODEL = """import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        {init}

    def execute(self, requests):
        for request in requests:
            text = pb_utils.get_input_tensor_by_name(request, "text_input").as_numpy()
            sender = request.get_response_sender()
            sender.send(pb_utils.InferenceResponse([pb_utils.Tensor("text_output", text)]),
                        flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)
        return None
"""


def _echo_repo(root: Path, name="tensorrt_llm", init="pass", config=None, model_py=True) -> Path:
    (root / name / "1").mkdir(parents=True)
    (root / name / "config.pbtxt").write_text(config if config is not None else ECHO_CONFIG.format(name=name))
    if model_py:
        (root / name / "1" / "model.py").write_text(ECHO_MODEL.format(init=init))
    return root


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead for our purposes.
    return "zombie" not in Path(f"/proc/{pid}/status").read_text().lower() if Path(f"/proc/{pid}").exists() else False


def _group_members(pgid: int) -> list[int]:
    return [pid for pid, _, g in procs() if g == pgid]


def _generate(http_url: str, text: str) -> dict:
    req = urllib.request.Request(f"{http_url}/v2/models/tensorrt_llm/generate", data=json.dumps({"text_input": text}).encode())
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())


def test_serve_starts_answers_and_cleans_up(tmp_path):
    repo = _echo_repo(tmp_path)
    with serve(repo, timeout=60) as server:
        pid = server.proc.pid
        assert server.http_url.startswith("http://127.0.0.1:")
        assert _generate(server.http_url, "hello")["text_output"] == "hello"
        assert server.shm_files(), "the Python backend maps its region under our prefix"
        assert len(_group_members(pid)) >= 2  # server + stub
        prefix = server.shm_prefix
    assert server.proc is None and not _alive(pid)
    assert _group_members(pid) == []
    assert not list(Path("/dev/shm").glob(f"{prefix}*"))
    assert "Started HTTPService at 127.0.0.1" in server.log()  # loopback only, and the log survives stop()


def test_two_servers_side_by_side_get_their_own_ports_and_shm(tmp_path):
    repo = _echo_repo(tmp_path)
    with serve(repo) as a, serve(repo) as b:
        assert len({a.http_port, a.grpc_port, a.metrics_port, b.http_port, b.grpc_port, b.metrics_port}) == 6
        assert a.shm_prefix != b.shm_prefix
        assert _generate(a.http_url, "a")["text_output"] == "a"
        assert _generate(b.http_url, "b")["text_output"] == "b"


def test_malformed_config_pbtxt_fails_fast_with_file_line_col(tmp_path):
    bad = 'name: "tensorrt_llm"\nbackend: "python"\ninput [ { name: "text_input" data_type: TYPE_STRING dims: [ -1 ] }\noutput [\n'
    repo = _echo_repo(tmp_path, config=bad)
    t0 = time.monotonic()
    server = TritonServer(repo, timeout=60)
    with pytest.raises(UserError) as err:
        server.start()
    assert time.monotonic() - t0 < 30
    first = str(err.value).splitlines()[0]
    assert f"{repo / 'tensorrt_llm' / 'config.pbtxt'}:4:1: Expected \",\", found \"output\"" in first
    assert server.proc is None and not server.shm_files()


def test_model_that_fails_to_load_reports_the_reason(tmp_path):
    repo = _echo_repo(tmp_path, init='raise ValueError("model.yaml: bad decoding_type")')
    with pytest.raises(UserError) as err:
        TritonServer(repo, timeout=60).start()
    assert "model 'tensorrt_llm' failed to load: ValueError: model.yaml: bad decoding_type" in str(err.value).splitlines()[0]


def test_missing_model_py_fails_instead_of_hanging(tmp_path):
    repo = _echo_repo(tmp_path, model_py=False)
    t0 = time.monotonic()
    with pytest.raises(UserError, match="Python model file not found"):
        TritonServer(repo, timeout=60).start()
    assert time.monotonic() - t0 < 30


def test_readiness_timeout_stops_the_server(tmp_path):
    repo = _echo_repo(tmp_path, init="import time; time.sleep(60)")
    server = TritonServer(repo, timeout=3)
    with pytest.raises(UserError, match="not ready after 3s"):
        server.start()
    assert server.proc is None and not server.shm_files()


def test_a_stalled_load_is_launched_again_once_then_reported(tmp_path):
    """A model whose stub never answers (its initialize waits forever, using no CPU) is a stall, not
    a slow load: launched again once, then one error naming the model, long before the timeout."""
    repo = _echo_repo(tmp_path, init="import time; time.sleep(3600)")
    server = TritonServer(repo, timeout=120, stall_s=2)
    started = time.monotonic()
    with pytest.raises(UserError, match="stalled: nothing happened for 2s while loading tensorrt_llm"):
        server.start()
    assert time.monotonic() - started < 40
    assert server.launches == 2
    assert server.proc is None and not server.shm_files()


def test_diagnose_pairs_parse_errors_with_files():
    log = (
        '[libprotobuf ERROR text_format.cc:337] Error parsing text-format inference.ModelConfig: 7:3: Unknown field "x".\n'
        'E1 model_repository_manager.cc:1460] "Poll failed for model directory \'m\': failed to read text proto from /r/m/config.pbtxt"\n'
    )
    assert diagnose(log) == ['/r/m/config.pbtxt:7:3: Unknown field "x".']


def _up(repo: Path, *ports: int) -> subprocess.Popen:
    args = [sys.executable, "-m", "specdec_guide", "triton", "up", "--repo", str(repo), "--timeout", "60"]
    for flag, port in zip(("--http-port", "--grpc-port", "--metrics-port"), ports):
        args += [flag, str(port)]
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)


def test_cli_triton_up_serves_the_health_snippet_and_stops_on_sigterm(tmp_path):
    repo = _echo_repo(tmp_path / "repo")
    http, grpc, metrics = free_ports(3)
    proc = _up(repo, http, grpc, metrics)
    try:
        lines = []
        for line in proc.stdout:
            lines.append(line)
            if line.startswith("Ctrl-C"):
                break
        text = "".join(lines)
        assert f"HTTP     http://127.0.0.1:{http}" in text and f"gRPC     127.0.0.1:{grpc}" in text, text + proc.stderr.read()
        env = dict(os.environ, TRITON_HTTP_PORT=str(http))
        health = subprocess.run(["bash", "-e", ROOT / "snippets/triton/health.sh"], env=env, capture_output=True, text=True, timeout=30)
        assert health.returncode == 0 and "server ready" in health.stdout and "model ready" in health.stdout, health
        server_pids = descendants(proc.pid)
        assert len(server_pids) >= 2  # tritonserver and its Python stub
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    # tritonserver runs in its own session; it must be gone too.
    assert not [p for p in server_pids if _alive(p)]
    assert not [p for p in Path("/dev/shm").iterdir() if p.name.startswith(f"specdec{proc.pid}x")]


def test_killed_launcher_takes_the_server_down(tmp_path):
    """Even SIGKILL on `triton up` (no cleanup code runs) must not leave tritonserver behind."""
    repo = _echo_repo(tmp_path / "repo")
    proc = _up(repo, *free_ports(3))
    with contextlib.ExitStack() as held:
        try:
            for line in proc.stdout:
                if line.startswith("Ctrl-C"):
                    break
            server_pids = descendants(proc.pid)
            assert server_pids
            # From here until we have looked, no server's start (ours, another worker's, another process's)
            # may sweep what the killed launcher leaves.
            held.enter_context(sweep_lock())
        finally:
            proc.kill()
            proc.wait()
        deadline = time.monotonic() + 60
        while [p for p in server_pids if _alive(p)] and time.monotonic() < deadline:
            time.sleep(0.5)
        assert not [p for p in server_pids if _alive(p)]
        # The server got SIGTERM from the kernel and shut down in order: its stubs free their regions.
        assert not [p for p in Path("/dev/shm").iterdir() if p.name.startswith(f"specdec{proc.pid}x")]
        # Only the launcher's temp dir (backend links, log) is left; the next start sweeps it.
        left = list(Path(tempfile.gettempdir()).glob(f"specdec-triton-specdec{proc.pid}x*"))
        assert len(left) == 1
    with serve(repo):
        assert not left[0].exists()


def test_cli_triton_up_refuses_a_busy_port(tmp_path):
    repo = _echo_repo(tmp_path)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        busy = s.getsockname()[1]
        http, metrics = free_ports(2)
        proc = _up(repo, http, busy, metrics)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2
    assert err.strip() == f"specdec-guide triton: port {busy} on 127.0.0.1 is in use (--grpc-port)"


def test_restart_on_the_same_ports_right_after_stop_is_not_refused(tmp_path):
    """Issue 12 item 3: a port whose connections sit in TIME_WAIT binds for tritonserver, so the
    launcher must not call it busy (a probe without SO_REUSEADDR did, for about a minute)."""
    repo = _echo_repo(tmp_path)
    http, grpc, metrics = free_ports(3)
    with serve(repo, http_port=http, grpc_port=grpc, metrics_port=metrics) as srv:
        # A client connection that the server side closes leaves the server's end in TIME_WAIT.
        with urllib.request.urlopen(f"{srv.http_url}/v2/health/ready", timeout=10) as r:
            assert r.status == 200
    time_wait = subprocess.run(["ss", "-tan", f"sport = :{http}"], capture_output=True, text=True)
    with serve(repo, http_port=http, grpc_port=grpc, metrics_port=metrics) as srv:
        with urllib.request.urlopen(f"{srv.http_url}/v2/health/ready", timeout=10) as r:
            assert r.status == 200, time_wait.stdout


def test_triton_up_reads_the_pages_port_variables(tmp_path):
    """One set of port variables: TRITON_HTTP_PORT etc. move `triton up` and the snippets alike."""
    repo = _echo_repo(tmp_path / "repo")
    http, grpc, metrics = free_ports(3)
    env = dict(os.environ, TRITON_HTTP_PORT=str(http), TRITON_GRPC_PORT=str(grpc), TRITON_METRICS_PORT=str(metrics))
    proc = subprocess.Popen([sys.executable, "-m", "specdec_guide", "triton", "up", "--repo", str(repo), "--timeout", "60"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True, env=env)
    try:
        lines = []
        for line in proc.stdout:
            lines.append(line)
            if line.startswith("Ctrl-C"):
                break
        text = "".join(lines)
        assert f"http://127.0.0.1:{http}" in text and f"127.0.0.1:{grpc}" in text, text + proc.stderr.read()
        health = subprocess.run(["bash", "-e", ROOT / "snippets/triton/health.sh"], env=env, capture_output=True,
                                text=True, timeout=30)
        assert health.returncode == 0 and "model ready" in health.stdout, health
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    bad = subprocess.run([sys.executable, "-m", "specdec_guide", "triton", "up", "--repo", str(repo)],
                         env=dict(os.environ, TRITON_HTTP_PORT="80a"), capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "$TRITON_HTTP_PORT='80a' is not a port number" in bad.stderr, bad.stderr


def test_a_signal_while_serving_only_asks_the_loop_to_end(monkeypatch):
    """Ctrl-C must not raise inside the serving loop: an exception there can land in Popen.poll()
    between its lock's acquire and its try, and stop() then waits on that lock for ever (a `triton
    up` that never stopped, seen under load). Here the server's poll takes a lock and the signal
    comes while it is held: the lock must be released, the server stopped once, and the exit clean."""
    import threading
    import types

    from specdec_guide import triton

    held = threading.Lock()
    calls = []

    class Server:
        repo, http_url, grpc_address, metrics_url, log_path, auto_complete = "r", "h", "g", "m", "l", False

        def __init__(self, *args, **kwargs):
            pass

        def start(self):
            calls.append("start")

        def exit_reason(self):  # as Popen._internal_poll takes its lock: acquire, then try
            if not held.acquire(False):
                return None
            if calls.count("poll") == 1:
                os.kill(os.getpid(), signal.SIGINT)  # the handler runs here, before the try
            try:
                calls.append("poll")
                return None
            finally:
                held.release()

        def stop(self):
            calls.append("stop")

    monkeypatch.setattr(triton, "TritonServer", Server)
    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    args = types.SimpleNamespace(repo="r", timeout=1, log_verbose=0, auto_complete_config=False,
                                 **{name: 1 for name in triton.PORT_NAMES})
    assert triton._up(args) == 0
    assert not held.locked(), "the signal interrupted the poll with its lock taken"
    assert calls[0] == "start" and calls[-1] == "stop" and calls.count("stop") == 1, calls
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before
