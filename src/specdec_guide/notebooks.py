"""The guide's notebooks: find them, read their tier, keep the jupytext pairs in sync, and
execute the CPU ones with a provenance stamp.

The percent-format ``.py`` is the source; the ``.ipynb`` beside it carries the outputs the
site renders. Those outputs must come from a real run of the current source, so
:func:`execute` writes a stamp into the notebook's metadata (``specdec_guide.last_run``) with
the date, the machine and the package versions, and a hash of the code it ran. The tests
compare that hash with the source: an edited cell without a fresh run fails the build.

``make regen WHAT=notebooks`` (:mod:`specdec_guide.regen`) syncs the pairs and runs the CPU ones;
``python -m specdec_guide.notebooks`` checks that every pair is in sync and every CPU run fresh.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import hashlib
import platform
import sys
import time
from dataclasses import dataclass
from importlib import metadata as _metadata
from pathlib import Path

from specdec_guide.diagnostics import UserError

TIERS = ("cpu", "gpu")
#: Packages whose versions go into a run's stamp.
STAMPED_PACKAGES = ("specdec-guide", "torch", "transformers", "nvidia-pytriton", "tensorrt_llm")
CELL_TIMEOUT_S = 300
#: An engine build or a model download in a GPU notebook cell takes longer.
GPU_CELL_TIMEOUT_S = 1800


def repo_root(start: Path | None = None) -> Path:
    from specdec_guide.validate.kinds import find_repo_root

    root = find_repo_root(start)
    if not (root / "notebooks").is_dir():
        raise UserError(f"{root}: not inside the guide's repository (no notebooks/ beside mkdocs.yml)")
    return root


@dataclass(frozen=True)
class NotebookInfo:
    source: Path  # the percent-format .py
    paired: Path  # the .ipynb
    tier: str  # "cpu" or "gpu"
    meta: dict  # the notebook's `specdec_guide` metadata block


def track_meta(meta: dict, where: str = "notebook") -> dict:
    """The block with ``container`` and ``trtllm_version`` filled in from the track it names.

    A GPU notebook's header names only its ``track`` (an id or alias of ``schemas/tracks.yaml``);
    the container and the TensorRT-LLM version are the registry's, never a second copy.
    """
    name = meta.get("track")
    if not name:
        return dict(meta)
    from specdec_guide.releases.tracks import Registry

    registry = Registry(Path(__file__).resolve().parent / "schemas")
    track = registry.find(str(name))
    if track is None:
        raise UserError(f"{where}:1:1: unknown track {name!r} in specdec_guide.track "
                        f"(known: {', '.join(registry.names())})")
    out = dict(meta)
    out.setdefault("container", track.container)
    out.setdefault("trtllm_version", track.trtllm_version)
    return out


def read_meta(source: Path) -> dict:
    """The ``specdec_guide`` block of a notebook source's jupytext header ({} when absent), with the
    container and TensorRT-LLM version of its track (:func:`track_meta`)."""
    import jupytext

    # Only the header is parsed: the cells come after the first cell marker, and parsing them
    # costs every process that lists the notebooks (each test worker, at collection) a second.
    header = source.read_text(encoding="utf-8").split("\n# %%", 1)[0] + "\n"
    meta = jupytext.reads(header, fmt="py:percent").metadata.get("specdec_guide")
    return track_meta(dict(meta), str(source)) if isinstance(meta, dict) else {}


def list_notebooks(root: Path | None = None) -> list[NotebookInfo]:
    """Every notebook source under notebooks/, with its declared tier.

    A missing or unknown tier is an error: each notebook must say what it needs to run.
    """
    root = root or repo_root()
    found = []
    for src in sorted((root / "notebooks").glob("*.py")):
        meta = read_meta(src)
        tier = meta.get("tier")
        if tier not in TIERS:
            raise UserError(f"{src}:1:1: notebook metadata must declare specdec_guide.tier: cpu or gpu (got {tier!r})")
        if tier == "gpu":
            missing = [k for k in ("container", "trtllm_version") if not meta.get(k)]
            if missing:
                raise UserError(f"{src}:1:1: a gpu notebook must declare specdec_guide.track (a track of "
                                f"tracks.yaml, which gives its {', '.join(missing)})")
        found.append(NotebookInfo(src, src.with_suffix(".ipynb"), tier, meta))
    return found


def code_hash(nb) -> str:
    """Hash of the code cells' sources: what a run's outputs depend on."""
    digest = hashlib.sha256()
    for cell in nb.cells:
        if cell.cell_type == "code":
            digest.update(cell.source.strip().encode() + b"\0")
    return digest.hexdigest()


def out_of_sync(info: NotebookInfo) -> str | None:
    """Why the .py and .ipynb of a pair differ, or None when they agree cell for cell."""
    import jupytext

    if not info.paired.is_file():
        return f"{info.paired} is missing (regenerate: make regen WHAT=notebooks:{info.source.stem})"
    py_nb = jupytext.read(info.source)
    ipynb = jupytext.read(info.paired)
    py_cells = [(c.cell_type, c.source.strip()) for c in py_nb.cells]
    nb_cells = [(c.cell_type, c.source.strip()) for c in ipynb.cells]
    fix = f"(regenerate: make regen WHAT=notebooks:{info.source.stem})"
    if len(py_cells) != len(nb_cells):
        return f"{info.source} has {len(py_cells)} cells, {info.paired.name} has {len(nb_cells)} {fix}"
    for i, (a, b) in enumerate(zip(py_cells, nb_cells), start=1):
        if a != b:
            return f"{info.source}: cell {i} differs from {info.paired.name} {fix}"
    if (py_nb.metadata.get("specdec_guide") or {}) != {
        k: v for k, v in (ipynb.metadata.get("specdec_guide") or {}).items() if k != "last_run"
    }:
        return f"{info.source}: specdec_guide metadata differs from {info.paired.name} {fix}"
    return None


def stale_outputs(info: NotebookInfo) -> str | None:
    """Why the stored outputs of a CPU notebook do not come from a run of its current source."""
    import nbformat

    nb = nbformat.read(info.paired, as_version=4)
    stamp = (nb.metadata.get("specdec_guide") or {}).get("last_run")
    if not stamp:
        return f"{info.paired}: no specdec_guide.last_run stamp ({_rerun(info)})"
    if stamp.get("code_sha256") != code_hash(nb):
        return f"{info.paired}: code changed since the stored run of {stamp.get('date')} ({_rerun(info)})"
    for i, cell in enumerate(nb.cells, start=1):
        if cell.cell_type == "code" and cell.source.strip() and cell.get("execution_count") is None:
            return f"{info.paired}: code cell {i} has no execution count: it did not run"
        for out in cell.get("outputs", []) if cell.cell_type == "code" else []:
            if out.get("output_type") == "error":
                return f"{info.paired}: code cell {i} stored an error"
    return None


def _rerun(info: NotebookInfo) -> str:
    if info.tier == "gpu":
        return "run `make test-gpu` in its container"
    return f"regenerate: make regen WHAT=notebooks:{info.source.stem}"


def sync(info: NotebookInfo) -> None:
    """Write the .ipynb from the .py, keeping the outputs of cells whose source is unchanged."""
    import jupytext

    nb = jupytext.read(info.source)
    if info.paired.is_file():
        old = jupytext.read(info.paired)
        nb = jupytext.combine.combine_inputs_with_outputs(nb, old)
        if "last_run" in (old.metadata.get("specdec_guide") or {}):
            nb.metadata.setdefault("specdec_guide", {})["last_run"] = old.metadata["specdec_guide"]["last_run"]
    jupytext.write(nb, info.paired, fmt="ipynb")


def _versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for name in STAMPED_PACKAGES:
        try:
            out[name] = _metadata.version(name)
        except _metadata.PackageNotFoundError:
            pass
    return out


#: Set by the GPU workflow to the image it runs in; a stamp never guesses the container.
CONTAINER_ENV = "SPECDEC_GUIDE_CONTAINER_IMAGE"


def _gpu_provenance() -> dict[str, str]:
    """GPU model, driver and container image for a GPU run's stamp."""
    import os

    from specdec_guide.gpu_tier import gpu_name_and_driver

    gpu, driver = gpu_name_and_driver()
    return {"gpu": gpu, "driver": driver, "container": os.environ.get(CONTAINER_ENV, f"unknown ({CONTAINER_ENV} not set)")}


