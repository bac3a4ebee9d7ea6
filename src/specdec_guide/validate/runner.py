"""Finds the files, picks each one's kind and track, and runs the matching checker.

Every failure becomes a :class:`~specdec_guide.diagnostics.Diagnostic` (unreadable or binary
files, YAML/Python/protobuf syntax, a ``trtllm=`` directive naming no track), never an
exception, so ``specdec-guide validate`` always ends with a list and an exit status. What a checker
could not judge (:class:`~specdec_guide.validate.notes.Note`) goes to ``Report.notes``, apart from
the errors: it fails the run only when ``strict``. A run that checked no file is not a pass.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from specdec_guide import markers
from specdec_guide.diagnostics import Diagnostic
from specdec_guide.validate import kinds, walk
from specdec_guide.validate.notes import is_note
from specdec_guide.releases.tracks import Registry, Track


#: The start of the finding for a checker that raised: a bug in this package, never the reader's fault
#: (the mutation test in tests/test_no_traceback.py fails on it).
INTERNAL_ERROR = "specdec-guide could not check this file: internal error"


@dataclass
class FileResult:
    path: Path
    kind: str
    track: Track | None = None
    snippets: int = 1
    references: int = 0  # TRT-LLM names / CLI invocations the checker actually compared
    findings: list = field(default_factory=list)


@dataclass
class Report:
    root: Path
    results: list = field(default_factory=list)
    diagnostics: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    strict: bool = False

    @property
    def checked_nothing(self) -> bool:
        return not self.results

    @property
    def ok(self) -> bool:
        return not self.diagnostics and not (self.strict and self.notes) and not self.checked_nothing

    def summary(self) -> str:
        if self.checked_nothing:
            why = ("no file of a kind it checks was found" if not self.diagnostics
                   else f"{len(self.diagnostics)} problem{'s' if len(self.diagnostics) != 1 else ''}")
            return (f"checked nothing ({why}): name snippet, template, notebook or page files, or run it inside "
                    f"the guide's checkout (a folder with snippets/, model_repo_templates/, notebooks/ or docs/)")
        return self._summary() + self._notes_part()

    def _notes_part(self) -> str:
        if not self.notes:
            return ""
        n = len(self.notes)
        tail = " (--strict: they fail the run)" if self.strict else " (not checked; --strict fails on them)"
        return f"; {n} note{'s' if n != 1 else ''}{tail}"

    def _summary(self) -> str:
        files = [r for r in self.results if r.kind not in ("page", "markdown")]
        pages = [r for r in self.results if r.kind in ("page", "markdown")]
        tracks = sorted({r.track.id for r in self.results if r.track is not None})
        n = sum(r.snippets for r in files)
        parts = [f"{n} snippet{'s' if n != 1 else ''}"]
        if pages:
            parts.append(f"{sum(r.snippets for r in pages)} fenced blocks in {len(pages)} pages")
        against = f" against TRT-LLM {', '.join(tracks)}" if tracks else ""
        n_files = len(self.results)
        head = f"checked {n_files} file{'s' if n_files != 1 else ''} ({', '.join(parts)}){against}"
        if not self.diagnostics:
            return f"{head}: no problems"
        n = len(self.diagnostics)
        return f"{head}: {n} problem{'s' if n != 1 else ''}"


def display(path: Path, root: Path) -> str:
    try:
        return str(path.resolve().relative_to(root.resolve()))
    except ValueError:
        return str(path)


def read_text(path: Path) -> tuple[str | None, tuple[int, int, str] | None]:
    """``(text, None)`` or ``(None, (line, col, reason))`` for unreadable (``0:0``), binary (the first
    NUL byte) or non-UTF-8 (the first bad byte) files."""
    from specdec_guide.diagnostics import position_of

    try:
        data = path.read_bytes()
    except OSError as err:
        return None, (0, 0, f"cannot read file: {err.strerror or err}")
    if b"\0" in data:
        return None, (*position_of(data, data.index(b"\0")), "binary file (a NUL byte): a snippet must be text")
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as err:
        return None, (*position_of(data, err.start), f"not UTF-8 text (byte {err.start})")


def marker_place(path: Path, kind: str, root: Path) -> str:
    """Where a file's ``specdec-guide:`` markers are read (:data:`specdec_guide.markers.PLACES`)."""
    if kind in ("page", "markdown"):
        return "page"
    return "notebook" if kind == "python" and kinds.is_notebook(path, root) else "snippet"


