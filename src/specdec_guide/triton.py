"""Start and stop a real ``tritonserver`` on a CPU-only machine.

The ``nvidia-pytriton`` wheel ships a complete tritonserver (2.51.0) with the Python backend and
one backend stub per Python version. We launch that binary directly on a model repository, so
the guide's curl and tritonclient commands talk to the same server process they would in the
container; only the model behind it is our CPU engine.

``specdec-guide triton up --repo DIR`` runs it in the foreground; ``serve(repo)`` /
``TritonServer`` do the same for notebooks and tests, on free ports, with cleanup in ``finally``.

Like the container's ``launch_triton_server.py`` (behaviour fact ``launcher_disables_auto_complete``),
the server starts with ``--disable-auto-complete-config`` unless asked otherwise
(``--auto-complete-config``, ``auto_complete=True``: plain ``tritonserver`` as a reader might run
it): Triton then takes max_batch_size and the decoupled policy from config.pbtxt, and model.yaml's
``triton_config`` reaches only the model itself.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

from specdec_guide.diagnostics import UserError

LOG_TAIL_LINES = 25
#: Seconds without any progress (no new log line, no CPU time used by the server or its models'
#: stubs) after which a server that is not ready counts as stalled. Loading is CPU-bound, so a
#: load that is merely slow keeps making progress.
STALL_S = 60.0
TICKS_PER_S = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
PORT_NAMES = ("http_port", "grpc_port", "metrics_port")
# One set of port variables for everything on the pages: `triton up` reads them, and the curl and
# tritonclient snippets read the same names (with the same defaults: Triton's tutorial ports).
PORT_ENV = {"http_port": ("TRITON_HTTP_PORT", 8000), "grpc_port": ("TRITON_GRPC_PORT", 8001),
            "metrics_port": ("TRITON_METRICS_PORT", 8002)}
STOP_GRACE_S = 10.0


def launcher_disables_auto_complete(track: str | None = None) -> bool:
    """The behaviour fact ``launcher_disables_auto_complete`` (true where the record has none yet)."""
    from specdec_guide.releases.tracks import Registry

    return bool(Registry().resolve(track).behaviour.value("launcher_disables_auto_complete", True))


def _pytriton_paths() -> tuple[Path, Path]:
    """(pytriton package dir, bundled shared-library dir), or a UserError naming the extra."""
    import importlib.util

    spec = importlib.util.find_spec("pytriton")
    if spec is None or not spec.submodule_search_locations:
        raise UserError("nvidia-pytriton is not installed; install the engine extra: pip install -e '.[engine]'")
    pkg = Path(next(iter(spec.submodule_search_locations)))
    return pkg, pkg.parent / "nvidia_pytriton.libs"


_PARSE_ERR = re.compile(r"Error parsing text-format inference\.ModelConfig: (\d+):(\d+): (.*)$")
_PROTO_FILE = re.compile(r"failed to read text proto from ([^\"]+)")
_LOAD_ERR = re.compile(r"failed to load '([^']+)' version \d+: (.*)$")
_STUB_ERR = re.compile(r"Failed to preinitialize Python stub: (.*)$")
# Lines that are always there on CPU and only hide the reason.
_NOISE = ("CudaDriverHelper has not been initialized",)


def _unescape(text: str) -> str:
    return text.rstrip('"').replace("\\n", "\n").strip()


def diagnose(log: str) -> list[str]:
    """The reasons a start failed, one line each, from tritonserver's log.

    A malformed config.pbtxt comes out as ``path:line:col: message`` (protobuf reports line:col
    on one log line and Triton the file on the next); a model that fails to load as
    ``model 'name': <first line of the exception>``.
    """
    found: list[str] = []
    pending: list[tuple[str, str, str]] = []
    for line in log.splitlines():
        if m := _PARSE_ERR.search(line):
            pending.append(m.groups())
        elif (m := _PROTO_FILE.search(line)) and pending:
            row, col, msg = pending.pop(0)
            found.append(f"{m.group(1)}:{row}:{col}: {msg}")
        elif m := _LOAD_ERR.search(line):
            reason = _unescape(m.group(2)).splitlines()[0]
            found.append(f"model '{m.group(1)}' failed to load: {reason.removeprefix('Internal: ')}")
        elif m := _STUB_ERR.search(line):
            found.append(_unescape(m.group(1)).splitlines()[0])
    found += [f"config.pbtxt:{r}:{c}: {msg}" for r, c, msg in pending]
    return list(dict.fromkeys(found))


_OWN_NAME = re.compile(r"^(?:specdec-triton-)?specdec(\d+)x[0-9a-f]{8}_")


@contextlib.contextmanager
def sweep_lock():
    """Held (flock, machine-wide) by every sweep of stale launcher leftovers: whoever holds it sees
    what a killed launcher left until they let go (the launcher's own test does). Without a
    lock file we can open, the sweep runs unlocked, as before."""
    import fcntl

    try:
        handle = open(Path(tempfile.gettempdir()) / "specdec-triton-sweep.lock", "a")
    except OSError:
        yield
        return
    with handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def _sweep_stale() -> None:
    """Remove temp dirs and /dev/shm regions left by launchers that were SIGKILLed.

    Only names in our own pattern (``specdec<pid>x<8 hex>_``) whose launcher pid is gone are touched.
    """
    with sweep_lock():
        for folder in (Path(tempfile.gettempdir()), Path("/dev/shm")):
            with contextlib.suppress(OSError):
                for entry in folder.iterdir():
                    m = _OWN_NAME.match(entry.name)
                    if m and not Path(f"/proc/{m.group(1)}").exists():
                        with contextlib.suppress(OSError):
                            shutil.rmtree(entry) if entry.is_dir() and not entry.is_symlink() else entry.unlink()


#: The longest Unix socket path Linux binds (sun_path is 108 bytes, with its terminating NUL).
MAX_SOCKET_PATH = 107


def serves_cpu_engine(repo: Path) -> bool:
    """Whether a model of ``repo`` is the guide's CPU engine adapter (engine/model.py, as `repo
    render --engine cpu` copies it): it asks for its engine with ``engine_for``."""
    return any("engine_for(" in p.read_text(errors="replace") for p in repo.glob("*/*/model.py"))


def _stat(pid: int | str) -> list[str]:
    """The fields of /proc/PID/stat after the process name: state ppid pgrp ...; utime, stime at 11, 12."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def cpu_ticks(pid: int) -> int:
    """CPU time (clock ticks) one process has used so far."""
    fields = _stat(pid)
    return int(fields[11]) + int(fields[12])


def group_cpu_ticks(pgid: int) -> int:
    """CPU time (clock ticks) used so far by the live processes of a process group: tritonserver
    and its models' stubs share the server's group; the engine host and its engines share the
    host's (``TritonServer.host_proc``)."""
    total = 0
    with contextlib.suppress(OSError):
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            with contextlib.suppress(OSError, ValueError, IndexError):
                fields = _stat(entry.name)
                if int(fields[2]) == pgid:
                    total += int(fields[11]) + int(fields[12])
    return total


def _still_loading(log: str) -> list[str]:
    """Models the log says began loading and neither loaded nor failed."""
    began = re.findall(r'loading: ([^:"\s]+):\d+', log)
    ended = set(re.findall(r"successfully loaded '([^']+)'", log)) | set(re.findall(r"failed to load '([^']+)'", log))
    return [m for m in dict.fromkeys(began) if m not in ended]


def free_ports(n: int = 1) -> list[int]:
    """``n`` distinct loopback ports that were free a moment ago (held together while picked)."""
    socks = [socket.socket(socket.AF_INET, socket.SOCK_STREAM) for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _port_busy(port: int) -> bool:
    """True when tritonserver could not bind ``port`` on 127.0.0.1.

    Probed with SO_REUSEADDR, as servers bind: after a server stops, its port keeps connections in
    TIME_WAIT for about a minute, and tritonserver binds it again at once (a restart on the same
    ports is tested), while a probe without the option would call it busy and refuse the restart.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


class TritonServer:
    """One tritonserver process serving ``repo`` on loopback.

    Ports left as ``None`` are picked free at start. Use it as a context manager; ``stop()`` is
    idempotent and always removes the temp backend dir and this server's /dev/shm regions.
    """

    def __init__(
        self,
        repo: str | os.PathLike,
        http_port: int | None = None,
        grpc_port: int | None = None,
        metrics_port: int | None = None,
        timeout: float = 120.0,
        log_verbose: int = 0,
        extra_args: tuple[str, ...] = (),
        env: dict[str, str] | None = None,
        auto_complete: bool | None = None,
        stall_s: float = STALL_S,
        engine_host: bool = True,
    ):
        self.repo = Path(repo).resolve()
        self.stall_s = stall_s
        # The guide's CPU engine models get their engines from one engine host per server
        # (engine/host.py): torch and transformers imported once, not once per model's stub.
        self.engine_host = engine_host
        self.host_proc: subprocess.Popen | None = None
        self._stop_lock = threading.RLock()
        self.http_port, self.grpc_port, self.metrics_port = http_port, grpc_port, metrics_port
        self.timeout = timeout
        self.log_verbose = log_verbose
        self.extra_args = tuple(extra_args)
        self.extra_env = dict(env or {})  # e.g. thread limits for the model processes
        # None: as the container's launcher does (launcher_disables_auto_complete of the default track).
        self.auto_complete = (not launcher_disables_auto_complete()) if auto_complete is None else bool(auto_complete)
        # A unique prefix lets us find (and delete) exactly this server's shared-memory files.
        self.shm_prefix = f"specdec{os.getpid()}x{uuid.uuid4().hex[:8]}_"
        self.proc: subprocess.Popen | None = None
        self._picked: list[str] = []
        self._paths: tuple[Path, Path] | None = None
        self._ready_by = 0.0
        self.launches = 0  # tritonserver processes started (a stall or a port clash starts another)
        self._workdir: Path | None = None
        self.log_path: Path | None = None
        self._final_log = ""

    # -- addresses -------------------------------------------------------------------------
    @property
    def http_address(self) -> str:
        """``host:port`` as tritonclient.http and curl take it."""
        return f"127.0.0.1:{self.http_port}"

    @property
    def grpc_address(self) -> str:
        """``host:port`` as tritonclient.grpc takes it."""
        return f"127.0.0.1:{self.grpc_port}"

    @property
    def http_url(self) -> str:
        return f"http://{self.http_address}"

    @property
    def grpc_url(self) -> str:
        return self.grpc_address

    @property
    def metrics_url(self) -> str:
        return f"http://127.0.0.1:{self.metrics_port}/metrics"

    # -- lifecycle -------------------------------------------------------------------------
    def _backend_dir(self, pkg: Path) -> Path:
        """A backend dir whose python/ links the bundled backend and the stub for *this* Python.

        The bundled backends/python has no stub next to it; the stub must match the interpreter
        that will run model.py, so we pick it from python_backend_stubs/<major.minor>/.
        """
        ver = f"{sys.version_info.major}.{sys.version_info.minor}"
        src = pkg / "tritonserver"
        stub = src / "python_backend_stubs" / ver / "triton_python_backend_stub"
        if not stub.exists():
            raise UserError(f"nvidia-pytriton has no Python backend stub for Python {ver} ({stub})")
        py = self._workdir / "backends" / "python"
        py.mkdir(parents=True)
        for f in (src / "backends/python/libtriton_python.so", src / "backends/python/triton_python_backend_utils.py", stub):
            (py / f.name).symlink_to(f)
        return py.parent

    def _env(self, libs: Path) -> dict[str, str]:
        env = dict(os.environ)
        # The stub finds its interpreter as `python3` on PATH: make it this venv's Python, so
        # model.py sees torch/transformers/specdec_guide.
        env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
        # The stub links libpython from the interpreter's LIBDIR; the server needs the wheel's libs.
        ld = [sysconfig.get_config_var("LIBDIR") or "", str(libs), env.get("LD_LIBRARY_PATH", "")]
        env["LD_LIBRARY_PATH"] = os.pathsep.join(p for p in ld if p)
        env.update(self.extra_env)
        return env

    def _command(self, pkg: Path, backends: Path) -> list[str]:
        return [
            str(pkg / "tritonserver/bin/tritonserver"),
            f"--model-repository={self.repo}",
            f"--backend-directory={backends}",
            "--http-address=127.0.0.1",
            f"--http-port={self.http_port}",
            "--grpc-address=127.0.0.1",
            f"--grpc-port={self.grpc_port}",
            f"--metrics-port={self.metrics_port}",
            "--allow-gpu-metrics=false",
            "--pinned-memory-pool-byte-size=0",
            "--cuda-memory-pool-byte-size=0:0",
            f"--backend-config=python,shm-region-prefix-name={self.shm_prefix}",
            "--model-control-mode=none",
            "--exit-on-error=true",
            "--strict-readiness=true",
            f"--log-verbose={self.log_verbose}",
            *(() if self.auto_complete or "--disable-auto-complete-config" in self.extra_args
              else ("--disable-auto-complete-config",)),
            *self.extra_args,
        ]

    def start(self, wait: bool = True) -> "TritonServer":
        """Launch tritonserver and (``wait``) block until it is ready or ``timeout`` has passed.

        ``wait=False`` returns as soon as the process runs, so that its models load while the caller
        does other work; :meth:`wait_ready` then waits (and stops the server if it never gets ready).
        """
        if not self.repo.is_dir():
            raise UserError(f"{self.repo}: model repository not found")
        self._paths = _pytriton_paths()
        _sweep_stale()
        self._picked = [name for name in PORT_NAMES if getattr(self, name) is None]
        for name in PORT_NAMES:
            port = getattr(self, name)
            if port is not None and _port_busy(port):
                raise UserError(f"port {port} on 127.0.0.1 is in use (--{name.replace('_', '-')})")
        self._launch()
        return self.wait_ready() if wait else self

    def _launch(self) -> None:
        self.launches += 1
        for name in self._picked:
            setattr(self, name, free_ports()[0])
        self._ready_by = time.monotonic() + self.timeout
        self._workdir = Path(tempfile.mkdtemp(prefix=f"specdec-triton-{self.shm_prefix}"))
        try:
            pkg, libs = self._paths
            backends = self._backend_dir(pkg)
            self.log_path = self._workdir / "server.log"
            from specdec_guide.engine.host import HOST_ENV, die_with_parent

            env = self._env(libs)
            env.pop(HOST_ENV, None)  # a server started from inside another one's model gets its own
            host = self._workdir / "engine.sock" if self.engine_host and serves_cpu_engine(self.repo) else None
            if host is not None and len(os.fsencode(host)) > MAX_SOCKET_PATH:
                host = None  # a long TMPDIR: each stub builds its engine itself, as without a host
            if host is not None:
                env[HOST_ENV] = str(host)
            with open(self.log_path, "wb") as log:
                # Own session: Ctrl-C in a terminal reaches only us, and we stop the server in order.
                # SIGTERM when this thread ends, even killed: else a killed launcher would leave the
                # server, its stubs and their /dev/shm behind.
                self.proc = subprocess.Popen(
                    self._command(pkg, backends), env=env, stdout=log, stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL, start_new_session=True,
                    preexec_fn=functools.partial(die_with_parent, signal.SIGTERM, os.getpid()),
                )
                if host is not None:
                    # A session of its own too (its engines share its group); it dies with this thread
                    # as the server does, and stop() kills its group once the server is gone.
                    self.host_proc = subprocess.Popen(
                        [sys.executable, "-m", "specdec_guide.engine.host", str(host), str(self.proc.pid),
                         str(os.getpid())],
                        env={**env, "OPENBLAS_NUM_THREADS": "1"},  # no thread in a process that forks
                        stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
                    )
        except BaseException:
            self.stop()
            raise

    def wait_ready(self) -> "TritonServer":
        """Block until the launched server is ready (``timeout`` counts from its launch).

        Launched again, once each: when a port we picked was taken before tritonserver bound it
        (other servers start concurrently), and when the load stalled (:data:`STALL_S`): the Python
        backend of the bundled tritonserver waits without a timeout for a model stub's first answer,
        and on a busy machine a stub can miss the message (seen once in the test suite with 16
        models loading at once; upstream added a timeout in python_backend PR #408, after 2.51).
        """
        if self.proc is None:
            raise UserError(f"{self.repo}: tritonserver was not launched (start(wait=False) first) or was stopped")
        retried = set()
        for attempt in range(3):
            try:
                self._wait_ready()
                return self
            except UserError as err:
                self.stop()
                why = "port" if "already in use" in str(err) else "stall" if "stalled" in str(err) else None
                if why is None or why in retried or (why == "port" and not self._picked):
                    raise
                retried.add(why)  # silently: ``launches`` counts the starts
                self._launch()
            except BaseException:
                self.stop()
                raise
        raise AssertionError("unreachable")

    def log(self) -> str:
        """The server's whole log so far (still available after stop())."""
        if self._workdir is not None and self.log_path:
            with contextlib.suppress(OSError):  # removed meanwhile by stop() in another thread
                return self.log_path.read_text(errors="replace")
        return self._final_log

    def log_tail(self, lines: int = LOG_TAIL_LINES) -> str:
        """The last log lines, without the option/model tables and the CPU-only noise."""
        text = [t for t in self.log().splitlines() if t.strip() and t[0] not in "+|" and not any(n in t for n in _NOISE)]
        return "\n".join(text[-lines:])

    def _failure(self, what: str) -> UserError:
        reasons = diagnose(self.log())
        head = f"{what}: {'; '.join(reasons)}" if reasons else what
        return UserError(f"{head}\nlog tail:\n{self.log_tail()}", exit_code=1)

    def exit_reason(self) -> str | None:
        """Why the launched server cannot answer any more (tritonserver, or its engine host, exited);
        None while both run."""
        proc = self.proc
        if proc is None:
            return "tritonserver was stopped"
        rc = proc.poll()
        if rc is not None:
            return f"tritonserver exited with status {rc}"
        if self.host_proc is not None and (rc := self.host_proc.poll()) is not None:
            return f"the engine host of its CPU-engine models exited with status {rc}"
        return None

    def answers_ready(self, timeout: float = 2) -> bool:
        """Whether the launched server answers ``/v2/health/ready`` with 200 now (no waiting)."""
        try:
            with urllib.request.urlopen(f"{self.http_url}/v2/health/ready", timeout=timeout) as r:
                return r.status == 200
        except (urllib.error.URLError, ConnectionError, OSError):
            return False

    def _wait_ready(self) -> None:
        deadline = self._ready_by
        last_progress, progressed_at, progress_checked_at = None, time.monotonic(), float("-inf")
        while True:
            why = self.exit_reason()
            if why is not None:
                raise self._failure(f"{why} before it was ready")
            if "Failed to preinitialize Python stub" in self.log():
                # Triton keeps waiting for a stub that will never come (e.g. no model.py): fail now.
                raise self._failure("a Python model could not start")
            if self.answers_ready():
                return
            if time.monotonic() > deadline:
                raise self._failure(f"tritonserver not ready after {self.timeout:g}s")
            # Progress: a new log line, or a CPU second used (loaded stubs idle at a few ticks a minute).
            # Looked at once a second, not at every poll: counting the ticks reads every /proc entry.
            if time.monotonic() >= progress_checked_at + 1:
                progress_checked_at = time.monotonic()
                log_len, ticks = len(self.log()), group_cpu_ticks(self.proc.pid)
                if self.host_proc is not None:  # the engines load in the host's group
                    ticks += group_cpu_ticks(self.host_proc.pid)
                if last_progress is None or log_len != last_progress[0] or ticks - last_progress[1] >= TICKS_PER_S:
                    last_progress, progressed_at = (log_len, ticks), time.monotonic()
                elif time.monotonic() - progressed_at > self.stall_s:
                    loading = _still_loading(self.log())
                    raise self._failure(f"tritonserver stalled: nothing happened for {self.stall_s:g}s while "
                                        f"loading {', '.join(loading) or 'its models'}")
            time.sleep(0.2)

    def stop(self, grace_s: float = STOP_GRACE_S) -> None:
        """SIGTERM the server (its whole process group: stubs included), SIGKILL after ``grace_s``;
        then kill its engine host's group (the host and its engines).

        ``grace_s=0`` kills at once: for a caller that is done with the server and does not test its
        shutdown (each model's stub takes about a CPU second to shut down in order).
        """
        with self._stop_lock:  # the session's watcher thread may stop it too
            proc, self.proc = self.proc, None
            if proc is not None and proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGTERM if grace_s > 0 else signal.SIGKILL)
                try:
                    proc.wait(grace_s if grace_s > 0 else None)
                except subprocess.TimeoutExpired:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
            if proc is not None:
                # Stubs that outlived the server (SIGKILL path) would keep /dev/shm mapped.
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)
            # The engine host, in a group of its own, outlives the server's SIGTERM, so that the
            # requests in flight are answered; it ends here.
            host, self.host_proc = self.host_proc, None
            if host is not None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(host.pid, signal.SIGKILL)  # the host and the engines it forked
                host.wait()
            for f in Path("/dev/shm").glob(f"{self.shm_prefix}*"):
                with contextlib.suppress(OSError):
                    f.unlink()
            if self._workdir is not None:
                # Keep the log readable after stop (tests and error messages use it), then drop the dir.
                self._final_log = self.log()
                shutil.rmtree(self._workdir, ignore_errors=True)
                self._workdir = None

    def shm_files(self) -> list[Path]:
        return sorted(Path("/dev/shm").glob(f"{self.shm_prefix}*"))

    def __enter__(self) -> "TritonServer":
        return self.start() if self.proc is None else self

    def __exit__(self, *exc) -> None:
        self.stop()


@contextlib.contextmanager
def serve(repo: str | os.PathLike, **kwargs):
    """``with serve(repo) as server: server.http_url`` — free ports, always stopped."""
    server = TritonServer(repo, **kwargs)
    try:
        yield server.start()
    finally:
        server.stop()


def env_port(name: str) -> int:
    """The port the pages use for ``name`` (http_port, ...): its variable, else Triton's default."""
    var, default = PORT_ENV[name]
    raw = os.environ.get(var, "").strip()
    if not raw:
        return default
    if not raw.isdigit() or not 0 < int(raw) < 65536:
        raise UserError(f"${var}={raw!r} is not a port number (1-65535)")
    return int(raw)


def _up(args) -> int:
    ports = {name: getattr(args, name) if getattr(args, name) is not None else env_port(name) for name in PORT_NAMES}
    server = TritonServer(args.repo, timeout=args.timeout, log_verbose=args.log_verbose,
                          auto_complete=True if args.auto_complete_config else None, **ports)
    stopping = False
    asked: list[int] = []  # the signals that asked the serving loop to end

    def on_signal(signum, frame):  # SIGTERM behaves like Ctrl-C: leave the wait loop, clean up
        raise KeyboardInterrupt

    def ask_to_stop(signum, frame):
        asked.append(signum)

    previous = signal.signal(signal.SIGTERM, on_signal)
    prev_int = signal.getsignal(signal.SIGINT)
    t0 = time.monotonic()
    try:
        server.start()
        # While serving, a signal only sets a flag that the loop reads: an exception raised at any
        # point can land inside Popen.poll() between its lock's acquire and its try, leaving the
        # lock taken, and stop()'s wait on the server then never returns (seen under load).
        signal.signal(signal.SIGINT, ask_to_stop)
        signal.signal(signal.SIGTERM, ask_to_stop)
        print(f"tritonserver ready in {time.monotonic() - t0:.1f}s (repository {server.repo})")
        print(f"  HTTP     {server.http_url}")
        print(f"  gRPC     {server.grpc_address}")
        print(f"  metrics  {server.metrics_url}")
        print(f"  log      {server.log_path} (removed on stop)")
        print("  config   " + ("auto-complete on: model.yaml's triton_config sets the policy" if server.auto_complete
                             else "auto-complete off, as the container's launcher: config.pbtxt sets the policy"))
        print("Ctrl-C stops it.", flush=True)
        while not asked:
            why = server.exit_reason()
            if why is not None:
                raise server._failure(why)
            time.sleep(0.5)
        stopping = True
        return 0
    except KeyboardInterrupt:  # while starting
        stopping = True
        return 0
    finally:
        if stopping:
            print("stopping tritonserver ...", file=sys.stderr)
        # A second Ctrl-C or SIGTERM must not cut the cleanup short (stop() escalates by itself).
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        try:
            server.stop()
        finally:
            signal.signal(signal.SIGINT, prev_int)
            signal.signal(signal.SIGTERM, previous)


def register(subparsers) -> None:
    triton = subparsers.add_parser("triton", help="run the bundled tritonserver on a model repository (CPU)")
    sub = triton.add_subparsers(dest="triton_command", metavar="SUBCOMMAND", required=True)
    up = sub.add_parser("up", help="start tritonserver on 127.0.0.1, wait until ready, stop on Ctrl-C")
    up.add_argument("--repo", required=True, help="model repository (e.g. from `specdec-guide repo render`)")
    # The tutorials' ports by default; the same variables as the pages' curl/client snippets move them.
    for name, (var, default) in PORT_ENV.items():
        flag = "--" + name.replace("_", "-")
        up.add_argument(flag, type=int, default=None, help=f"default ${var}, else {default}")
    up.add_argument("--timeout", type=float, default=120.0, help="seconds to wait for /v2/health/ready")
    up.add_argument("--log-verbose", type=int, default=0)
    up.add_argument("--auto-complete-config", action="store_true",
                    help="let Triton call the model's auto_complete_config (model.yaml's triton_config sets the "
                    "policy); by default it is disabled, as the container's launch_triton_server.py does")
    up.set_defaults(func=_up)
