"""GPU-tier notebooks, checked cell by cell on a CPU.

A ``tier: gpu`` notebook cannot run here, so each of its code cells is checked statically
against the snapshot of the notebook's track (``specdec_guide.trtllm_version`` in its header;
a cell may name another one with ``# specdec-guide: trtllm=<track>``):

* ``%%bash`` / ``%%sh`` cells and ``!`` lines: ``bash -n`` for the syntax, then the shell
  checker (every TensorRT-LLM / Triton CLI, flag by flag, and fill_template.py keys). The
  fill_template.py calls and the ``cp``/``mv`` of all cells, in order, make one sequence
  (``shell.FillLedger``): a key filled twice in one file, or a structural placeholder or a mandatory
  parameter that no call fills, is an error. Targets are keyed as each cell writes them (no ``cd``):
  a variable the cell does not set (a Python cell's ``os.environ``) is keyed by its name in every cell.
* Python cells: Python syntax, then the AST checker (imports, ``LLM(...)`` keywords and
  config classes against the LLM API snapshot).
* ``%%writefile PATH`` cells: by what PATH is: a ``config.pbtxt`` (or any ``.pbtxt``) with the
  protobuf/Triton checker, an LLM API YAML (``model.yaml``, a name with ``llm_api``, a file a
  shell cell passes to ``--extra_llm_api_options``/``--config``, or the ``llm-api-yaml``
  marker) with the LLM API YAML checker, ``.py``/``.sh`` as above.

Anything else (another cell magic, a line magic, a file of a kind no checker knows) cannot be
checked. Such a cell fails unless it carries the marker, as its first line or the line after
its cell magic::

    # specdec-guide: unchecked: <why it cannot be checked>

A marked cell is reported with its reason and not checked; the reason must not be empty.
"""

from __future__ import annotations

import argparse
import ast
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from specdec_guide import markers
from specdec_guide.diagnostics import Diagnostic
from specdec_guide.validate import kinds, llm_yaml, pbtxt, python_ast, shell
from specdec_guide.releases.tracks import Registry, Track

_CELL_MAGIC = re.compile(r"^%%(\w+)\s*(.*)$")
_LINE_MAGIC = re.compile(r"^\s*%(?!%)")
_BANG = re.compile(r"^(\s*)!(.*)$")
_CELL_HEAD = re.compile(r"^# %%(\s|$)")
SHELL_MAGICS = {"bash", "sh"}


@dataclass
class CellResult:
    index: int  # 1-based among all cells of the notebook
    line: int  # 1-based line in the .py source where the cell's text starts
    kind: str  # "shell", "python", "pbtxt", "llm-yaml", "unchecked" or "uncheckable"
    track: str | None = None
    references: int = 0  # TRT-LLM names, CLI invocations or config files compared with the snapshot
    findings: list = field(default_factory=list)  # (line, col, message), line relative to the .py
    reason: str = ""  # why it is not checked (marked cells) or cannot be (unmarked)

    @property
    def checked(self) -> bool:
        return self.kind not in ("unchecked", "uncheckable")


@dataclass
class NotebookCheck:
    source: Path
    track: str
    cells: list = field(default_factory=list)

    @property
    def checked(self) -> list:
        return [c for c in self.cells if c.checked]

    @property
    def unchecked(self) -> list:
        return [c for c in self.cells if c.kind == "unchecked"]

    @property
    def references(self) -> int:
        """TRT-LLM / Triton names the checked cells use (0: the notebook names nothing checkable)."""
        return sum(c.references for c in self.checked)

    def diagnostics(self, root: Path | None = None) -> list[Diagnostic]:
        shown = str(self.source)
        if root is not None:
            try:
                shown = self.source.resolve().relative_to(root.resolve()).as_posix()
            except ValueError:
                pass
        out = []
        for c in self.cells:
            if c.kind == "uncheckable":
                out.append(Diagnostic(shown, c.line, 1, f"cell {c.index} cannot be checked statically ({c.reason}); "
                                      "mark it '# specdec-guide: unchecked: <reason>' or make it checkable"))
            # A note stays a note (counted apart, failing only under --strict) once the cell is named.
            out.extend(Diagnostic(shown, ln, col, type(msg)(f"cell {c.index}: {msg}")) for ln, col, msg in c.findings)
        return sorted(out)

    def summary(self) -> str:
        by_kind: dict[str, int] = {}
        for c in self.checked:
            by_kind[c.kind] = by_kind.get(c.kind, 0) + 1
        kinds_txt = ", ".join(f"{n} {k}" for k, n in sorted(by_kind.items()))
        refs = self.references
        text = (f"{self.source.name}: {len(self.checked)} of {len(self.cells)} code cells checked against "
                f"TRT-LLM {self.track} ({kinds_txt or 'none'}; {refs} TRT-LLM references)")
        # Honest counts: a cell that names nothing of TensorRT-LLM or Triton was only parsed.
        bare = [c.index for c in self.checked if not c.references]
        if bare:
            text += f"\n  syntax only (names no TRT-LLM/Triton CLI, class or key): cells {', '.join(map(str, bare))}"
        for c in self.unchecked:
            text += f"\n  cell {c.index} (line {c.line}) not checked: {c.reason}"
        return text + "\n"


