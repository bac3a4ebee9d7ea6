"""The engine host: one process per tritonserver that has imported torch and transformers once, and
forks the CPU engine of each model from there.

Without it, every model's Python stub imports torch and transformers itself before it loads
anything: about 4 CPU seconds per model on this guide's 2-core machine, most of what a CPU
tritonserver spends starting (a repository of 15 models: a minute of CPU). With it, a stub imports
only numpy and the request parser, and its engine is a fork of a process that already has the
libraries in memory.

How it runs: ``specdec-guide triton up`` (:class:`specdec_guide.triton.TritonServer`) starts the
host beside tritonserver, in a process group of its own that its engines share, and names the
host's socket (in the server's private temp folder) in :data:`HOST_ENV` for the stubs.
``model.py`` calls :func:`engine_for`: with the variable set it connects, and the host forks a
child that builds the :class:`~specdec_guide.engine.core.Engine` from the model's ``model.yaml``
and serves that one stub (:class:`RemoteEngine` answers as the
Engine does: the same chunks, the same errors, raised in the stub). Without the variable (a
tritonserver started by hand) the stub builds the Engine in its own process, as before.

Lifetimes: a child ends when its stub's connection closes (the model unloaded, or its stub was
killed) and is killed with the host; the host ends when tritonserver has, is killed with the
launcher (PR_SET_PDEATHSIG), and the launcher's ``stop()`` kills its group once tritonserver has
exited (so an orderly stop lets Triton finish the requests in flight first). The host never runs a
model: a process that forks should not have started threads, and torch starts its thread pool at
the first operation. (numpy's OpenBLAS starts one at import; the launcher sets
``OPENBLAS_NUM_THREADS=1`` for the host, and the engines compute with torch's own kernels.)
"""

from __future__ import annotations

import os
import pickle
import signal
import socket
import struct
import sys
import time
import traceback
from typing import Any, Iterator

from specdec_guide.engine.config import EngineConfig, penalties_applied
from specdec_guide.engine.requests import Chunk, GenerateRequest

HOST_ENV = "SPECDEC_ENGINE_HOST"  # the host's socket; set by the launcher for tritonserver's stubs
#: How long a stub waits for the host's socket to appear (it binds before it imports anything).
CONNECT_TIMEOUT_S = 60.0
_HEADER = struct.Struct("!Q")


class EngineHostGone(RuntimeError):
    """The host, or this model's engine process, ended while the stub was talking to it."""


# -- the wire: length-prefixed pickles over a Unix socket (both ends are this package) ------------
def _send(sock: socket.socket, message: Any) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    sock.sendall(_HEADER.pack(len(data)) + data)


def _read(sock: socket.socket, size: int) -> bytes:
    buf = bytearray()
    while len(buf) < size:
        part = sock.recv(size - len(buf))
        if not part:
            raise EOFError("the connection closed")
        buf += part
    return bytes(buf)


def _recv(sock: socket.socket) -> Any:
    (size,) = _HEADER.unpack(_read(sock, _HEADER.size))
    return pickle.loads(_read(sock, size))


class RemoteError(RuntimeError):
    """An error of the engine process whose class the stub may not import (a user drafter's, a
    library's): the same message (``str``), the original type and traceback in its note."""


def _portable(err: BaseException, note: bool) -> BaseException:
    """``err`` as the stub can raise it again: itself when its class is Python's or this package's
    and it pickles whole, else a :class:`RemoteError` with the same message. ``note``: the engine
    process's traceback goes along (model.py and Triton's log show it)."""
    portable = None
    if type(err).__module__ == "builtins" or type(err).__module__.startswith("specdec_guide."):
        try:
            copy = pickle.loads(pickle.dumps(err))
            portable = err if type(copy) is type(err) and str(copy) == str(err) else None
        except Exception:  # noqa: BLE001 - any failure to pickle means: send it as text
            portable = None
    if portable is None:
        portable = RemoteError(str(err))
        note = True  # the original type is named there
    if note:
        portable.add_note(f"(in the engine process {os.getpid()}, forked by the engine host: "
                          f"{type(err).__name__})\n{traceback.format_exc()}")
    return portable


