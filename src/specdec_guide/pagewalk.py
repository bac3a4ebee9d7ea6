"""Follow a page the way a reader does: its shell snippets, in page order, in one fresh shell.

A *step* is a ``bash`` block on a page that includes a ``snippets/**.sh`` file. The walk writes
one script that ``source``s every step of the page in order (so ``cd``, ``export`` and
``source .venv/bin/activate`` carry over, as in a terminal) under ``set -eo pipefail``, starts it
in a fresh ``bash`` whose environment has no activated venv, in a folder that stands for the
reader's clone, and stops at the first command that fails.

- A block titled ``... keeps running ...`` is a server: it runs in the background (the reader's
  first terminal) until it prints :data:`READY`, and is stopped when the walk ends, in ``finally``.
- A ``text`` block right after a step that includes ``snippets/**.out`` shows what the step
  prints. ``make regen WHAT=walks:PAGE`` (:func:`write_outputs`) stores the walk's output there (with
  what changes from run to run masked: ports, timings, temp names); the test walks the page again
  and fails when the fresh output no longer has the stored shape (:func:`shape`).
- A file a page shows that one of its commands writes (a plot) is listed in :data:`SHOWN_FILES`;
  :func:`write_outputs` copies it from the walk into the repository too.

``python -m specdec_guide.pagewalk [PAGE ...]`` walks pages without storing anything.

The folder that stands for the clone holds a link to every top-level entry of this checkout, and
``.venv`` links to the venv running the walk, so the page's own set-up snippet (``source
.venv/bin/activate``) is what puts ``specdec-guide`` on PATH.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from specdec_guide.diagnostics import UserError

READY = "Ctrl-C stops it."  # what `specdec-guide triton up` prints once the model is ready
BACKGROUND_TITLE = "keeps running"
SERVER_READY_TIMEOUT_S = 300.0
STEP_TIMEOUT_S = 900.0
# Walked pages, and pages whose commands are not steps to follow here (each such command is a
# trtllm-serve command or is executed by a test named in snippets/VERIFIED_BY.yaml); a page with
# shell snippets must be in one.
WALKED_PAGES = ("speculative_decoding/triton_cpu.md", "speculative_decoding/user_provided.md",
                "speculative_decoding/estimate.md", "speculative_decoding/doctor.md",
                "speculative_decoding/calculator.md")
NOT_WALKED = {
    "contributors.md": "its commands scaffold a new track or method and change the repository: "
    "tests/test_add_track.py and tests/test_add_method.py run them in a throw-away copy of it",
    "speculative_decoding/versions.md": "its commands are `trtllm-serve` on a GPU with TensorRT-LLM; "
    "`specdec-guide validate` checks their flags against the release's schema instead",
    "speculative_decoding/reading_the_numbers.md": "its one command is the AIPerf run that the benchmarking "
    "notebook and tests/test_bench.py execute against servers they start (specdec_guide.bench.run_aiperf), "
    "in AIPerf's own venv; the page shows it, not a step to follow",
    "speculative_decoding/migration.md": "its commands are a legacy and an llmapi repository in the GPU "
    "container and two requests to them: the validator checks the repositories (fill_template.py keys, "
    "launcher flags, model.yaml) and tests/test_migration.py checks the requests' keys against the inputs "
    "recorded for each model",
    "speculative_decoding/quickstart.md": "its commands run on a GPU host and inside the Triton container "
    "(`docker run`, launch_triton_server.py): tests/test_quickstart.py checks them against the tracks and "
    "snapshots, and runs the steps on files and the request on the CPU stand-in with the launcher's "
    "--disable-auto-complete-config",
    "index.md": "its one block of commands, 'Run a GPU notebook in the container', is `docker run` with a "
    "GPU and the container's Python: tests/test_quickstart.py reads it (image, mounts, port, the install "
    "line, the notebook it runs)",
    "speculative_decoding/troubleshooting.md": "its entries are separate reproductions, not steps in one "
    "order: tests/test_troubleshooting.py runs each against the validator or a CPU Triton it starts, and "
    "compares what it prints with the output the page shows",
}
# Passed through to the walk's shell: what a reader's login shell has, plus the caches (the real
# model is downloaded once per machine). PYTHONPATH passes so that a checkout run with
# PYTHONPATH=src (no editable install of its own) walks its own sources.
PASS_ENV = ("HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "TERM", "TMPDIR", "XDG_CACHE_HOME", "HF_HOME",
            "PYTHONPATH", "SPECDEC_ENGINE_THREADS", "PIP_INDEX_URL", "PIP_CACHE_DIR")
# Files a page shows that its commands write: (where the walk writes it, relative to the reader's
# clone; where the page takes it from, relative to the repository).
SHOWN_FILES = {
    "speculative_decoding/estimate.md": (("scratch/sweep.png", "docs/speculative_decoding/img/estimate_sweep.png"),),
}
DEFAULT_PORTS = {"TRITON_HTTP_PORT": 8000, "TRITON_GRPC_PORT": 8001, "TRITON_METRICS_PORT": 8002}

_FENCE = re.compile(r"^(\s*)(```+|~~~+)\s*(\w*)(.*)$")
_NUMBER = re.compile(r"-?[\d.]+")
_INCLUDE = re.compile(r'^\s*--8<--\s+"([^"]+)"\s*$')


@dataclass(frozen=True)
class Step:
    snippet: str  # path relative to the repository root
    line: int  # where the page includes it
    background: bool = False
    output: str | None = None  # the .out file the page shows after it


def repo_root() -> Path:
    from specdec_guide.notebooks import repo_root as root

    return root()


def page_steps(page: Path, root: Path) -> list[Step]:
    """The shell steps of ``page`` in order, with their background flag and output file."""
    steps: list[Step] = []
    fence: tuple[str, str, str] | None = None  # (marker, language, rest of the opening line)
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        m = _FENCE.match(line)
        if m and fence is None:
            fence = (m.group(2), m.group(3), m.group(4))
            continue
        if m and fence is not None and m.group(2).startswith(fence[0]) and not m.group(3) + m.group(4).strip():
            fence = None
            continue
        inc = _INCLUDE.match(line)
        if not inc or fence is None:
            continue
        path, (_, language, rest) = inc.group(1), fence
        if language == "bash" and path.endswith(".sh"):
            steps.append(Step(path, number, background=BACKGROUND_TITLE in rest))
        elif language == "text" and path.endswith(".out") and steps and steps[-1].output is None:
            last = steps[-1]
            steps[-1] = Step(last.snippet, last.line, last.background, path)
    for step in steps:
        if not (root / step.snippet).is_file():
            raise UserError(f"{page}:{step.line}: {step.snippet} not found")
    return steps


def _clone_view(root: Path, into: Path) -> Path:
    """A folder that looks like the reader's clone after `make test`: links to the checkout."""
    into.mkdir(parents=True)
    for entry in root.iterdir():
        if entry.name not in (".venv", ".git", "site", "scratch"):
            (into / entry.name).symlink_to(entry)
    venv = root / ".venv" if (root / ".venv/bin/activate").is_file() else Path(sys.prefix)
    if not (venv / "bin/activate").is_file():
        raise UserError(f"no venv with bin/activate at {root / '.venv'} or {sys.prefix}: run `make venv` first")
    (into / ".venv").symlink_to(venv)
    return into