def execute(info: NotebookInfo, timeout: int = CELL_TIMEOUT_S) -> float:
    """Run a notebook top to bottom in a fresh kernel, store outputs and the provenance stamp."""
    import jupytext
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError

    sync(info)
    nb = jupytext.read(info.paired)
    # A notebook that needs longer cells says so in `execution.timeout`, which nbmake reads too.
    timeout = int((nb.metadata.get("execution") or {}).get("timeout", timeout))
    start = time.monotonic()
    try:
        NotebookClient(nb, timeout=timeout, kernel_name="python3",
                       resources={"metadata": {"path": str(info.source.parent)}}).execute()
    except (CellExecutionError, CellTimeoutError) as err:
        # The stored .ipynb keeps its last good outputs; nothing half-run is written.
        failed = next((i for i, c in enumerate(nb.cells, start=1) if c.cell_type == "code" and any(
            o.get("output_type") == "error" for o in c.get("outputs", []))), None)
        where = f"cell {failed}" if failed else "a cell"
        summary = str(err).strip().splitlines()[-1] if str(err).strip() else type(err).__name__
        raise UserError(f"{info.source}: {where} failed: {summary}", exit_code=1) from None
    took = round(time.monotonic() - start, 1)
    meta = nb.metadata.setdefault("specdec_guide", {})
    meta["last_run"] = {
        "date": _dt.date.today().isoformat(),
        "where": f"{platform.system()} {platform.machine()}, CPU only" if info.tier == "cpu" else platform.node(),
        **(_gpu_provenance() if info.tier == "gpu" else {}),
        "versions": _versions(),
        "duration_s": took,
        "code_sha256": code_hash(nb),
    }
    nbformat.write(nb, info.paired)
    return took


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m specdec_guide.notebooks",
        description="check that every jupytext pair is in sync and every CPU notebook's stored run is fresh "
                    "(make regen WHAT=notebooks refreshes them)")
    parser.add_argument("names", nargs="*", help="only these notebooks (file names or stems)")
    args = parser.parse_args(argv)
    try:
        infos = [i for i in list_notebooks()
                 if not args.names or i.source.name in args.names or i.source.stem in args.names]
        problems = []
        for info in infos:
            problems += [p for p in (out_of_sync(info), info.tier == "cpu" and stale_outputs(info)) if p]
        for p in problems:
            print(p, file=sys.stderr)
        return 1 if problems else 0
    except UserError as err:
        print(err, file=sys.stderr)
        return err.exit_code


if __name__ == "__main__":
    raise SystemExit(main())
