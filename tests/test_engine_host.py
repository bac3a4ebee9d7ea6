"""The engine host (specdec_guide/engine/host.py): engines forked from one process that imported
torch and transformers once, answering exactly as an Engine built in the stub's own process.

The launcher starts a host for every server with a CPU-engine model (tests/test_triton_llmapi.py and
the session server use it through Triton); these tests put the host's answers next to a local
Engine's, on the same model.yaml, and check its lifetimes: an engine process ends with its
connection, the host with its server, and a killed host takes its engines along.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
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
    proc = subprocess.Popen([sys.executable, "-m", "specdec_guide.engine.host", address, str(server_pid)],
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
        too_long = _request(sampling_param_max_tokens=[10**6])
        with pytest.raises(RequestError) as mine:
            local.generate(too_long)
        with pytest.raises(RequestError) as theirs:
            remote.generate(too_long)
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
        first = engine_for(load_config(model_yaml), model_yaml, address=address)
        second = engine_for(load_config(model_yaml), model_yaml, address=address)
        engines = children(proc.pid)
        assert len(engines) == 2
        first.close()  # the stub unloaded its model, or was killed
        assert until(lambda: len(children(proc.pid)) == 1), "an engine outlived its connection"
        proc.send_signal(signal.SIGTERM)  # ignored: an orderly stop lets Triton finish its requests
        time.sleep(0.5)
        assert proc.poll() is None and second.encode(PROMPT)
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
    assert all("libtorch" in maps(pid) for pid in engines)  # what the check below looks for
    assert not [pid for pid in stubs if "libtorch" in maps(pid)]