def _exchange(sock: socket.socket, message: Any, what: str) -> tuple[str, Any]:
    """Send ``message``, return the (kind, value) answer; a lost connection is EngineHostGone."""
    try:
        _send(sock, message)
        return _recv(sock)
    except (EOFError, OSError) as err:
        raise EngineHostGone(f"the engine process of {what} ended ({err}); the server log has its last "
                             "words") from None
    except Exception as err:  # an answer the stub cannot read (an unpicklable value): a bug here
        raise RemoteError(f"could not read the engine process's answer for {what}: "
                          f"{type(err).__name__}: {err}") from None


# -- the stub's side ----------------------------------------------------------------------------
class RemoteEngine:
    """The Engine of one model, in a process the host forked: what model.py uses of an Engine."""

    def __init__(self, sock: socket.socket, config: EngineConfig):
        self._sock = sock
        self.config = config
        # Decided from model.yaml alone, as the Engine decides it (engine.config.penalties_applied).
        self.penalties_applied, self.penalties_note = penalties_applied(config)

    def _ask(self, *message) -> tuple[str, Any]:
        kind, value = _exchange(self._sock, message, str(self.config.path))
        if kind == "error":
            raise value
        return kind, value

    def encode(self, text: str) -> list[int]:
        return self._ask("encode", text)[1]

    def complete(self, request: GenerateRequest) -> Chunk:
        """As Engine.complete: the final chunk, in one exchange (the release's one-response path)."""
        return self._ask("complete", request)[1]

    def generate(self, request: GenerateRequest) -> Iterator[Chunk]:
        """As Engine.generate: a RequestError is raised here, before the first chunk."""
        self._ask("generate", request)
        return self._chunks()

    def _chunks(self) -> Iterator[Chunk]:
        ended = False
        try:
            while True:
                kind, chunk = self._ask("next")
                if kind == "end":
                    ended = True
                    return
                yield chunk
        except GeneratorExit:  # closed early (a cancelled stream): tell the engine below
            raise
        except BaseException:
            ended = True  # the engine dropped the request itself
            raise
        finally:
            if not ended:  # closed early (a cancelled stream): the engine drops the request too
                self._ask("close")

    def close(self) -> None:
        self._sock.close()


def engine_for(config: EngineConfig, path: str | os.PathLike, address: str | None = None):
    """The model's engine: from the engine host at ``address`` (default: :data:`HOST_ENV`, which
    the launcher sets), else built here. Raises what building it raises (a ConfigError with its
    file, line and column)."""
    address = address or os.environ.get(HOST_ENV)
    if not address:
        from specdec_guide.engine.core import Engine

        return Engine.from_config(config)
    sock = _connect(address)
    try:
        kind, value = _exchange(sock, ("load", str(path)), str(path))
    except BaseException:
        sock.close()
        raise
    if kind == "error":
        sock.close()
        raise value
    return RemoteEngine(sock, config)


def _connect(address: str) -> socket.socket:
    deadline = time.monotonic() + CONNECT_TIMEOUT_S
    while True:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(address)
            return sock
        except (FileNotFoundError, ConnectionRefusedError) as err:
            sock.close()
            if time.monotonic() > deadline:
                raise EngineHostGone(f"no engine host answered at {address} ({HOST_ENV}) within "
                                     f"{CONNECT_TIMEOUT_S:g} s ({err}); the server log says why") from None
            time.sleep(0.05)


# -- the host's side ----------------------------------------------------------------------------
def die_with_parent(sig: int, parent: int) -> None:
    """``sig`` to this process when its parent (the thread that started it) ends, even by SIGKILL;
    at once if the parent ``parent`` has ended already. Also tritonserver's (a ``preexec_fn`` of the
    launcher, before exec: the setting survives it)."""
    import contextlib
    import ctypes

    PR_SET_PDEATHSIG = 1
    with contextlib.suppress(Exception):  # no prctl (not Linux): the launcher's stop() still runs
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, sig)
    if os.getppid() != parent:  # it ended before the line above: no signal will come
        os.kill(os.getpid(), sig)


