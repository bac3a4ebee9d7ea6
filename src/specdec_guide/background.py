"""Servers that a GPU notebook starts in the background from a shell cell, and talks to.

A GPU notebook starts ``trtllm-serve`` with ``nohup ... &`` and ``echo $! > serve.pid`` (so
the command line stays in a shell cell, where the checker compares its flags with the
release), or Triton with the container's ``launch_triton_server.py``, which returns at once.
These helpers are what the Python cells around them need: wait until an endpoint answers,
with a deadline and a clear error when the server died; stop a process named in a pid file;
post JSON. Only the standard library: the GPU container's Python runs them.
"""

from __future__ import annotations

import json
import os
import signal
import time
import urllib.error
import urllib.request
from pathlib import Path

from specdec_guide.diagnostics import UserError


def _pid(pid_file: str | os.PathLike) -> int:
    text = Path(pid_file).read_text().strip()
    if not text.isdigit():
        raise UserError(f"{pid_file}: expected a process id, got {text!r}")
    return int(text)


def alive(pid_file: str | os.PathLike) -> bool:
    """Whether the process named in ``pid_file`` still runs (a missing file counts as not)."""
    try:
        pid = _pid(pid_file)
    except (OSError, UserError):
        return False
    return running(pid)


def running(pid: int) -> bool:
    """Whether process ``pid`` still runs (a zombie does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A child that exited but was not reaped yet (the notebook kernel is not its parent, but a
    # test may be) is a zombie: it does not serve anything any more.
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def wait_ready(url: str, timeout_s: float = 900, pid_file: str | os.PathLike | None = None,
               interval_s: float = 2.0) -> None:
    """Poll ``url`` until it answers HTTP 200.

    Raises UserError when ``timeout_s`` passes, or at once when the process named in
    ``pid_file`` has exited (its log is the file next to the pid file with the suffix ``.log``).
    The default deadline allows for a model download on first use.
    """
    deadline = time.monotonic() + timeout_s
    while True:
        if pid_file is not None and not alive(pid_file):
            log = Path(pid_file).with_suffix(".log")
            raise UserError(f"the server exited before {url} was ready (see {log})")
        try:
            with urllib.request.urlopen(url, timeout=5) as reply:
                if reply.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        if time.monotonic() >= deadline:
            raise UserError(f"{url} was not ready after {timeout_s:g} s")
        time.sleep(interval_s)


def stop(pid_file: str | os.PathLike, timeout_s: float = 60) -> None:
    """SIGTERM the process named in ``pid_file``, wait until it is gone, SIGKILL after ``timeout_s``."""
    pid = _pid(pid_file)
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + timeout_s
    while alive(pid_file):
        if time.monotonic() >= deadline:
            os.kill(pid, signal.SIGKILL)
            return
        time.sleep(0.2)


def post_json(url: str, body: dict, timeout_s: float = 300) -> dict:
    """POST ``body`` as JSON and return the decoded answer; an HTTP error carries the server's message."""
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as reply:
            return json.loads(reply.read())
    except urllib.error.HTTPError as err:
        message = " ".join(err.read().decode(errors="replace").split())  # one line, whatever the server sent
        raise UserError(f"POST {url}: HTTP {err.code}: {message}") from None
