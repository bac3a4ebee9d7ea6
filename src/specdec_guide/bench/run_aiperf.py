"""Run AIPerf from the guide's main environment: find it, write its prompt file, run the snippet.

AIPerf lives in its own virtual environment (``.venv-aiperf``, made by ``make aiperf``): it pulls
about 140 packages (1.2 GB) that the rest of the guide does not need, and pins some of them
differently. Notebooks and tests call it as a program, exactly as the page's command
(``snippets/bench/aiperf_profile.sh``) does, with that environment's ``bin`` first on PATH.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

from specdec_guide.diagnostics import UserError

AIPERF_VERSION = "0.13.0"
VENV_NAME = ".venv-aiperf"
ENV_VAR = "SPECDEC_AIPERF_VENV"  # another AIPerf venv (with this package installed in it)
SNIPPET = Path("snippets") / "bench" / "aiperf_profile.sh"
STOP_GRACE_S = 15.0


def _root() -> Path:
    from specdec_guide.validate.kinds import find_repo_root

    return find_repo_root(Path(__file__).resolve().parent)


def aiperf_bin(root: Path | None = None) -> Path:
    """The ``bin`` folder of the AIPerf environment, or a UserError that says how to make it."""
    venv = Path(os.environ.get(ENV_VAR) or (root or _root()) / VENV_NAME)
    exe = venv / "bin" / "aiperf"
    if not exe.is_file():
        raise UserError(f"AIPerf is not installed at {venv}: run `make aiperf` (AIPerf {AIPERF_VERSION} "
                        f"in its own venv, with this guide's endpoint plugin), or set {ENV_VAR}")
    return exe.parent


def write_prompts(path: str | Path, texts: list[str], output_tokens: int) -> Path:
    """AIPerf's ``single_turn`` input file: one ``{"text", "output_length"}`` object per line."""
    path = Path(path)
    path.write_text("".join(json.dumps({"text": t, "output_length": output_tokens}) + "\n" for t in texts))
    return path


def profile(*, triton_http: str, model: str, tokenizer: str | Path, prompts: str | Path, out: str | Path,
            concurrency: tuple[int, ...] = (1, 2, 4), requests: int = 8, timeout: float = 900,
            root: Path | None = None) -> subprocess.CompletedProcess:
    """Run ``snippets/bench/aiperf_profile.sh`` (the page's command) with these settings."""
    root = root or _root()
    bindir = aiperf_bin(root)
    env = dict(os.environ, PATH=f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}", TRITON_HTTP=triton_http,
               MODEL=model, TOKENIZER=str(tokenizer), PROMPTS=str(prompts), OUT=str(out),
               CONCURRENCY=",".join(str(c) for c in concurrency), REQUESTS=str(requests))
    env.pop("HF_HUB_OFFLINE", None)  # with it set, AIPerf refuses a local tokenizer path
    # AIPerf 0.13.0 leaves a folder aiperf_mmap_<id> in the temp dir per concurrency level (its
    # dataset's memory map): give it a temp dir of its own, removed afterwards.
    scratch = tempfile.mkdtemp(prefix="specdec-aiperf-")
    env["TMPDIR"] = scratch
    # Own process group: AIPerf runs several processes, and a timeout must stop all of them.
    proc = subprocess.Popen(["bash", "-e", str(root / SNIPPET)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        return _finish(proc, timeout, out)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _finish(proc: subprocess.Popen, timeout: float, out) -> subprocess.CompletedProcess:
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except BaseException as err:  # a timeout, or a Ctrl-C / kernel interrupt in a notebook
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.communicate(timeout=STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
        if isinstance(err, subprocess.TimeoutExpired):
            raise UserError(f"aiperf profile did not finish within {timeout:g}s (results so far in {out})") from None
        raise
    if proc.returncode != 0:
        tail = "\n".join((stdout + stderr).strip().splitlines()[-15:])
        raise UserError(f"aiperf profile failed with status {proc.returncode}:\n{tail}", exit_code=1)
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)
