"""The engine host (specdec_guide/engine/host.py): engines forked from one process that imported
torch and transformers once, answering exactly as an Engine built in the stub's own process.

The launcher starts a host for every server with a CPU-engine model (tests/test_triton_llmapi.py and
the session server use it through Triton); these tests put the host's answers next to a local
Engine's, on the same model.yaml, and check its lifetimes: an engine process ends with its
connection, the host with its server, and a killed host takes its engines along. That an orderly
stop of a server (``stop()``) ends its host and the host's engine is checked where a server is
already stopped in order, in the test's own process: tests/test_quickstart.py's container steps.
"""

from __future__ import annotations

import os
import pickle
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from specdec_guide.engine.config import ConfigError, load_config
from specdec_guide.engine.core import Engine
from specdec_guide.engine.host import EngineHostGone, RemoteEngine, engine_for
from specdec_guide.engine.requests import RequestError, parse_request
from specdec_guide.triton import serves_cpu_engine

from processes import children, until

PROMPT = "abc abc abc abc def abc abc"


def _start_host(tmp_path: Path, server_pid: int) -> tuple[subprocess.Popen, str]:
    address = str(tmp_path / "engine.sock")
    # As the launcher starts it (triton.TritonServer._launch): a session of its own, one BLAS thread.
    proc = subprocess.Popen([sys.executable, "-m", "specdec_guide.engine.host", address, str(server_pid),
                             str(os.getpid())], env={**os.environ, "OPENBLAS_NUM_THREADS": "1"},
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    assert until(lambda: Path(address).exists() or proc.poll() is not None), "the host never bound its socket"
    assert proc.poll() is None, proc.stderr.read()
    return proc, address


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    """One host for the module, its 'server' a sleeping process of our own."""
    server = subprocess.Popen(["sleep", "600"])
    proc, address = _start_host(tmp_path_factory.mktemp("host"), server.pid)
    try:
        yield proc, address, server
    finally:
        for p in (proc, server):
            if p.poll() is None:
                p.kill()
            p.wait()


@pytest.fixture(scope="module")
def model_yaml(tiny_models, tmp_path_factory):
    target, _ = tiny_models
    path = tmp_path_factory.mktemp("host_yaml") / "model.yaml"
    path.write_text(f"model: {target}\nbackend: pytorch\nspeculative_config:\n  decoding_type: NGram\n"
                    "  max_draft_len: 4\n  max_matching_ngram_size: 2\n")
    return path


def _request(**extra):
    return parse_request({"text_input": [PROMPT], "sampling_param_max_tokens": [12],
                          "sampling_param_exclude_input_from_output": [True], **extra})


def _plain(chunks):
    """Each chunk as it came, without its clock readings (they differ between any two runs). Read as
    they come: a local engine's chunks share one SpecStats, which later steps update."""
    return [(c.text, list(c.token_ids), c.finished, c.finish_reason, c.stop_reason, repr(c.stats)) for c in chunks]


def test_a_forked_engine_answers_as_a_local_one(host, model_yaml):
    _, address, _ = host
    local = Engine.from_yaml(model_yaml)
    remote = engine_for(load_config(model_yaml), model_yaml, address=address)
    try:
        assert isinstance(remote, RemoteEngine)
        want = _plain(local.generate(_request()))
        got = list(remote.generate(_request()))
        assert _plain(got) == want and len(want) > 1
        assert got[-1].finished and got[-1].stats.accepted_tokens > 0  # NGram really drafted
        assert 0 < got[0].arrival_time_ns <= got[0].first_token_time_ns <= got[-1].last_token_time_ns
        assert remote.encode(PROMPT) == local.encode(PROMPT)
        assert remote.penalties_note == local.penalties_note
        # Refused before the first chunk, with the engine's own message, as Engine.generate does.
        # (top_p 0: the release refuses it, llmapi_top_p_zero_refused; an oversized max_tokens is clamped.)
        refused = _request(sampling_param_top_p=[0.0])
        with pytest.raises(RequestError) as mine:
            local.generate(refused)
        with pytest.raises(RequestError) as theirs:
            remote.generate(refused)
        assert str(theirs.value) == str(mine.value)
        # A stream closed after its first chunk (a cancelled client), then a whole request. NGram's
        # pool is shared across requests (is_public_pool): both engines see the same sequence.
        for engine in (local, remote):
            stream = engine.generate(_request())
            next(stream)
            stream.close()
        assert _plain(remote.generate(_request())) == _plain(local.generate(_request()))
        # The one-response path (model.py's for every request of the pinned releases): one exchange.
        assert _plain([remote.complete(_request())]) == _plain([local.complete(_request())])
    finally:
        remote.close()


def test_a_model_that_cannot_load_fails_with_the_local_error(host, tmp_path):
    _, address, _ = host
    bad = tmp_path / "model.yaml"
    bad.write_text(f"model: {tmp_path / 'no_such_checkpoint'}\nbackend: pytorch\n")
    with pytest.raises(ConfigError) as mine:
        Engine.from_yaml(bad)
    with pytest.raises(ConfigError) as theirs:
        engine_for(load_config(bad), bad, address=address)
    assert str(theirs.value) == str(mine.value) and str(bad) in str(theirs.value)


def test_lifetimes_engine_with_its_connection_host_with_its_server_engines_with_the_host(tmp_path, model_yaml):
    server = subprocess.Popen(["sleep", "600"])
    proc, address = _start_host(tmp_path, server.pid)
    try:
        # Nothing imported before a model asks: a server whose models all fail early pays nothing.
        assert "libtorch" not in Path(f"/proc/{proc.pid}/maps").read_text()
        first = engine_for(load_config(model_yaml), model_yaml, address=address)
        second = engine_for(load_config(model_yaml), model_yaml, address=address)
        engines = children(proc.pid)
        assert len(engines) == 2
        assert len(os.listdir(f"/proc/{proc.pid}/task")) == 1  # forks without a thread beside it
        first.close()  # the stub unloaded its model, or was killed
        assert until(lambda: len(children(proc.pid)) == 1), "an engine outlived its connection"
        assert second.encode(PROMPT)
        server.kill()  # the server is gone (the launcher's stop() also kills the host's group)
        server.wait()
        assert until(lambda: proc.poll() is not None), "the host outlived its server"
        assert until(lambda: not any(Path(f"/proc/{pid}").exists() for pid in engines)), \
            "an engine outlived its host"
        with pytest.raises(EngineHostGone, match="ended"):
            second.encode(PROMPT)
        second.close()
    finally:
        for p in (proc, server):
            if p.poll() is None:
                p.kill()
            p.wait()


class _FakeEngineProcess:
    """The engine process's end of the socket, answering from a script and noting what it was asked."""

    def __init__(self, answers):
        from specdec_guide.engine import host as host_module

        self.host, self.asked = host_module, []
        self.stub_end, self._end = socket.socketpair()
        self._answers = list(answers)

    def answer_all(self):
        for answer in self._answers:
            self.asked.append(self.host._recv(self._end)[0])
            self.host._send(self._end, answer)


def test_a_stream_closed_early_tells_the_engine_process(model_yaml):
    import threading

    from specdec_guide.engine.requests import Chunk

    fake = _FakeEngineProcess([("ok", None), ("chunk", Chunk("a", [1])), ("ok", None)])
    worker = threading.Thread(target=fake.answer_all, daemon=True)
    worker.start()
    remote = RemoteEngine(fake.stub_end, load_config(model_yaml))
    try:
        stream = remote.generate(_request())
        assert next(stream).text == "a"
        stream.close()  # a client cancelled: the engine drops the request now, not at the next one
        worker.join(5)
        assert fake.asked == ["generate", "next", "close"]
    finally:
        remote.close()


def test_errors_travel_with_their_message_and_a_class_the_stub_can_import():
    from specdec_guide.engine.host import RemoteError, _portable

    class DrafterError(Exception):  # a user drafter's own class: the stub cannot import it
        pass

    try:
        raise DrafterError("the drafter's index is empty")
    except DrafterError as err:
        sent = _portable(err, note=False)
    assert type(sent) is RemoteError and str(sent) == "the drafter's index is empty"
    assert "DrafterError" in sent.__notes__[0] and "Traceback" in sent.__notes__[0]
    assert type(pickle.loads(pickle.dumps(sent))) is RemoteError
    located = _portable(ConfigError("m.yaml", 3, 7, "bad key"), note=False)
    assert type(located) is ConfigError and str(located) == "m.yaml:3:7: bad key"
    assert str(pickle.loads(pickle.dumps(located))) == "m.yaml:3:7: bad key"
    assert type(_portable(ValueError("x"), note=False)) is ValueError


def test_a_dead_engine_host_is_reported_while_the_server_runs(tmp_path):
    from specdec_guide.triton import TritonServer

    class Exited:
        def __init__(self, rc):
            self.rc = rc

        def poll(self):
            return self.rc

    server = TritonServer(tmp_path)
    server.proc, server.host_proc = Exited(None), Exited(1)
    assert server.exit_reason() == "the engine host of its CPU-engine models exited with status 1"
    server.host_proc = Exited(None)
    assert server.exit_reason() is None
    server.proc = Exited(-9)
    assert server.exit_reason() == "tritonserver exited with status -9"


def test_no_host_answers_is_an_error_that_says_where(tmp_path, model_yaml, monkeypatch):
    import specdec_guide.engine.host as host_module

    monkeypatch.setattr(host_module, "CONNECT_TIMEOUT_S", 0.2)
    with pytest.raises(EngineHostGone, match=f"no engine host answered at {tmp_path / 'none.sock'}"):
        engine_for(load_config(model_yaml), model_yaml, address=str(tmp_path / "none.sock"))


def test_only_repositories_with_a_cpu_engine_model_get_a_host(tmp_path):
    import specdec_guide

    adapter = Path(specdec_guide.__file__).parent / "engine" / "model.py"  # as `repo render` copies it
    (tmp_path / "echo" / "1").mkdir(parents=True)
    (tmp_path / "echo" / "1" / "model.py").write_text("class TritonPythonModel:\n    pass\n")
    assert not serves_cpu_engine(tmp_path)
    (tmp_path / "llm" / "1").mkdir(parents=True)
    (tmp_path / "llm" / "1" / "model.py").write_text(adapter.read_text())
    assert serves_cpu_engine(tmp_path)


def test_the_session_servers_stubs_never_load_torch(stand_in_server):
    """Through Triton: the models' stubs translate tensors only; torch is in the host and its engines."""
    def maps(pid: int) -> str:
        try:
            return Path(f"/proc/{pid}/maps").read_text()
        except OSError:
            return ""

    stubs = [pid for pid in children(stand_in_server.proc.pid)
             if "triton_python_backend_stub" in Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")]
    engines = children(stand_in_server.host_proc.pid)
    assert len(stubs) >= 10 and len(engines) == len(stubs)  # one engine per model
    assert len(list(Path(f"/proc/{stand_in_server.host_proc.pid}/task").iterdir())) == 1  # no thread at a fork
    assert all("libtorch" in maps(pid) for pid in engines)  # what the check below looks for
    assert not [pid for pid in stubs if "libtorch" in maps(pid)]
