"""The one way to regenerate what the repository stores from a run: ``make regen [WHAT=...]``.

    python -m specdec_guide.regen                 # list what it can regenerate
    python -m specdec_guide.regen all             # everything in TARGETS marked for `all`
    python -m specdec_guide.regen walks notebooks:04_ngram walks:speculative_decoding/estimate.md

Each target (:data:`TARGETS`) says what it writes. ``NAME:ITEM`` narrows a target to one item (a
notebook's stem, a walked page, a benchmark). The tests that compare a stored output with a fresh
run name the command that refreshes it (:func:`hint`). Review the diff before committing it.

Not here, because they are different kinds of thing: the release snapshots under
``schemas/<track>/`` (``scripts/regen_schema.py`` and ``scripts/regen_cli_schema.py`` read a
release's container or its saved documentation pages), and the GPU notebooks' outputs (``make
test-gpu``, inside the container each notebook names).

Outputs that a test produces against the CPU stand-in (``test-outputs``) are written by those tests:
this module runs them with :data:`REGEN_ENV` naming the target, and only then do they write instead
of compare (``tests/stored_output.py``). Nothing else sets that variable.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from specdec_guide.diagnostics import UserError

#: Set by this module, for the tests it runs, to the targets being regenerated (comma-separated).
REGEN_ENV = "SPECDEC_REGEN"
#: The test files whose stored outputs `test-outputs` regenerates (tests/test_regen.py keeps this
#: list equal to the files that call tests/stored_output.check).
OUTPUT_TESTS = ("tests/test_troubleshooting.py", "tests/test_acceptance_check.py", "tests/test_quickstart.py")
#: Benchmarks whose stored run (benchmarks/results/NAME.json) renders the box a page includes (NAME.md).
BENCHMARK_TABLES = ("real_model", "served_ngram", "verify_cost")
#: Benchmarks that measure on this machine's CPU (verify_cost needs a CUDA GPU: run it there).
CPU_BENCHMARKS = ("real_model", "served_ngram", "draft_choice")


def repo_root() -> Path:
    root = Path(__file__).resolve().parents[2]
    if not (root / "mkdocs.yml").is_file():
        raise UserError(f"{root}: not the guide's repository (regen works on a checkout, not an installed package)")
    return root


def hint(target: str, item: str | None = None) -> str:
    """The command that regenerates ``target`` (narrowed to ``item``), as a failing test says it."""
    if target not in TARGETS:
        raise KeyError(f"no regen target '{target}' (known: {', '.join(TARGETS)})")
    return f"make regen WHAT={target}" + (f":{item}" if item else "")


def regenerating(target: str) -> bool:
    """True in a test run started by ``regen TARGET`` (the test stores its fresh output)."""
    return target in os.environ.get(REGEN_ENV, "").split(",")


# -- the targets -----------------------------------------------------------------------------------
def _notebooks(root: Path, items: list[str]) -> list[str]:
    from specdec_guide import notebooks

    chosen = [i for i in notebooks.list_notebooks(root)
              if not items or i.source.name in items or i.source.stem in items]
    wrote = []
    for info in chosen:
        if info.tier == "cpu":
            took = notebooks.execute(info)
            print(f"ran {info.paired.name} in {took:.1f} s", file=sys.stderr)
        else:
            notebooks.sync(info)
            print(f"synced {info.paired.name} (a GPU notebook: its outputs come from `make test-gpu`)", file=sys.stderr)
        wrote.append(info.paired.relative_to(root).as_posix())
    return wrote


def _walks(root: Path, items: list[str]) -> list[str]:
    from specdec_guide import pagewalk

    wrote = []
    for page in items or pagewalk.WALKED_PAGES:
        wrote += [p.relative_to(root).as_posix() for p in pagewalk.write_outputs(page, root)]
    return wrote


def _test_outputs(root: Path, items: list[str]) -> list[str]:
    env = dict(os.environ, **{REGEN_ENV: "test-outputs"})
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *(items or OUTPUT_TESTS)]
    print("running " + " ".join(cmd[2:]), file=sys.stderr)
    if subprocess.run(cmd, cwd=root, env=env).returncode != 0:
        raise UserError("test-outputs: a test failed while storing its output (see above); "
                        "what it stored before failing is in the working tree", exit_code=1)
    return ["the outputs those tests store (git status shows which changed)"]


def _container_map(root: Path, items: list[str]) -> list[str]:
    from specdec_guide.releases import containers

    (root / containers.SNIPPET).write_text(containers.markdown(), encoding="utf-8")
    return [containers.SNIPPET.as_posix()]


def _track_snippets(root: Path, items: list[str]) -> list[str]:
    from specdec_guide.site import track_snippets

    return track_snippets.write(root)


def _benchmark(root: Path, name: str):
    path = root / "benchmarks" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"benchmarks_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _benchmark_tables(root: Path, items: list[str]) -> list[str]:
    wrote = []
    for name in items or BENCHMARK_TABLES:
        results = root / "benchmarks" / "results"
        stored = json.loads((results / f"{name}.json").read_text(encoding="utf-8"))
        (results / f"{name}.md").write_text(_benchmark(root, name).table(stored), encoding="utf-8")
        wrote.append(f"benchmarks/results/{name}.md")
    return wrote


def _benchmarks(root: Path, items: list[str]) -> list[str]:
    wrote = []
    for name in items or CPU_BENCHMARKS:
        if subprocess.run([sys.executable, str(root / "benchmarks" / f"{name}.py")], cwd=root).returncode != 0:
            raise UserError(f"benchmarks: benchmarks/{name}.py failed (see above)", exit_code=1)
        wrote += [f"benchmarks/results/{name}.json", f"benchmarks/results/{name}.md"]
    return wrote


def _notebook_names(root: Path) -> list[str]:
    from specdec_guide import notebooks

    return [i.source.stem for i in notebooks.list_notebooks(root)]


def _walked_pages(root: Path) -> list[str]:
    from specdec_guide import pagewalk

    return list(pagewalk.WALKED_PAGES)


@dataclass(frozen=True)
class Target:
    name: str
    writes: str  # what it stores, for the listing
    run: Callable[[Path, list[str]], list[str]]
    items: Callable[[Path], list[str]] | None = None  # what TARGET:ITEM may name (None: no items)
    in_all: bool = True  # part of `regen all` (a new measurement is not)


#: In the order `all` runs them: generated snippets first, since pages, walks and notebooks show them.
TARGETS: dict[str, Target] = {t.name: t for t in (
    Target("container-map", "snippets/versions/container_map.md, from schemas/containers.yaml", _container_map),
    Target("track-snippets", "the per-track snippets written from snippets/PER_TRACK.yaml", _track_snippets),
    Target("benchmark-tables", "benchmarks/results/*.md, the boxes the pages include, from the stored runs' JSON "
                               "(ITEM: a benchmark; no new measurement)", _benchmark_tables,
           lambda root: list(BENCHMARK_TABLES)),
    Target("notebooks", "notebooks/*.ipynb: every jupytext pair synced; the CPU notebooks re-run and stamped "
                        "(ITEM: a notebook's stem)", _notebooks, _notebook_names),
    Target("walks", "what the walked pages' commands print (snippets/*/output/*.out) and the files they show, "
                    "from one fresh shell per page (ITEM: a page under docs/)", _walks, _walked_pages),
    Target("test-outputs", "the outputs tests capture against the CPU stand-in: troubleshooting reproductions, "
                           "the acceptance check, the quick start's answer (ITEM: a test file)", _test_outputs,
           lambda root: list(OUTPUT_TESTS)),
    Target("benchmarks", "a new measurement of the CPU benchmarks on this machine (benchmarks/results/*.json "
                         "and .md; minutes, and the figures change; ITEM: a benchmark); not part of `all`",
           _benchmarks, lambda root: list(CPU_BENCHMARKS), in_all=False),
)}


def listing() -> str:
    width = max(map(len, TARGETS))
    lines = ["what `python -m specdec_guide.regen WHAT[:ITEM] ...` (make regen WHAT=...) regenerates:"]
    lines += [f"  {t.name:<{width}}  {t.writes}" for t in TARGETS.values()]
    lines.append(f"  {'all':<{width}}  every target above but `benchmarks`, in that order")
    return "\n".join(lines) + "\n"


def plan(words: list[str], root: Path) -> list[tuple[Target, list[str]]]:
    """``[(target, items)]`` for the words of the command line, in :data:`TARGETS` order; every name
    and item is checked before anything runs."""
    chosen: dict[str, list[str]] = {}
    for word in words:
        name, _, item = word.partition(":")
        if name == "all":
            for t in TARGETS.values():
                if t.in_all:
                    chosen.setdefault(t.name, [])
            continue
        if name not in TARGETS:
            raise UserError(f"unknown regen target '{name}' (known: {', '.join(TARGETS)}, all)")
        items = chosen.setdefault(name, [])
        if item:
            known = TARGETS[name].items(root) if TARGETS[name].items else []
            if item not in known:
                raise UserError(f"{name}: no item '{item}' " + (f"(known: {', '.join(known)})" if known
                                                               else "(this target takes none)"))
            if item not in items:
                items.append(item)
    return [(TARGETS[n], chosen[n]) for n in TARGETS if n in chosen]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m specdec_guide.regen", description=__doc__.split("\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=listing())
    parser.add_argument("what", nargs="*", help="targets to regenerate (TARGET or TARGET:ITEM; 'all')")
    args = parser.parse_args(argv)
    if not args.what:
        sys.stdout.write(listing())
        return 0
    try:
        root = repo_root()
        steps = plan(args.what, root)
        for target, items in steps:
            print(f"regen {target.name}{': ' + ', '.join(items) if items else ''}", file=sys.stderr)
            for rel in target.run(root, items):
                print(f"  {rel}")
    except UserError as err:
        print(f"regen: {err}", file=sys.stderr)
        return err.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(main())