def _env(ports: dict[str, int]) -> dict[str, str]:
    env = {k: os.environ[k] for k in PASS_ENV if k in os.environ}
    venv_bins = {str(Path(sys.prefix) / "bin"), str(Path(sys.executable).parent)}
    path = [p for p in os.environ.get("PATH", "/usr/bin:/bin").split(os.pathsep)
            if p and p not in venv_bins and not Path(p, "specdec-guide").exists()]
    env["PATH"] = os.pathsep.join(path)
    env.update({k: str(v) for k, v in ports.items()})
    return env


def _script(steps: list[Step], root: Path, state: Path) -> str:
    lines = ["set -eo pipefail"]
    for i, step in enumerate(steps):
        out = shlex.quote(str(state / f"{i}.out"))
        snippet = shlex.quote(str(root / step.snippet))
        lines.append(f"echo {i} > {shlex.quote(str(state / 'current'))}")
        if step.background:
            lines.append(f"source {snippet} > {out} 2>&1 &")
            lines.append(
                f"for _ in $(seq {int(SERVER_READY_TIMEOUT_S * 2)}); do grep -qF {shlex.quote(READY)} {out} && break; "
                f"kill -0 $! 2>/dev/null || {{ echo 'the server exited' >&2; exit 1; }}; sleep 0.5; done"
            )
            lines.append(f"grep -qF {shlex.quote(READY)} {out}")
        else:
            lines.append(f"source {snippet} > {out} 2>&1")
    lines.append(f"echo done > {shlex.quote(str(state / 'current'))}")
    return "\n".join(lines) + "\n"


@dataclass
class WalkResult:
    steps: list[Step]
    outputs: list[str]
    seconds: float


def walk(page: str, root: Path | None = None, workdir: Path | None = None) -> WalkResult:
    """Run ``page``'s steps in one fresh bash; raise UserError naming the first step that failed."""
    from specdec_guide.triton import free_ports

    root = root or repo_root()
    steps = page_steps(root / "docs" / page, root)
    if not steps:
        raise UserError(f"docs/{page}: no shell steps to walk")
    with contextlib.ExitStack() as stack:
        if workdir is None:
            workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="specdec-walk-")))
        clone = _clone_view(root, workdir / "clone")
        state = workdir / "state"
        state.mkdir()
        ports = dict(zip(DEFAULT_PORTS, free_ports(len(DEFAULT_PORTS))))
        (state / "walk.sh").write_text(_script(steps, root, state))
        t0 = time.monotonic()
        proc = subprocess.Popen(["bash", "--noprofile", "--norc", str(state / "walk.sh")], cwd=clone, env=_env(ports),
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                start_new_session=True)
        try:
            tail, _ = proc.communicate(timeout=STEP_TIMEOUT_S * len(steps))
        except subprocess.TimeoutExpired:
            tail = "(timed out)"
        finally:
            _stop_tree(proc, state)
        seconds = time.monotonic() - t0
        outputs = [mask((state / f"{i}.out").read_text(errors="replace") if (state / f"{i}.out").exists() else "",
                        ports, clone) for i in range(len(steps))]
        current = (state / "current").read_text().strip() if (state / "current").exists() else "0"
        if proc.returncode != 0 or current != "done":
            i = int(current) if current.isdigit() else 0
            raise UserError(f"docs/{page}:{steps[i].line}: {steps[i].snippet} failed (exit {proc.returncode}):\n"
                            f"{outputs[i][-3000:]}{tail[-2000:]}")
        return WalkResult(steps, outputs, seconds)


