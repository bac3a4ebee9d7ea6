"""The files a folder holds for ``specdec-guide validate``: what the project itself would call its own.

A folder named on the command line is walked top-down, and these are left out (with everything below
them):

* version-control and tool folders (``.git``, ``__pycache__``, ``.tox``, ``node_modules``, ...,
  :data:`PRUNED_DIRS`), and every virtual environment: a folder holding ``pyvenv.cfg`` or
  ``conda-meta``, or named like one (``.venv``, ``venv``);
* folders reached through a symbolic link (as git does: a link is not walked into, so a ``.venv``
  that links to a shared environment is skipped too, although git's ``.venv/`` pattern does not
  match a link);
* what git ignores: inside a git work tree, ``git check-ignore --stdin`` answers for each level of
  the walk in one call; elsewhere (no git, or git refuses) the ``.gitignore`` files met on the way
  down are read with :class:`GitignoreRules`;
* what the project excludes on purpose: ``exclude`` in ``[tool.specdec-guide.validate]`` of the
  ``pyproject.toml`` at the project root (:func:`project_excludes`), gitignore-style patterns
  relative to that root. This repository lists its deliberately broken test fixtures there.

A path named explicitly is always walked, even when a pattern would leave it out: only what lies
below it is filtered (``specdec-guide validate tests/fixtures/validate/bad`` checks those files).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from specdec_guide.diagnostics import Diagnostic

PRUNED_DIRS = frozenset({
    ".git", ".hg", ".svn", ".bzr", "__pycache__", ".ipynb_checkpoints", ".pytest_cache", ".mypy_cache",
    ".ruff_cache", ".tox", ".nox", ".eggs", "node_modules", "site-packages", ".venv", "venv", ".direnv",
})
#: Files or folders whose presence makes a folder a Python environment, whatever its name.
VENV_MARKERS = ("pyvenv.cfg", "conda-meta")
SETTINGS_TABLE = "tool.specdec-guide.validate"


def is_environment(folder: Path) -> bool:
    return any((folder / m).exists() for m in VENV_MARKERS)


# ---- gitignore-style patterns ----------------------------------------------------------------
def _glob_regex(pattern: str) -> str:
    """A gitignore glob (``*``, ``?``, ``[...]``, ``**``) as a regular expression over a posix path."""
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("/**", i) and i + 3 == len(pattern):
            out.append("/.*")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "[":
            j = pattern.find("]", i + 2)
            if j < 0:
                out.append(re.escape("["))
                i += 1
                continue
            body = pattern[i + 1:j]
            if body.startswith("!"):
                body = "^" + body[1:]
            out.append("[" + body.replace("\\", "\\\\") + "]")
            i = j + 1
        elif pattern[i] == "\\" and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return "".join(out)


@dataclass
class _Rule:
    base: str  # posix folder the pattern is relative to ("" for the top)
    regex: re.Pattern
    negated: bool
    dir_only: bool


@dataclass
class GitignoreRules:
    """Patterns in gitignore syntax, each relative to the folder that declared it; the last match wins."""

    rules: list = field(default_factory=list)

    def add(self, base: str, lines) -> None:
        for raw in lines:
            line = raw.rstrip("\n").rstrip("\r")
            if not line.endswith("\\ "):
                line = line.rstrip(" ")
            if not line or line.startswith("#"):
                continue
            negated = line.startswith("!")
            if negated:
                line = line[1:]
            elif line.startswith("\\"):
                line = line[1:]
            dir_only = line.endswith("/")
            line = line.rstrip("/")
            if not line:
                continue
            anchored = "/" in line
            line = line.lstrip("/")
            regex = _glob_regex(line) if anchored else "(?:.*/)?" + _glob_regex(line)
            try:
                self.rules.append(_Rule(base, re.compile(regex + r"\Z", re.S), negated, dir_only))
            except re.error:
                continue  # a pattern git would not understand either: it matches nothing

    def read(self, folder: Path, base: str) -> None:
        try:
            text = (folder / ".gitignore").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return
        self.add(base, text.split("\n"))

    def matches(self, rel: str, is_dir: bool) -> bool:
        hit = False
        for r in self.rules:
            if r.base:
                if not rel.startswith(r.base + "/"):
                    continue
                sub = rel[len(r.base) + 1:]
            else:
                sub = rel
            if r.dir_only and not is_dir:
                continue
            if r.regex.match(sub):
                hit = not r.negated
        return hit


# ---- the project's own setting ---------------------------------------------------------------
def project_excludes(root: Path) -> tuple[list[str], list[Diagnostic]]:
    """``exclude`` patterns from ``[tool.specdec-guide.validate]`` in ``root/pyproject.toml``."""
    import tomllib

    path = root / "pyproject.toml"
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return [], []
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        m = re.search(r"\(at line (\d+), column (\d+)\)", str(err))
        line, col = (int(m.group(1)), int(m.group(2))) if m else (1, 1)
        msg = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(err))
        return [], [Diagnostic("pyproject.toml", line, col, f"TOML syntax error: {msg}")]
    table = data
    for key in SETTINGS_TABLE.split("."):
        table = table.get(key) if isinstance(table, dict) else None
    if not isinstance(table, dict) or "exclude" not in table:
        return [], []
    value = table["exclude"]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        line = next((n for n, t in enumerate(text.split("\n"), 1) if re.match(r"\s*exclude\s*=", t)), 1)
        return [], [Diagnostic("pyproject.toml", line, 1,
                               f"[{SETTINGS_TABLE}] exclude must be a list of path patterns (strings)")]
    return list(value), []


# ---- git ------------------------------------------------------------------------------------
class _Git:
    """``git check-ignore`` for one work tree; None from :meth:`ignored` when git cannot answer."""

    def __init__(self, top: Path):
        self.top = top

    @staticmethod
    def toplevel(folder: Path) -> Path | None:
        git = shutil.which("git")
        if not git:
            return None
        try:
            proc = subprocess.run([git, "-C", str(folder), "rev-parse", "--show-toplevel"],
                                  capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.SubprocessError):
            return None
        out = proc.stdout.strip()
        return Path(out).resolve() if proc.returncode == 0 and out else None

    def ignored(self, rels: list[str]) -> set[str] | None:
        if not rels:
            return set()
        try:
            proc = subprocess.run([shutil.which("git") or "git", "-C", str(self.top), "check-ignore", "--stdin", "-z"],
                                  input="\0".join(rels) + "\0", capture_output=True, text=True, timeout=120)
        except (OSError, subprocess.SubprocessError):
            return None
        if proc.returncode not in (0, 1):
            return None
        return {p for p in proc.stdout.split("\0") if p}


def _rel(path: Path, base: Path) -> str | None:
    try:
        rel = path.relative_to(base).as_posix()
    except ValueError:
        return None
    return "" if rel == "." else rel


def walk(top: Path, root: Path, excludes: list[str] | None = None) -> list[Path]:
    """Every file below ``top`` that the project calls its own (see the module's docstring), sorted."""
    top_abs = Path(os.path.abspath(top))
    top_real = top_abs.resolve()
    root_abs = Path(os.path.abspath(root))
    # Patterns are relative to the project root; a folder outside it is its own anchor.
    anchor = root_abs if (top_abs == root_abs or root_abs in top_abs.parents) else top_abs
    exclude = GitignoreRules()
    if anchor == root_abs:
        exclude.add("", excludes or [])
    git_top = _Git.toplevel(top_abs)
    git = _Git(git_top) if git_top is not None else None
    patterns = GitignoreRules()  # read always: the answer when git is absent or refuses
    for folder in reversed([p for p in top_abs.parents if p == anchor or anchor in p.parents]):
        patterns.read(folder, _rel(folder, anchor) or "")  # .gitignore files above the named folder
    out: list[Path] = []
    level = [top_abs]
    while level:
        entries: list[tuple[Path, bool]] = []
        for folder in level:
            patterns.read(folder, _rel(folder, anchor) or "")
            try:
                with os.scandir(folder) as it:
                    children = sorted(it, key=lambda e: e.name)
            except OSError:
                continue
            for e in children:
                try:
                    is_dir = e.is_dir(follow_symlinks=False)
                    is_link = e.is_symlink()
                except OSError:
                    continue
                path = Path(e.path)
                if is_dir and (e.name in PRUNED_DIRS or is_environment(path)):
                    continue
                if is_link and path.is_dir():
                    continue  # not walked into, like git; a linked environment is skipped with it
                if not is_dir and e.name.startswith("."):
                    continue  # dotfiles (.gitignore, .pre-commit-config.yaml...) configure tools
                entries.append((path, is_dir))
        kept = [(p, d) for p, d in entries if not exclude.matches(_rel(p, anchor) or "", d)]
        kept = _not_ignored(kept, top_abs, top_real, anchor, git, patterns)
        out.extend(p for p, d in kept if not d)
        level = [p for p, d in kept if d]
    return sorted(top / p.relative_to(top_abs) for p in out)  # in the form the caller named the folder


def _not_ignored(entries: list, top_abs: Path, top_real: Path, anchor: Path, git: _Git | None,
                 patterns: GitignoreRules) -> list:
    if git is not None:
        rels = {}
        for path, _ in entries:
            r = _rel(top_real / path.relative_to(top_abs), git.top)
            if r is not None:
                rels[r] = path
        ignored = git.ignored(sorted(rels))
        if ignored is not None:
            drop = {rels[r] for r in ignored if r in rels}
            return [(p, d) for p, d in entries if p not in drop]
        # git refused (a path inside a submodule, a broken index): the .gitignore files decide
    return [(p, d) for p, d in entries if not patterns.matches(_rel(p, anchor) or p.name, d)]