def pick_track(text: str, path: Path, registry: Registry, override: str | None):
    """``(track, None)`` or ``(None, (line, col, message))`` for a bad directive."""
    if override:
        return registry.resolve(override), None
    name = kinds.declared_track(text)
    if name is None and path.name == "config.pbtxt":
        sibling = path.parent / "1" / "model.yaml"
        if sibling.is_file():
            name = kinds.declared_track(kinds.head_text(sibling))
    if name is None:
        return registry.resolve(None), None
    track = registry.find(name)
    if track is None or not track.exists:
        found = markers.first(text, "trtllm")
        ln = found.line if found is not None else 1
        return None, (ln, 1, f"unknown TRT-LLM track '{name}' in the trtllm= directive "
                             f"(known: {', '.join(registry.names())})")
    return track, None


def check_file(path: Path, kind: str, text: str, track: Track | None, registry: Registry, root: Path,
               is_verified: Callable[[Path], bool], env: dict | None = None) -> FileResult:
    """Run one checker on one file's text."""
    from specdec_guide.validate.behaviour_rules import local_bases

    # A relative value such as `drafts/eagle3` is a local folder when it exists next to the file or in
    # the checkout, not a hub id (behaviour_rules.looks_like_hub_id).
    with local_bases(path.parent, root):
        return _check_file(path, kind, text, track, registry, root, is_verified, env)


def _check_file(path: Path, kind: str, text: str, track: Track | None, registry: Registry, root: Path,
                is_verified: Callable[[Path], bool], env: dict | None = None) -> FileResult:
    from specdec_guide.validate import llm_yaml, pages, pbtxt, python_ast, shell

    res = FileResult(path, kind, track)
    if kind == "pbtxt":
        res.findings = pbtxt.check(text, path, track, registry)
        res.references = 1
    elif kind == "llm-yaml":
        model_yaml = path.name == "model.yaml" or kinds.has_top_key(text, "triton_config")
        res.findings = llm_yaml.check(text, track, registry, model_yaml=model_yaml)
        res.references = 1
    elif kind == "python":
        if kinds.is_notebook(path, root) and path.is_file():
            # Cell by cell: a `%%bash` or `%%writefile` cell's body is not Python (validate.notebook).
            from specdec_guide.validate.notebook import HeaderError, NotebookChecker

            try:
                nbc = NotebookChecker(registry).check_source(path)
            except HeaderError as err:
                res.findings = [(err.line, err.col, err.message)]
                return res
            res.track = registry.find(nbc.track) or track
            res.findings = [(d.line, d.col, d.message) for d in nbc.diagnostics()]
            res.references = nbc.references
            res.snippets = max(1, len(nbc.cells))
        else:
            res.findings, res.references = python_ast.check(text, track, registry, notebook=False)
    elif kind == "shell":
        res.findings, res.references, _ = shell.check(text, track, registry, env=env)
    elif kind == "page":
        res.track = None
        res.findings, res.snippets = pages.check(text, root, is_verified)
    elif kind == "markdown":
        res.findings, res.references, res.snippets = pages.check_commands(text, track, registry)
    return res


def collect(paths: list[Path] | None, root: Path,
            excludes: list[str] | None = None) -> tuple[list[Path], list[Diagnostic], set[Path]]:
    """The files to check, diagnostics for missing ones, and the files named explicitly.

    A folder is walked as :func:`specdec_guide.validate.walk.walk` says: no ``.git``, virtual
    environments, git-ignored files or the project's ``exclude`` patterns.
    """
    if not paths:
        return kinds.snippet_files(root) + kinds.page_files(root), [], set()
    files, diags, explicit = [], [], set()
    for p in paths:
        if p.is_dir():
            files.extend(f for f in walk.walk(p, root, excludes) if not kinds.skipped(f.relative_to(p)))
        elif p.is_file():
            files.append(p)
            explicit.add(p.resolve())
        else:
            diags.append(Diagnostic(str(p), 0, 0, "no such file or directory"))
    return files, diags, explicit


def llm_yaml_references(files: list[Path], root: Path, registry: Registry, override: str | None) -> set[Path]:
    """YAML files that shell snippets pass to --extra_llm_api_options / --config."""
    from specdec_guide.validate import shell

    out: set[Path] = set()
    for f in files:
        if f.suffix not in (".sh", ".bash"):
            continue
        text, _ = read_text(f)
        if text is None:
            continue
        track, _ = pick_track(text, f, registry, override)
        if track is None:
            continue
        try:
            _, _, refs = shell.check(text, track, registry)
        except Exception:  # noqa: BLE001  the file's own check reports what went wrong
            continue
        for _, ref in refs:
            for base in (f.parent, root):
                cand = (base / ref)
                if cand.suffix in (".yaml", ".yml") and cand.is_file():
                    out.add(cand.resolve())
    return out