def _preload() -> None:
    """What every engine imports, imported once here (modules only: no model, no tensor math)."""
    import torch  # noqa: F401
    import transformers.models.llama.modeling_llama  # noqa: F401
    from transformers import AutoModelForCausalLM, AutoTokenizer  # noqa: F401 - the lazy names resolved
    from transformers.masking_utils import sdpa_mask  # noqa: F401

    import specdec_guide.engine.core  # noqa: F401
    from specdec_guide.drafters import draft_model, ngram, user_provided  # noqa: F401


def serve(address: str, server_pid: int) -> None:
    """The host's loop: bind, then fork an engine per connection while ``server_pid`` runs; the
    libraries are imported at the first connection, so a server whose models all fail before they
    ask for an engine (a model.yaml mistake) never pays for them."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(address)  # first: a stub that starts meanwhile connects and waits in the backlog
    listener.listen(64)
    listener.settimeout(1.0)
    preloaded = False
    from specdec_guide.background import running

    while running(server_pid):
        try:
            conn, _ = listener.accept()
        except socket.timeout:
            continue
        conn.settimeout(None)
        if not preloaded:
            _preload()
            signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernel reaps the children
            preloaded = True
        host = os.getpid()
        if os.fork() == 0:
            listener.close()
            code = 0
            try:
                _serve_engine(conn, host)
            except BaseException:  # noqa: BLE001 - the child's last words go to the server log
                traceback.print_exc()
                code = 1
            finally:
                sys.stderr.flush()
                os._exit(code)
        conn.close()


def _serve_engine(conn: socket.socket, parent: int) -> None:
    """A forked child: build one model's Engine and answer its stub until the connection closes."""
    die_with_parent(signal.SIGKILL, parent)  # with the host
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    try:
        _, path = _recv(conn)
    except (EOFError, OSError):
        return  # the stub went away before it asked
    try:
        from specdec_guide.engine.core import Engine

        engine = Engine.from_yaml(path)
    except BaseException as err:  # noqa: BLE001 - raised again in the stub's initialize
        from specdec_guide.engine.config import ConfigError

        _send(conn, ("error", _portable(err, note=not isinstance(err, ConfigError))))
        return
    _send(conn, ("loaded", None))
    chunks = None  # the stream being pulled ("next"), if any
    while True:
        try:
            op, *args = _recv(conn)
        except (EOFError, OSError):
            return  # the stub is gone
        try:
            if op in ("generate", "complete", "close") and chunks is not None:
                # A new request, or a stream closed early: the engine drops the open one first.
                chunks, stream = None, chunks
                stream.close()
            if op == "generate":
                chunks, reply = engine.generate(args[0]), ("ok", None)
            elif op == "next":
                try:
                    reply = ("chunk", next(chunks))
                except StopIteration:
                    chunks, reply = None, ("end", None)
            elif op == "complete":
                reply = ("ok", engine.complete(args[0]))
            elif op == "close":
                reply = ("ok", None)
            elif op == "encode":
                reply = ("ok", engine.encode(args[0]))
            else:
                raise ValueError(f"unknown request to the engine process: {op!r}")
        except Exception as err:  # noqa: BLE001 - raised again in the stub, which answers the client
            from specdec_guide.engine.requests import RequestError

            chunks, reply = None, ("error", _portable(err, note=not isinstance(err, RequestError)))
        _send(conn, reply)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 3:
        print("usage: python -m specdec_guide.engine.host SOCKET SERVER_PID LAUNCHER_PID", file=sys.stderr)
        return 2
    die_with_parent(signal.SIGKILL, int(args[2]))  # with the launcher (the thread that started it)
    serve(args[0], int(args[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
