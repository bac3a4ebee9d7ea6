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
import ast
import fnmatch
import sys
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from specdec_guide.diagnostics import Diagnostic

REGISTRY_PATH = "snippets/VERIFIED_BY.yaml"
EXECUTED = "executed on CPU"
GPU_ONLY = "GPU tier only"
CELLS_CHECKED = "checked statically against"


@dataclass
class Entry:
    pattern: str
    tests: list[str]
    line: int


@dataclass
class Row:
    path: str
    methods: list[str] = field(default_factory=list)

    @property
    def verified(self) -> bool:
        return bool(self.methods)


# ---- the registry --------------------------------------------------------------------
def load_registry(root: Path) -> tuple[list[Entry], list[Diagnostic]]:
    path = root / REGISTRY_PATH
    if not path.is_file():
        return [], []
    try:
        node = yaml.compose(path.read_text(encoding="utf-8"), Loader=yaml.SafeLoader)
    except (OSError, UnicodeDecodeError) as err:
        return [], [Diagnostic(REGISTRY_PATH, 0, 0, f"cannot read: {err}")]
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        return [], [Diagnostic(REGISTRY_PATH, mark.line + 1 if mark else 1, mark.column + 1 if mark else 1,
                               f"YAML syntax error: {getattr(err, 'problem', err)}")]
    if node is None:
        return [], []
    if not isinstance(node, yaml.MappingNode):
        return [], [Diagnostic(REGISTRY_PATH, 1, 1, "must map snippet paths to pytest node ids")]
    entries, diags = [], []
    for k, v in node.value:
        line = k.start_mark.line + 1
        if isinstance(v, yaml.ScalarNode) and v.value:
            tests = [v.value]
        elif isinstance(v, yaml.SequenceNode) and v.value and all(isinstance(x, yaml.ScalarNode) for x in v.value):
            tests = [x.value for x in v.value]
        else:
            diags.append(Diagnostic(REGISTRY_PATH, line, k.start_mark.column + 1,
                                    f"'{k.value}' must name a pytest node id or a list of them"))
            continue
        entries.append(Entry(str(k.value), tests, line))
    return entries, diags


def node_id_problem(root: Path, node_id: str) -> str | None:
    """None if ``tests/x.py::Class::test_fn[param]`` exists, else why not."""
    file_part, _, rest = node_id.partition("::")
    path = root / file_part
    if not path.is_file():
        return f"test file '{file_part}' does not exist"
    if not rest:
        return None
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError) as err:
        return f"cannot parse '{file_part}': {err}"
    scope = tree.body
    for name in rest.split("::"):
        name = name.split("[", 1)[0]
        hit = next((n for n in scope if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                    and n.name == name), None)
        if hit is None:
            return f"'{name}' is not defined in {file_part}"
        scope = getattr(hit, "body", [])
    return None


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


# ---- notebooks -----------------------------------------------------------------------
def notebook_tier(path: Path) -> str | None:
    """``tier`` from the jupytext header's ``specdec_guide`` metadata, if any."""
    from specdec_guide.notebooks import read_meta

    try:
        tier = read_meta(path).get("tier")
    except Exception:  # an unreadable header means "no tier": reported as unverified
        return None
    return str(tier) if tier else None


# ---- verification of one file -----------------------------------------------------------
class Verifier:
    """Answers "how is this file verified?", caching one validator run per file."""

    def __init__(self, root: Path, registry=None, trtllm: str | None = None):
        from specdec_guide.validate.schema import Registry

        self.root = root
        self.registry = registry or Registry()
        self.trtllm = trtllm
        self.entries, self.registry_diags = load_registry(root)
        self._cache: dict[Path, list[str]] = {}

    def executed_by(self, path: Path, tier: str | None) -> list[str]:
        rel = path.resolve().relative_to(self.root.resolve()).as_posix()
        out = []
        for e in self.entries:
            if e.pattern == rel or (fnmatch.fnmatchcase(rel, e.pattern) and tier != "gpu"):
                out.extend(e.tests)
        return out

    def schema_check(self, path: Path) -> str | None:
        from specdec_guide.validate import kinds, runner

        kind = kinds.kind_of(path, self.root)
        if kind in (None, "page"):
            return None
        text, problem = runner.read_text(path)
        if text is None:
            return None
        track, bad = runner.pick_track(text, path, self.registry, self.trtllm)
        if bad:
            return None
        res = runner.check_file(path, kind, text, track, self.registry, self.root, lambda p: True)
        return f"checked against schema of TRT-LLM {track.id}" if res.references else None

    def gpu_cells(self, path: Path) -> str | None:
        """"N of M code cells checked statically ..." for a GPU-tier notebook (None if unreadable)."""
        from specdec_guide.diagnostics import UserError
        from specdec_guide.validate.notebook import NotebookChecker

        try:
            res = NotebookChecker(self.registry).check_source(path, self.trtllm)
        except (UserError, OSError, ValueError):
            return None
        failing = sum(1 for c in res.cells if c.findings or c.kind == "uncheckable")
        text = (f"{len(res.checked)} of {len(res.cells)} code cells {CELLS_CHECKED} TRT-LLM {res.track}"
                f"{f' ({len(res.unchecked)} marked unchecked, with the reason)' if res.unchecked else ''}")
        return text + (f"; {failing} failing" if failing else "")

    def methods(self, path: Path) -> list[str]:
        key = path.resolve()
        if key not in self._cache:
            tier = notebook_tier(path) if path.suffix == ".py" else None
            methods = []
            tests = self.executed_by(path, tier)
            if tier == "cpu":
                # the root conftest hands every CPU-tier notebook to nbmake in `make test`
                tests = [f"nbmake {path.with_suffix('.ipynb').name}", *tests]
            if tests:
                methods.append(f"{EXECUTED} ({', '.join(tests)})")
            checked = self.schema_check(path)
            if checked:
                methods.append(checked)
            if tier == "gpu":
                cells = self.gpu_cells(path)
                if cells:
                    methods.append(cells)
                methods.append(GPU_ONLY)
            self._cache[key] = methods
        return self._cache[key]

    def __call__(self, path: Path) -> bool:
        return bool(self.methods(path))


def verifier(root: Path, registry=None, trtllm: str | None = None) -> Verifier:
    """A callable ``path -> bool`` (is it verified?), used by the page checker."""
    return Verifier(root, registry, trtllm)


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
    prefix = f"{EXECUTED} ("
    if method.startswith(prefix) and method.endswith(")"):
        tests = [t.strip().split("::")[-1] for t in method[len(prefix):-1].split(",")]
        return f"{EXECUTED}: " + "<br>".join(f"`{_md_cell(t)}`" for t in tests)
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
