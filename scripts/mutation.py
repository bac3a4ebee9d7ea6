#!/usr/bin/env python3
"""The mutation run (``make mutation``): each core module mutated against its own unit tests only.

    python scripts/mutation.py [MODULE ...] [--retest] [--report-only]

mutmut (``[tool.mutmut]`` in pyproject.toml holds what every module shares) cannot give each
source file its own tests, so this script runs it once per module, each in its own working folder
``.mutation/<module>/`` (links to what mutmut copies, so the runs keep separate results), with the
module's files as ``only_mutate`` and its unit-test files as the test selection. :data:`MODULES`
is that mapping, the one place it is written: a developer who changes a file runs these tests.

Each run starts afresh. ``--retest`` re-runs only the mutants the last run left alive, against the
tests as they are now (the quick loop while writing tests; after a change to ``[tool.mutmut]`` or
to this script mutmut resets its results, so run afresh); mutmut itself never re-tests a surviving
mutant whose function did not change. ``--report-only`` prints the last run's report.

The report gives, per module: killed (a test failed or timed out), survived, no tests, the mutants
recorded as equivalent in tests/mutation_equivalents.yaml (a change no input can tell from the
original, with the reason), and the score, killed / (all - equivalent). It lists every mutant that
is neither killed nor equivalent with its diff, and exits 1 when a module scores under
:data:`TARGET`. An equivalent entry names the mutant and a line of its diff (``change``); an entry
whose mutant is gone or whose diff no longer holds that line is reported as stale and not counted.

The hooks below serve the runs' pytest sessions (``-p mutation``): the tiny models written once per
run, the package's caches dropped before each test, and the fastest tests first.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / ".mutation"
EQUIVALENTS = ROOT / "tests" / "mutation_equivalents.yaml"
TARGET = 0.90

#: module -> (source files mutated, the unit-test files that alone must catch the mutants)
MODULES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "speculation": (("src/specdec_guide/speculation.py",), ("tests/test_speculation.py",)),
    "ngram": (("src/specdec_guide/drafters/ngram.py",), ("tests/test_drafters_ngram.py",)),
    "estimate": (("src/specdec_guide/estimate.py", "src/specdec_guide/payoff.py"),
                 ("tests/test_estimate.py", "tests/test_payoff.py")),
    "validate": (("src/specdec_guide/validate/rules.py", "src/specdec_guide/validate/fields.py",
                  "src/specdec_guide/validate/values.py"),
                 ("tests/test_validate_rules.py", "tests/test_validate_fields.py")),
    "requests": (("src/specdec_guide/engine/requests.py",), ("tests/test_engine_requests.py",)),
}

KILLED = ("killed", "timeout")
#: Set in a mutation run's test sessions (the folder of its tiny models): the hooks below act only there.
RUN_ENV = "SPECDEC_MUTATION_TINY_MODELS"


# -- a pytest plugin for the runs' test sessions (``-p mutation``) --------------------------------
@pytest.hookimpl(tryfirst=True)
def pytest_fixture_setup(fixturedef, request):
    """``tiny_models`` written once per module run instead of once per mutant: each mutant's tests
    run in a fresh session, and writing the deterministic tiny models takes seconds of the few
    that most mutants need. write_tiny_models reuses a folder it wrote itself."""
    folder = os.environ.get(RUN_ENV)
    if fixturedef.argname != "tiny_models" or not folder:
        return None
    from specdec_guide.models.tiny import write_tiny_models

    dirs = write_tiny_models(folder)
    fixturedef.cached_result = (dirs, fixturedef.cache_key(request), None)
    return dirs


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """The package's cached results dropped before each test. mutmut runs, for each mutant, the tests
    it saw call the mutated function; with a cache (payoff.verify_table, methods.load) only the first
    caller calls it, and the mutant would meet one test instead of all that depend on it."""
    if not os.environ.get(RUN_ENV):
        return
    for name, module in list(sys.modules.items()):
        if name.startswith("specdec_guide") and module is not None:
            for obj in list(vars(module).values()):
                if callable(getattr(obj, "cache_clear", None)) and getattr(obj, "__module__", None) == name:
                    obj.cache_clear()


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items):
    """The mutant's tests, fastest first (the durations mutmut measured; new tests first): a test run
    stops at the first failure, so a killed mutant costs the quickest test that kills it."""
    stats = Path("mutmut-stats.json")
    if not os.environ.get(RUN_ENV) or not stats.is_file():
        return
    took = json.loads(stats.read_text()).get("duration_by_test", {})
    items.sort(key=lambda item: took.get(item.nodeid, 0.0))


# -- one module, inside its working folder (a child process) --------------------------------------
def child(module: str, retest: bool = False) -> int:
    """Run mutmut for ``module`` in the current folder and write report.json (``retest``: only the
    mutants the last report left alive, against the current tests)."""
    from mutmut.configuration import config

    sources, tests = MODULES[module]
    cfg = config()
    cfg.only_mutate = list(sources)
    cfg.pytest_add_cli_args_test_selection = list(tests)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    cfg.pytest_add_cli_args = [*cfg.pytest_add_cli_args, "-p", "mutation"]
    os.environ[RUN_ENV] = str(Path("tiny_models").resolve())

    from mutmut.__main__ import _run
    from mutmut.mutation.data import SourceFileMutationData
    from mutmut.mutation.diff_apply import get_diff_for_mutant
    from mutmut.stats import status_by_exit_code

    names: list[str] = []
    if retest and Path("report.json").exists():
        names = [n for n, got in json.loads(Path("report.json").read_text()).items() if got["status"] not in KILLED]
        if not names:
            return 0
    try:
        _run(names, max_children=1)
    except AssertionError:  # mutmut found none of the names: the source changed since the last run
        print("the mutants of the last run are gone (the source changed): run without --retest")
        return 1
    except SystemExit as stop:
        if stop.code not in (None, 0):
            return int(stop.code) if isinstance(stop.code, int) else 1
    report = {}
    for path in sources:
        data = SourceFileMutationData(path=path)
        data.load()
        for name, code in data.exit_code_by_key.items():
            status = status_by_exit_code[code]
            report[name] = {"file": path, "status": status,
                            "diff": "" if status in KILLED else get_diff_for_mutant(name, path=path)}
    Path("report.json").write_text(json.dumps(report, indent=1))
    return 0


def prepare(folder: Path, keep: bool) -> None:
    """The module's working folder: links to what mutmut reads and copies, nothing else."""
    sys.path.insert(0, str(ROOT))
    if folder.exists() and not keep:
        shutil.rmtree(folder)
    folder.mkdir(parents=True, exist_ok=True)
    import tomllib

    conf = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mutmut"]
    for name in {"pyproject.toml", "tests", *conf.get("source_paths", ["src"]), *conf.get("also_copy", [])}:
        top = Path(name).parts[0]
        link = folder / top
        if not link.exists():
            link.symlink_to(ROOT / top)


