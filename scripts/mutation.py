#!/usr/bin/env python3
"""The mutation run (``make mutation``): each core module mutated against its own unit tests only.

    python scripts/mutation.py [MODULE ...] [--keep]

mutmut (``[tool.mutmut]`` in pyproject.toml holds what every module shares) cannot give each
source file its own tests, so this script runs it once per module, each in its own working folder
``.mutation/<module>/`` (links to what mutmut copies, so the runs keep separate results), with the
module's files as ``only_mutate`` and its unit-test files as the test selection. :data:`MODULES`
is that mapping, the one place it is written: a developer who changes a file runs these tests.

Each run starts afresh (``--keep`` reuses the last run's results: mutmut does not re-test a
surviving mutant after its tests changed, so a kept score can be stale). The report gives, per
module: killed (a test failed or timed out), survived, no tests, the mutants recorded as equivalent
in tests/mutation_equivalents.yaml (a change that no input can tell from the original, with the
reason), and the score, killed / (all - equivalent). It lists every mutant that is neither killed
nor equivalent with its diff, and exits 1 when a module scores under :data:`TARGET`.

An equivalent entry names the mutant and a line of its diff (``change``); an entry whose mutant is
gone or whose diff no longer holds that line is reported as stale and not counted.
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


# -- one module, inside its working folder (a child process) --------------------------------------
def child(module: str) -> int:
    """Run mutmut for ``module`` in the current folder and write report.json."""
    from mutmut.configuration import config

    sources, tests = MODULES[module]
    cfg = config()
    cfg.only_mutate = list(sources)
    cfg.pytest_add_cli_args_test_selection = list(tests)

    from mutmut.__main__ import _run
    from mutmut.mutation.data import SourceFileMutationData
    from mutmut.mutation.diff_apply import get_diff_for_mutant
    from mutmut.stats import status_by_exit_code

    try:
        _run([], max_children=1)
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
    parser.add_argument("--keep", action="store_true", help="reuse the last run's results (may be stale)")
    parser.add_argument("--report-only", action="store_true", help="print the last run's results, run nothing")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child(args.child)
    unknown = [m for m in args.modules if m not in MODULES]
    if unknown:
        parser.error(f"unknown module {', '.join(unknown)}; choose from {', '.join(MODULES)}")
    equivalents = load_equivalents()
    rows, failed = [], False
    for module in args.modules or list(MODULES):
        folder = WORK / module
        if not args.report_only:
            prepare(folder, args.keep)
            print(f"== {module}: mutating {', '.join(MODULES[module][0])} against "
                  f"{', '.join(MODULES[module][1])}", flush=True)
            started = time.monotonic()
            # One thread for torch and its kin: the machine is shared, and mutmut forks per mutant.
            env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
            done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", module],
                                  cwd=folder, env=env)
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