def _stop_tree(proc: subprocess.Popen, state: Path) -> None:
    """Stop the walk's shell and every server it left running.

    SIGTERM, not the reader's Ctrl-C: a background command of a non-interactive shell ignores
    SIGINT. `triton up` handles SIGTERM as it handles Ctrl-C (it stops tritonserver in order).
    """
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    # Wait for the background servers' process group members to leave (cleanup runs in `triton up`).
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.2)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)


# -- stored outputs ------------------------------------------------------------------------------
_MASKS = (
    (re.compile(r"ready in \d+(\.\d+)?s"), "ready in …s"),
    (re.compile(r"(\[models fetch\] .*\bin )\d+(\.\d+)? s"), r"\1… s"),
    (re.compile(r"specdec-triton-specdec\d+x[0-9a-f]+_\w*"), "specdec-triton-…"),
    (re.compile(r'("\w+_time_ns":\s*)"\d+"'), r'\1"…"'),
    (re.compile(r"(\w+_time_ns: )\d+"), r"\1…"),
)


def mask(text: str, ports: dict[str, int], clone: Path) -> str:
    """What changes from run to run, replaced: ports back to the defaults, paths, timings."""
    for var, port in ports.items():
        text = re.sub(rf"(?<=[:=]){port}\b", str(DEFAULT_PORTS[var]), text)
    text = text.replace(str(clone), "~/guide").replace(str(clone.resolve()), "~/guide")
    text = text.replace(str(Path.home()) + "/", "~/")
    for pattern, repl in _MASKS:
        text = pattern.sub(repl, text)
    return text


def _line_shape(line: str):
    body = line[len("data: "):] if line.startswith("data: ") else line
    with contextlib.suppress(ValueError):
        doc = json.loads(body)
        if isinstance(doc, dict):
            prefix = "data: " if body is not line else ""
            return prefix + json.dumps({k: type(v).__name__ for k, v in doc.items()}, sort_keys=True)
    m = re.match(r"^(\s*[\w .-]+):\s(.*)$", line)
    if m:  # "key: value" lines: the key, and whether the value is a number
        kind = "number" if _NUMBER.fullmatch(m.group(2).strip()) else "text"
        return f"{m.group(1)}: {kind}"
    return re.sub(r"\d+", "0", line)


def shape(text: str) -> list:
    """The output's form without its values: JSON lines as key -> type, `key: value` lines as key and
    kind of value, other lines with digits masked; repeated lines (stream events) count once."""
    shapes: list = []
    for line in text.splitlines():
        if not line.strip():
            continue
        s = _line_shape(line)
        if not shapes or shapes[-1] != s:
            shapes.append(s)
    return shapes


def write_outputs(page: str, root: Path | None = None) -> list[Path]:
    """Walk ``page`` and store each step's masked output in the .out file the page shows, and the
    files of :data:`SHOWN_FILES` that its commands wrote."""
    root = root or repo_root()
    written = []
    with tempfile.TemporaryDirectory(prefix="specdec-walk-") as tmp:
        result = walk(page, root, Path(tmp))
        for step, output in zip(result.steps, result.outputs):
            if step.output:
                path = root / step.output
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(output if output.endswith("\n") or not output else output + "\n")
                written.append(path)
        for made, shown in SHOWN_FILES.get(page, ()):
            if not (Path(tmp) / "clone" / made).is_file():
                raise UserError(f"docs/{page}: the walk did not write {made} (shown as {shown})")
            (root / shown).write_bytes((Path(tmp) / "clone" / made).read_bytes())
            written.append(root / shown)
    print(f"docs/{page}: {len(result.steps)} steps in {result.seconds:.0f}s, {len(written)} outputs stored", file=sys.stderr)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m specdec_guide.pagewalk",
                                     description="walk the guide's pages in a fresh shell (make regen WHAT=walks "
                                                 "stores what they print)")
    parser.add_argument("pages", nargs="*", help=f"pages under docs/ (default: {', '.join(WALKED_PAGES)})")
    args = parser.parse_args(argv)
    try:
        for page in args.pages or WALKED_PAGES:
            print(f"docs/{page}: walked in {walk(page).seconds:.0f}s")
    except UserError as err:
        print(f"pagewalk: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
