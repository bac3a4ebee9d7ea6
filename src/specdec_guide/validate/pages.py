"""Rule 5, one source for every snippet: the fenced code blocks of docs/**/*.md.

Every fenced block must either

* include its content with pymdownx.snippets, and nothing else::

      ```bash
      --8<-- "snippets/serve/ngram.sh"
      ```

  (the block form, ``--8<--`` / one path per line / ``--8<--``, is accepted too). The path is
  relative to the repository root, lies under ``snippets/`` or ``model_repo_templates/``, exists,
  and is verified: a validated kind or listed in ``snippets/VERIFIED_BY.yaml``; or
* be marked as output by the HTML comment ``<!-- output -->`` on the line right before the
  fence (blank lines between are allowed). Output is what a command printed, never something
  the reader types.

A ``<!-- specdec-guide: track-tabs LANG PATH -->`` marker (one tab per track, written by the site
hook) counts as one include per track: every track must have the file.

``mermaid`` blocks are diagrams, not code, and are exempt. Anything else is an error at the
fence's line.

Other Markdown (a README, the pages of a project that is not laid out like this guide) is not held
to that rule: :func:`check_commands` reads its shell fences (``bash``, ``sh``, ``console``...) as
commands, with the shell checker, so a TensorRT-LLM / Triton command shown there is checked flag by
flag and what a fence shows of a program's output is recognised as such (see
:mod:`specdec_guide.validate.shell`).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Callable

INCLUDE_ROOTS = ("snippets/", "model_repo_templates/")
OUTPUT_MARKER = re.compile(r"^\s*<!--\s*output\b[^>]*-->\s*$")
_OPEN = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([^`]*)$")
_INCLUDE = re.compile(r"""^\s*-{1,}8<-{1,}\s+(["']?)(.+?)\1\s*$""")
_BLOCK_MARK = re.compile(r"^\s*-{1,}8<-{1,}\s*$")
_RANGE = re.compile(r"(:-?\d*)+$|:[A-Za-z_][\w-]*$")
EXEMPT_LANGS = {"mermaid"}
SHELL_LANGS = {"bash", "sh", "shell", "zsh", "console", "shell-session", "shellsession", "terminal"}


def fenced_blocks(text: str):
    """Yield ``(open_line, indent, info, body_lines[(line_no, text)], closed, preceded_by_output)``."""
    lines = text.split("\n")
    i = 0
    last_nonblank = ""
    while i < len(lines):
        m = _OPEN.match(lines[i])
        if not m:
            if lines[i].strip():
                last_nonblank = lines[i]
            i += 1
            continue
        indent, fence, info = m.group(1), m.group(2), m.group(3).strip()
        close = re.compile(r"^\s*" + re.escape(fence[0]) + "{" + str(len(fence)) + r",}\s*$")
        start = i
        body = []
        i += 1
        while i < len(lines) and not close.match(lines[i]):
            body.append((i + 1, lines[i]))
            i += 1
        closed = i < len(lines)
        yield start + 1, len(indent), info, body, closed, bool(OUTPUT_MARKER.match(last_nonblank))
        last_nonblank = lines[start]
        i += 1


def include_paths(body: list) -> list | None:
    """``[(line, col, path)]`` when the block holds only includes, else None."""
    paths, in_block = [], False
    for ln, raw in body:
        if not raw.strip():
            continue
        if _BLOCK_MARK.match(raw):
            in_block = not in_block
            continue
        if in_block:
            p = raw.strip()
            if not p.startswith(";"):
                paths.append((ln, len(raw) - len(raw.lstrip()) + 1, p))
            continue
        m = _INCLUDE.match(raw)
        if not m:
            return None
        paths.append((ln, raw.index(m.group(2)) + 1, m.group(2)))
    return paths or None


def check(text: str, root: Path, is_verified: Callable[[Path], bool]) -> tuple[list, int]:
    """``(findings, fenced blocks seen)`` for one page."""
    out, blocks = [], 0
    for line, indent, info, body, closed, is_output in fenced_blocks(text):
        blocks += 1
        col = indent + 1
        if not closed:
            out.append((line, col, "code fence is never closed"))
            continue
        lang = info.split()[0].lstrip(".{").rstrip("}") if info else ""
        if lang in EXEMPT_LANGS or is_output:
            continue
        paths = include_paths(body)
        if paths is None:
            out.append((line, col, "inline code block: include it from snippets/ or model_repo_templates/ "
                                   "with --8<-- \"path\", or mark output with <!-- output --> before the fence"))
            continue
        for ln, pc, raw in paths:
            out.extend((ln, pc, msg) for msg in _check_include(raw, root, is_verified))
    out.extend(_check_track_tabs(text, root, is_verified))
    return sorted(out), blocks


def _check_track_tabs(text: str, root: Path, is_verified) -> list:
    """A ``track-tabs`` marker (specdec_guide.site.version_tables) becomes one include per track:
    each track must have the file, and each file is checked as an include is."""
    from specdec_guide import markers
    from specdec_guide.site.version_tables import tab_files

    out = []
    for m in markers.find(text, "track-tabs", "page"):
        line, path = m.line, m.args["path"]
        col = text[m.start:m.end].index(path, m.col) + 1
        if "{track}" not in path:
            out.append((line, col, f"track-tabs path '{path}' has no {{track}}: it would show one file in every tab"))
            continue
        for track, rel in tab_files(path):
            if not (root / rel).is_file():
                out.append((line, col, f"track {track.id} has no '{rel}': every track gets a tab here (add the file)"))
            else:
                out.extend((line, col, msg) for msg in _check_include(rel, root, is_verified))
    return out


def _check_include(raw: str, root: Path, is_verified) -> list[str]:
    if "://" in raw:
        return [f"include '{raw}' is a URL; snippets must live in this repository"]
    rel = _RANGE.sub("", raw) if not Path(root, raw).exists() else raw
    if not rel.startswith(INCLUDE_ROOTS):
        return [f"include '{raw}' is outside {' or '.join(INCLUDE_ROOTS)}"]
    path = root / rel
    if not path.exists():
        return [f"included file '{rel}' does not exist"]
    if not path.is_file():
        return [f"included path '{rel}' is not a file"]
    if not is_verified(path):
        return [f"included file '{rel}' is not verified: no test in snippets/VERIFIED_BY.yaml runs it and "
                f"`specdec-guide validate` has nothing of TRT-LLM in it to check"]
    return []


def fence_lang(info: str) -> str:
    return info.split()[0].lstrip(".{").rstrip("}").lower() if info else ""


def check_commands(text: str, track, registry) -> tuple[list, int, int]:
    """``(findings, invocations checked, shell fences)`` for Markdown that is not a guide page."""
    from specdec_guide.validate import shell
    from specdec_guide.validate.notes import note

    out, count, fences = [], 0, 0
    for line, indent, info, body, closed, _out in fenced_blocks(text):
        if fence_lang(info) not in SHELL_LANGS:
            continue
        if not closed:
            out.append(note(line, indent + 1, "code fence is never closed: its commands were not checked"))
            continue
        fences += 1
        lines = [raw[indent:] if raw[:indent].strip() == "" else raw.lstrip() for _, raw in body]
        shift = [len(raw) - len(ln) for (_, raw), ln in zip(body, lines)]
        found, n, _ = shell.check("\n".join(lines) + "\n", track, registry)
        count += n
        for ln, col, msg in found:
            i = min(max(ln - 1, 0), len(body) - 1) if body else 0
            out.append((body[i][0] if body else line, col + (shift[i] if body else 0), msg))
    return out, count, fences
