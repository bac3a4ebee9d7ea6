"""``specdec-guide coverage``: every snippet and how it is verified; exit 1 if one is not.

A snippet (a file under snippets/ or model_repo_templates/, or a notebook notebooks/*.py) is
verified in one or more of three ways:

* **executed on CPU**: a test runs it. Tests declare this in ``snippets/VERIFIED_BY.yaml``,
  a mapping from a path or glob (relative to the repository root) to one pytest node id or a
  list of them::

      snippets/serve/ngram_llm_api.py: tests/test_snippets.py::test_ngram_llm_api
      notebooks/*.py: [tests/test_notebooks.py::test_cpu_notebooks]

  Every node id must exist (file, and the class/function names in it) and every key must
  match a file; ``specdec-guide coverage`` and tests/test_coverage.py fail otherwise. A glob
  does not count for a notebook whose tier is ``gpu`` (name it explicitly if a CPU test
  really runs it).
* **read by a test, not run**: the registry entry is ``{read_by: <node id or list>}``; the test
  checks the file's content (a ``docker run`` needs the container, which CI does not have).
* **checked against schema of TRT-LLM X**: ``specdec-guide validate`` applies to it and the file
  actually names something of TensorRT-LLM (an import, a CLI invocation; every config.pbtxt and
  LLM API YAML counts).
  A notebook whose jupytext header declares ``specdec_guide: {tier: cpu}`` is executed by
  nbmake in every ``make test`` run (see the root conftest.py) and counts as executed on CPU.
* **GPU tier only**: a notebook whose jupytext header has ``specdec_guide: {tier: gpu}`` (at the
  top level of the header or under ``jupyter:``).

For the site: :func:`markdown_page` (heading, explanation and table) or :func:`markdown_table`.
"""

from __future__ import annotations

import argparse
import fnmatch
import sys
from dataclasses import dataclass, field
from pathlib import Path

from specdec_guide.diagnostics import Diagnostic
# The registry and the Verifier live in validate/ (the page rule needs them); coverage reads them from there.
from specdec_guide.validate.verified import (  # noqa: F401  (names this module has always offered)
    CELLS_CHECKED, EXECUTED, GPU_ONLY, READ_BY_TEST, REGISTRY_PATH, Entry, Verifier, load_registry,
    node_id_problem,
    notebook_tier, verifier,
)


@dataclass
class Row:
    path: str
    methods: list[str] = field(default_factory=list)

    @property
    def verified(self) -> bool:
        return bool(self.methods)


def check_registry(root: Path, entries: list[Entry] | None = None) -> list[Diagnostic]:
    """Every declared test exists and every pattern matches a snippet."""
    diags: list[Diagnostic] = []
    if entries is None:
        entries, diags = load_registry(root)
    from specdec_guide.validate.kinds import snippet_files

    rels = [p.relative_to(root).as_posix() for p in snippet_files(root)]
    for e in entries:
        if not any(fnmatch.fnmatchcase(r, e.pattern) for r in rels):
            diags.append(Diagnostic(REGISTRY_PATH, e.line, 1, f"'{e.pattern}' matches no snippet"))
        for t in e.tests:
            why = node_id_problem(root, t)
            if why:
                diags.append(Diagnostic(REGISTRY_PATH, e.line, 1, f"{t}: {why}"))
    return diags


def collect(root: Path | None = None, registry=None, trtllm: str | None = None) -> tuple[list[Row], list[Diagnostic]]:
    """Rows for every snippet, and the problems (unverified snippets, a broken registry)."""
    from specdec_guide.validate.kinds import find_repo_root, snippet_files

    root = root or find_repo_root()
    v = Verifier(root, registry, trtllm)
    rows = [Row(p.relative_to(root).as_posix(), v.methods(p)) for p in snippet_files(root)]
    diags = list(v.registry_diags) + check_registry(root, v.entries)
    diags += [Diagnostic(r.path, 0, 0, f"not verified: no test in {REGISTRY_PATH} runs it, it names nothing "
                         "of TRT-LLM that `specdec-guide validate` checks, and it is not a GPU-tier notebook")
              for r in rows if not r.verified]
    return rows, sorted(diags)


# ---- output --------------------------------------------------------------------------
def plain_table(rows: list[Row]) -> str:
    width = max([len("SNIPPET")] + [len(r.path) for r in rows])
    lines = [f"{'SNIPPET':<{width}}  VERIFIED BY"]
    for r in rows:
        lines.append(f"{r.path:<{width}}  {'; '.join(r.methods) or 'NOT VERIFIED'}")
    return "\n".join(lines)


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|")


def _md_method(method: str) -> str:
    """One verification method for the page: test ids shortened to their test names, one per line
    (full node ids do not wrap and would squeeze the table)."""
    for label in (EXECUTED, READ_BY_TEST):
        prefix = f"{label} ("
        if method.startswith(prefix) and method.endswith(")"):
            tests = [t.strip().split("::")[-1] for t in method[len(prefix):-1].split(",")]
            return f"{label}: " + "<br>".join(f"`{_md_cell(t)}`" for t in tests)
    return _md_cell(method)


def markdown_table(root: Path | None = None, rows: list[Row] | None = None) -> str:
    """The coverage table as Markdown (for docs/speculative_decoding/verification.md)."""
    if rows is None:
        rows, _ = collect(root)
    lines = ["| Snippet | Verified by |", "| --- | --- |"]
    for r in rows:
        how = "<br>".join(_md_method(m) for m in r.methods) or "**not verified**"
        lines.append(f"| `{_md_cell(r.path)}` | {how} |")
    return "\n".join(lines) + "\n"


def markdown_page(root: Path | None = None) -> str:
    """A whole page: title, what the three kinds of verification mean, and the table."""
    rows, _ = collect(root)
    intro = (
        "# How every snippet is verified\n\n"
        "This page is generated by `specdec-guide coverage --format markdown` when the site is built.\n\n"
        f"- **{EXECUTED}**: a test in the CPU suite runs the file (declared in `{REGISTRY_PATH}`).\n"
        "- **checked against schema of TRT-LLM X**: `specdec-guide validate` compares every key, "
        "keyword, flag and import in it with the recorded facts of that release.\n"
        f"- **{GPU_ONLY}**: a notebook that needs TensorRT-LLM on an NVIDIA GPU; it runs in the GPU tier. "
        f"On every commit each of its code cells is {CELLS_CHECKED} its release's snapshot "
        "(shell cells as commands and flags, Python by AST, YAML and config.pbtxt cells against their "
        "schemas); the count says how many, and a cell that cannot be checked carries its reason.\n\n"
    )
    return intro + markdown_table(rows=rows)


def register(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("coverage", help="list every snippet and how it is verified (exit 1 if one is not)")
    p.add_argument("--format", choices=("plain", "markdown"), default="plain")
    p.add_argument("--trtllm", metavar="TRACK", help="track for the schema checks (default: each file's own)")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    rows, diags = collect(trtllm=args.trtllm)
    print(markdown_table(rows=rows) if args.format == "markdown" else plain_table(rows))
    for d in diags:
        print(d, file=sys.stderr)
    return 1 if diags else 0