# -- the report ------------------------------------------------------------------------------------
def load_equivalents() -> list[dict]:
    import yaml

    data = yaml.safe_load(EQUIVALENTS.read_text()) if EQUIVALENTS.exists() else None
    entries = data or []
    for i, entry in enumerate(entries):
        missing = [k for k in ("module", "mutant", "change", "why") if not entry.get(k)]
        if missing:
            raise SystemExit(f"{EQUIVALENTS.relative_to(ROOT)}: entry {i + 1} lacks {', '.join(missing)}")
    return entries


def summarize(module: str, report: dict, equivalents: list[dict]) -> tuple[dict, list[str]]:
    """Counts for one module and the lines to print about what is left."""
    mine = [e for e in equivalents if e["module"] == module]
    notes: list[str] = []
    equivalent = set()
    for e in mine:
        got = report.get(e["mutant"])
        if got is None:
            notes.append(f"  stale equivalent entry: {e['mutant']} is not a mutant any more")
        elif got["status"] in KILLED:
            notes.append(f"  stale equivalent entry: {e['mutant']} is killed now; drop the entry")
        elif e["change"].strip() not in got["diff"]:
            notes.append(f"  stale equivalent entry: {e['mutant']}'s diff no longer holds {e['change'].strip()!r}")
        else:
            equivalent.add(e["mutant"])
    counts = {"total": len(report), "killed": 0, "survived": 0, "no tests": 0, "other": 0,
              "equivalent": len(equivalent)}
    for name, got in sorted(report.items()):
        status = got["status"]
        if status in KILLED:
            counts["killed"] += 1
            continue
        if name in equivalent:
            continue
        counts[status if status in ("survived", "no tests") else "other"] += 1
        notes.append(f"  {status}: {name}\n" + "\n".join(f"    {line}" for line in got["diff"].splitlines()[2:]))
    judged = counts["total"] - counts["equivalent"]
    counts["score"] = counts["killed"] / judged if judged else 1.0
    return counts, notes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="*", metavar="MODULE",
                        help=f"modules to run (default: all of {', '.join(MODULES)})")
    parser.add_argument("--retest", action="store_true", help="re-run only the mutants the last run left alive")
    parser.add_argument("--report-only", action="store_true", help="print the last run's results, run nothing")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child(args.child, args.retest)
    unknown = [m for m in args.modules if m not in MODULES]
    if unknown:
        parser.error(f"unknown module {', '.join(unknown)}; choose from {', '.join(MODULES)}")
    equivalents = load_equivalents()
    rows, failed = [], False
    for module in args.modules or list(MODULES):
        folder = WORK / module
        if not args.report_only:
            prepare(folder, keep=args.retest)
            print(f"== {module}: mutating {', '.join(MODULES[module][0])} against "
                  f"{', '.join(MODULES[module][1])}", flush=True)
            started = time.monotonic()
            # One thread for torch and its kin: the machine is shared, and mutmut forks per mutant.
            env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
            done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", module,
                                   *(["--retest"] if args.retest else [])], cwd=folder, env=env)
            minutes = (time.monotonic() - started) / 60
            if done.returncode != 0:
                print(f"== {module}: mutmut failed (exit {done.returncode})")
                failed = True
                continue
            print(f"== {module}: {minutes:.1f} min")
        if not (folder / "report.json").exists():
            print(f"== {module}: no report (run it first)")
            failed = True
            continue
        counts, notes = summarize(module, json.loads((folder / "report.json").read_text()), equivalents)
        rows.append((module, counts))
        if notes:
            print(f"-- {module}: not killed and not equivalent, or stale entries")
            print("\n".join(notes))
    print()
    print(f"{'module':<12} {'mutants':>7} {'killed':>6} {'survived':>8} {'no tests':>8} {'other':>5} "
          f"{'equivalent':>10} {'score':>6}")
    for module, c in rows:
        print(f"{module:<12} {c['total']:>7} {c['killed']:>6} {c['survived']:>8} {c['no tests']:>8} {c['other']:>5} "
              f"{c['equivalent']:>10} {c['score']:>6.1%}")
        failed |= c["score"] < TARGET
    print(f"score = killed / (mutants - equivalent); target {TARGET:.0%} per module")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
