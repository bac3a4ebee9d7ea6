"""How each snippet is verified: the ``snippets/VERIFIED_BY.yaml`` registry and :class:`Verifier`.

The page rule (:mod:`specdec_guide.validate.pages`) asks of every file a page includes "is it
verified?", and ``specdec-guide coverage`` (:mod:`specdec_guide.coverage`) lists the answer for every
snippet. The answer lives here, inside ``validate``: coverage builds on the validator, never the
other way round. The three ways a file is verified are described in :mod:`specdec_guide.coverage`.
"""

from __future__ import annotations

import ast
import fnmatch
from dataclasses import dataclass
from pathlib import Path

import yaml

from specdec_guide.diagnostics import Diagnostic

REGISTRY_PATH = "snippets/VERIFIED_BY.yaml"
EXECUTED = "executed on CPU"
# A test that reads a file without running it (a `docker run` needs the container): said as such.
READ_BY_TEST = "read by a test, not run"
GPU_ONLY = "GPU tier only"
CELLS_CHECKED = "checked statically against"


@dataclass
class Entry:
    pattern: str
    tests: list[str]
    line: int
    executed: bool = True  # False: `{read_by: [...]}`, the tests check the file without running it


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
        executed = True
        if (isinstance(v, yaml.MappingNode) and len(v.value) == 1
                and isinstance(v.value[0][0], yaml.ScalarNode) and v.value[0][0].value == "read_by"):
            executed, v = False, v.value[0][1]
        if isinstance(v, yaml.ScalarNode) and v.value:
            tests = [v.value]
        elif isinstance(v, yaml.SequenceNode) and v.value and all(isinstance(x, yaml.ScalarNode) for x in v.value):
            tests = [x.value for x in v.value]
        else:
            diags.append(Diagnostic(REGISTRY_PATH, line, k.start_mark.column + 1,
                                    f"'{k.value}' must name a pytest node id or a list of them "
                                    "(or `read_by:` one or a list)"))
            continue
        entries.append(Entry(str(k.value), tests, line, executed))
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
        from specdec_guide.releases.tracks import Registry

        self.root = root
        self.registry = registry or Registry()
        self.trtllm = trtllm
        self.entries, self.registry_diags = load_registry(root)
        self._cache: dict[Path, list[str]] = {}
        self._notebooks: dict[tuple[Path, str | None], object] = {}

    def executed_by(self, path: Path, tier: str | None, executed: bool = True) -> list[str]:
        """The tests that run this file (``executed=False``: those that only read it)."""
        rel = path.resolve().relative_to(self.root.resolve()).as_posix()
        out = []
        for e in self.entries:
            if e.executed is executed and (e.pattern == rel or (fnmatch.fnmatchcase(rel, e.pattern) and tier != "gpu")):
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
        if kind == "python" and kinds.is_notebook(path, self.root) and path.is_file():
            # The one check of the notebook that gpu_cells reads too: checked once per site build,
            # not twice (a second or two each time), against --trtllm when given. A header jupytext
            # cannot read gives no reference, as in validate's runner; any other error (an unknown
            # track in the header) stops coverage, naming the notebook.
            from specdec_guide.diagnostics import UserError
            from specdec_guide.validate.notebook import HeaderError

            check = self._notebook_check(path, self.trtllm)
            if isinstance(check, HeaderError):
                return None
            if isinstance(check, Exception):
                rel = path.resolve().relative_to(self.root.resolve()).as_posix()
                raise UserError(f"{rel}:1:1: {check}") from None
            references = check.references
            track = self.registry.find(check.track) or track
        else:
            references = runner.check_file(path, kind, text, track, self.registry, self.root, lambda p: True).references
        return f"checked against schema of TRT-LLM {track.id}" if references else None

    def _notebook_check(self, path: Path, track_name: str | None):
        """NotebookChecker.check_source(path, track_name), made once per Verifier; the error it
        raised instead, if any."""
        from specdec_guide.diagnostics import UserError
        from specdec_guide.validate.notebook import NotebookChecker

        key = (path.resolve(), track_name)
        if key not in self._notebooks:
            try:
                self._notebooks[key] = NotebookChecker(self.registry).check_source(path, track_name)
            except (UserError, OSError, ValueError) as err:  # HeaderError is a ValueError
                self._notebooks[key] = err
        return self._notebooks[key]

    def gpu_cells(self, path: Path) -> str | None:
        """"N of M code cells checked statically ..." for a GPU-tier notebook (None if unreadable)."""
        res = self._notebook_check(path, self.trtllm)
        if isinstance(res, Exception):
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
            readers = self.executed_by(path, tier, executed=False)
            if readers:
                methods.append(f"{READ_BY_TEST} ({', '.join(readers)})")
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