def _cell_starts(py_text: str, n_cells: int) -> list[int]:
    """1-based line of the first text line of each cell in a jupytext percent source."""
    lines = py_text.split("\n")
    # `# %%` opens a cell; `# %%bash` is an escaped cell magic inside one.
    heads = [i + 1 for i, ln in enumerate(lines) if _CELL_HEAD.match(ln)]
    starts = [h + 1 for h in heads]
    if len(starts) < n_cells:  # a first cell without a `# %%` header follows the YAML header
        end = next((i + 1 for i, ln in enumerate(lines[1:], 1) if ln.strip() == "# ---"), 0)
        starts = [end + 1] * (n_cells - len(starts)) + starts
    return starts[:n_cells]


def _marker(lines: list[str]) -> tuple[bool, str, int]:
    """``(marked, reason, line index)``: the marker on the first line, or the one after a cell magic."""
    for i in (0, 1):
        if i < len(lines) and (i == 0 or lines[0].startswith("%%")):
            found = markers.parse_line(lines[i])
            if found and found.name == "unchecked":
                return True, found.args["reason"].strip(), i
    return False, "", -1


def _shell_syntax(text: str) -> list:
    """``bash -n`` on the text: ``(line, col, message)`` for a syntax error."""
    bash = shutil.which("bash")
    if not bash:
        return []  # every CI and container image has bash; the flag check below still runs
    proc = subprocess.run([bash, "-n"], input=text, capture_output=True, text=True, timeout=30)
    if proc.returncode == 0:
        return []
    out = []
    for ln in proc.stderr.strip().splitlines():
        m = re.search(r"line (\d+): (.*)$", ln)
        out.append((int(m.group(1)) if m else 1, 1, f"shell syntax: {m.group(2) if m else ln}"))
    return out[:1]


def _python_syntax(text: str) -> list:
    try:
        ast.parse(text)
    except SyntaxError as err:
        return [(err.lineno or 1, err.offset or 1, f"Python syntax error: {err.msg}")]
    return []


_HEREDOC_LINE = re.compile(r"<<-?\s*(['\"]?)([\w.\-]+)\1")
_REDIRECT = re.compile(r"(?<![<>&\d])>{1,2}\s*(\"[^\"]+\"|'[^']+'|[^\s;&|<>]+)")


def _heredocs(body: str):
    """``(target file or None, program, first body line (1-based), body text)`` per heredoc."""
    lines = body.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i].split(" #", 1)[0]
        m = _HEREDOC_LINE.search(line) if "<<<" not in line else None
        if not m:
            i += 1
            continue
        end = m.group(2)
        j = i + 1
        while j < len(lines) and lines[j].strip() != end:
            j += 1
        red = _REDIRECT.search(line)
        target = red.group(1).strip("\"'") if red else None
        words = line.split()
        prog = words[0] if words else None
        yield target, prog, i + 2, "\n".join(lines[i + 1:j])
        i = j + 1


def _trtllm_imports(text: str) -> list[str]:
    """The module-level ``import``/``from`` statements of ``text`` that name tensorrt_llm."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    out = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == python_ast.ROOT:
            out.append(ast.unparse(node))
        elif isinstance(node, ast.Import) and any(a.name.split(".")[0] == python_ast.ROOT for a in node.names):
            out.append(ast.unparse(node))
    return out


def _trtllm_uses(text: str, shift: int) -> int:
    """TensorRT-LLM imports and calls of imported TensorRT-LLM names below line ``shift``."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return 0
    names: set[str] = set()
    count = 0
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            mods = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
            if any(m.split(".")[0] == python_ast.ROOT for m in mods) and getattr(node, "level", 0) == 0:
                names.update((a.asname or a.name).split(".")[0] for a in node.names)
                count += node.lineno > shift
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.lineno > shift:
            root = node.func
            while isinstance(root, ast.Attribute):
                root = root.value
            count += isinstance(root, ast.Name) and root.id in names
    return count


def _file_kind(target: str, body: str, llm_yaml_refs: set[str]) -> str | None:
    path = Path(target)
    if path.suffix in (".yaml", ".yml") and (PurePosixPath(target).name in llm_yaml_refs
                                             or markers.first(body, "llm-api-yaml")):
        return "llm-yaml"
    kind = kinds.kind_of(path)
    return kind if kind in ("pbtxt", "llm-yaml", "python", "shell") else None