def page_env(root: Path) -> dict[Path, dict]:
    """Variables each included shell snippet inherits from the snippets before it on its page.

    A page is read top to bottom in one shell, so ``FILL_TEMPLATE_SCRIPT=...`` in one block is
    known to the next. The first page that includes a snippet decides what it inherits.
    """
    from specdec_guide.validate import pages, shell

    out: dict[Path, dict] = {}
    for page in kinds.page_files(root):
        text, _ = read_text(page)
        if text is None:
            continue
        env: dict = {}
        for _line, _indent, _info, body, closed, _out in pages.fenced_blocks(text):
            for _ln, _col, raw in (pages.include_paths(body) or []) if closed else []:
                path = (root / raw).resolve()
                if path.suffix not in (".sh", ".bash") or not path.is_file():
                    continue
                out.setdefault(path, dict(env))
                snippet, _ = read_text(path)
                if snippet is not None:
                    try:
                        env = shell.snippet_env(snippet, env)
                    except Exception:  # noqa: BLE001  the snippet's own check reports it
                        pass
    return out


def validate_paths(paths: list[Path] | None = None, trtllm: str | None = None, root: Path | None = None,
                   registry: Registry | None = None, *, is_verified: Callable[[Path], bool],
                   strict: bool = False) -> Report:
    """Validate ``paths`` (files or folders; None: the whole repository) and return a Report.

    ``is_verified`` answers the page rule's "is this included file verified?": the caller builds it
    (``specdec_guide.validate.verified.verifier``, which runs this module's checkers per file), so
    the runner never imports the verifier.
    """
    root = root or kinds.find_repo_root()
    registry = registry or Registry()
    if trtllm:
        registry.resolve(trtllm)  # an unknown --trtllm is a usage error, raised before any work
    report = Report(root, strict=strict)
    excludes, setting_problems = walk.project_excludes(root)
    files, report.diagnostics, explicit = collect(paths, root, excludes)
    report.diagnostics += setting_problems
    extra_yaml = llm_yaml_references(files, root, registry, trtllm)
    envs = page_env(root)
    for path in files:
        shown = display(path, root)
        kind = kinds.kind_of(path, root, extra_yaml, registry)
        if kind is None and path.suffix.lower() == ".md" and path.resolve() in explicit:
            kind = "markdown"  # a README named on the command line: its shell fences are checked
        if kind is None:
            if path.resolve() in explicit:
                report.diagnostics.append(Diagnostic(shown, 0, 0, "no validator applies to this kind of file"))
            elif path.suffix.lower() in (".yaml", ".yml"):
                # A misspelt llm-api-yaml marker leaves its file unjudged: the marker line is still read.
                text, _ = read_text(path)
                report.diagnostics += [Diagnostic(shown, *p) for p in markers.problems(text or "", "snippet")]
            continue
        text, problem = read_text(path)
        if text is None:
            report.diagnostics.append(Diagnostic(shown, *problem))
            report.results.append(FileResult(path, kind))
            continue
        comments = markers.python_comment_lines(text) if path.suffix == ".py" else None
        report.diagnostics += [Diagnostic(shown, *p) for p in markers.problems(text, marker_place(path, kind, root), comments)]
        track = None
        if kind != "page":
            track, bad = pick_track(text, path, registry, trtllm)
            if bad:
                report.diagnostics.append(Diagnostic(shown, *bad))
                report.results.append(FileResult(path, kind))
                continue
        try:
            res = check_file(path, kind, text, track, registry, root, is_verified, env=envs.get(path.resolve()))
        except Exception as err:  # noqa: BLE001  a checker's bug must not cost the reader the other files
            res = FileResult(path, kind, track, findings=[(1, 1, f"{INTERNAL_ERROR} ({type(err).__name__}: {err}); "
                                                                 "the other files were checked")])
        report.results.append(res)
        for ln, col, msg in res.findings:
            (report.notes if is_note(msg) else report.diagnostics).append(Diagnostic(shown, ln, col, str(msg)))
    report.diagnostics.sort()
    report.notes.sort()
    return report