class HeaderError(ValueError):
    """A notebook source whose jupytext header (or text) jupytext cannot read, with the position."""

    def __init__(self, line: int, col: int, message: str):
        super().__init__(f"{line}:{col}: {message}")
        self.line, self.col, self.message = line, col, message


def read_notebook(source: Path, py_text: str | None = None):
    """``jupytext.read(source)``, or :class:`HeaderError` at the line and column in ``source``.

    The header is YAML commented out with ``# `` between two ``# ---`` lines: a YAML error's
    position in it maps back to the file by the header's first line and that two-character prefix.
    """
    import jupytext
    import yaml

    try:
        return jupytext.read(source)
    except yaml.YAMLError as err:
        text = py_text if py_text is not None else source.read_text(encoding="utf-8")
        lines = text.split("\n")
        start = next((i for i, ln in enumerate(lines) if ln.strip() == "# ---"), 0)
        mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
        line = min(start + 1 + (mark.line + 1 if mark else 1), len(lines))
        col = (mark.column + 1 if mark else 1) + (2 if lines[line - 1].startswith("# ") else 0)
        raise HeaderError(line, col, f"the jupytext header is not valid YAML: "
                                     f"{getattr(err, 'problem', None) or err}") from None
    except Exception as err:  # jupytext/nbformat refuse the metadata (a validation error, a wrong type)
        first = str(err).strip().split("\n", 1)[0] or type(err).__name__
        raise HeaderError(1, 1, f"jupytext cannot read this notebook: {first}") from None


class NotebookChecker:
    """Checks the code cells of one notebook against one default track."""

    def __init__(self, registry: Registry | None = None):
        self.registry = registry or Registry()

    def track_for(self, text: str, default: Track) -> tuple[Track, tuple | None]:
        name = kinds.declared_track(text)
        if name is None:
            return default, None
        track = self.registry.find(name)
        if track is None or not track.exists:
            return default, (1, 1, f"unknown TRT-LLM track '{name}' in the trtllm= directive "
                                   f"(known: {', '.join(self.registry.names())})")
        return track, None

    def check_source(self, source: Path, track_name: str | None = None) -> NotebookCheck:
        """Check every code cell; a header jupytext cannot read raises :class:`HeaderError`."""
        py_text = source.read_text(encoding="utf-8")
        nb = read_notebook(source, py_text)
        meta = nb.metadata.get("specdec_guide")
        meta = dict(meta) if isinstance(meta, dict) else {}
        # The notebook's pin (its metadata), else the file's own trtllm= directive, else the default track.
        default = self.registry.resolve(track_name or meta.get("track") or meta.get("trtllm_version")
                                        or kinds.declared_track(py_text))
        starts = _cell_starts(py_text, len(nb.cells))
        cells = [(i, starts[i - 1], c.source) for i, c in enumerate(nb.cells, 1) if c.cell_type == "code"]
        refs = self._llm_yaml_refs(cells, default)
        self._yaml_refs = refs
        result = NotebookCheck(source, default.id)
        self._imports = []  # TRT-LLM import statements of the cells so far: later cells use their names
        # fill_template.py calls of every cell, in order: the kernel's files outlive a cell.
        self._fills = shell.FillLedger()
        try:
            for index, start, text in cells:
                if not text.strip():
                    continue
                result.cells.append(self.check_cell(index, start, text, default, refs))
            for (res, place), ln, col, msg in self._fills.findings():
                res.findings.append((*place(ln, col), msg))
        finally:
            self._fills = None
        return result

    def _llm_yaml_refs(self, cells, default: Track) -> set[str]:
        """Names of the YAML files that shell cells pass to --extra_llm_api_options / --config."""
        out: set[str] = set()
        for _, _, text in cells:
            lines = text.split("\n")
            body = "\n".join(lines[1:]) if lines[0].startswith("%%") else "\n".join(
                m.group(2) for m in map(_BANG.match, lines) if m)
            track, _ = self.track_for(text, default)
            _, _, yaml_refs = shell.check(body, track, self.registry)
            out.update(PurePosixPath(ref).name for _, ref in yaml_refs)
        return out

    def check_cell(self, index: int, start: int, text: str, default: Track, llm_yaml_refs: set[str]) -> CellResult:
        lines = text.split("\n")
        marked, reason, at = _marker(lines)
        if marked:
            if not reason:
                return CellResult(index, start, "unchecked", None, 0, [(start + at, 1, (
                    "the unchecked marker needs a reason: '# specdec-guide: unchecked: <reason>'"))], "(no reason)")
            return CellResult(index, start, "unchecked", reason=reason)
        track, bad = self.track_for(text, default)
        res = CellResult(index, start, "python", track.id)
        if bad:
            res.findings.append((start, 1, bad[2]))
        magic = _CELL_MAGIC.match(lines[0])
        if magic:
            name, arg = magic.group(1), magic.group(2).strip()
            body = "\n".join(lines[1:])
            offset = start + 1  # the body's first line in the .py
            if name in SHELL_MAGICS or (name == "script" and arg.split()[:1] in (["bash"], ["sh"])):
                res.kind = "shell"
                self._shell(res, body, track, offset)
            elif name == "writefile":
                target = arg.split()[-1] if arg else ""
                kind = _file_kind(target, body, llm_yaml_refs) if target else None
                if kind is None:
                    res.kind, res.reason = "uncheckable", f"%%writefile {target or '(no file)'}: no checker for this kind of file"
                    return res
                res.kind = kind
                self._file(res, kind, target, body, track, offset)
            else:
                res.kind, res.reason = "uncheckable", f"cell magic %%{name}"
            return res
        magics = [ln.strip() for ln in lines if _LINE_MAGIC.match(ln)]
        if magics:
            res.kind, res.reason = "uncheckable", f"line magic {magics[0].split()[0]}"
            return res
        self._python(res, text, track, start)
        return res

    def _shell(self, res: CellResult, body: str, track: Track, offset: int) -> None:
        found = _shell_syntax(body)
        fills = getattr(self, "_fills", None)
        if fills is not None:
            fills.scope = (res, lambda ln, col: (offset + ln - 1, col))
        flags, count, _ = shell.check(body, track, self.registry, fills=fills)
        res.findings += [(offset + ln - 1, col, msg) for ln, col, msg in found + flags]
        res.references += count
        # The shell checker skips heredoc bodies: a file written by one is checked here by its kind.
        for target, prog, first, text in _heredocs(body):
            kind = _file_kind(target, text, getattr(self, "_yaml_refs", set())) if target else (
                "python" if prog and re.match(r"^python(\d(\.\d+)?)?$", prog) else None)
            if kind is None:
                res.kind, res.reason = "uncheckable", f"heredoc into {target or prog or 'a command'} (line {offset + first - 1})"
                return
            self._file(res, kind, target or "stdin.py", text, track, offset + first - 1)

    def _python(self, res: CellResult, text: str, track: Track, start: int) -> None:
        # `!cmd` lines are shell: check them as such, the rest as Python (magics blanked).
        for i, ln in enumerate(text.split("\n")):
            m = _BANG.match(ln)
            if m:
                fills = getattr(self, "_fills", None)
                if fills is not None:
                    fills.scope = (res, lambda _ln, col, i=i, ind=len(m.group(1)): (start + i, col + ind + 1))
                found, count, _ = shell.check(m.group(2), track, self.registry, fills=fills)
                res.references += count
                res.findings += [(start + i, col + len(m.group(1)) + 1, msg) for _, col, msg in found]
        # A kernel keeps what earlier cells imported: check this cell after those imports, so that
        # `DraftTargetDecodingConfig(...)` is checked in the cell that calls it.
        imports = list(getattr(self, "_imports", []))
        prefix = "".join(f"{imp}\n" for imp in imports)
        findings, _ = python_ast.check(prefix + text, track, self.registry, notebook=True)
        shift = prefix.count("\n")
        res.findings += [(start + ln - 1 - shift, col, msg) for ln, col, msg in findings if ln > shift]
        res.references += _trtllm_uses(prefix + python_ast.strip_magics(text), shift)
        self._imports = imports + _trtllm_imports(python_ast.strip_magics(text))

    def _file(self, res: CellResult, kind: str, target: str, body: str, track: Track, offset: int) -> None:
        if kind == "pbtxt":
            found = pbtxt.check(body, Path(target), track, self.registry)
            res.references += 1
        elif kind == "llm-yaml":
            found = llm_yaml.check(body, track, self.registry, model_yaml=PurePosixPath(target).name == "model.yaml")
            res.references += 1
        elif kind == "python":
            found, refs = python_ast.check(body, track, self.registry)
            found = found or _python_syntax(body)
            res.references += refs
        else:  # shell
            self._shell(res, body, track, offset)
            return
        res.findings += [(offset + ln - 1, col, msg) for ln, col, msg in found]


def check_notebooks(root: Path, registry: Registry | None = None) -> list[NotebookCheck]:
    """Every ``tier: gpu`` notebook under ``root/notebooks``, checked."""
    from specdec_guide.notebooks import list_notebooks

    checker = NotebookChecker(registry)
    return [checker.check_source(info.source) for info in list_notebooks(root) if info.tier == "gpu"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m specdec_guide.validate.notebook",
                                     description="check every code cell of the GPU-tier notebooks statically")
    parser.parse_args(argv)
    root = kinds.find_repo_root()
    bad = 0
    for nbc in check_notebooks(root):
        print(nbc.summary())
        for d in nbc.diagnostics(root):
            print(d, file=sys.stderr)
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
