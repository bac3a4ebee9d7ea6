"""The ``specdec-guide:`` markers: one grammar, one table, read by everything that reads a marker.

A marker is a comment line of its own::

    # specdec-guide: NAME[ARGUMENTS]            (YAML, shell, Python, a notebook cell; or // ...)
    <!-- specdec-guide: NAME[ ARGUMENTS] -->    (a page; an HTML comment in any file)

:data:`MARKER_RE` finds every such line; :data:`MARKERS` says, per name, how it is written, where
it is read (``snippet``: a file under snippets/ or model_repo_templates/ or a file named to the
validator; ``notebook``: a jupytext notebook source; ``page``: Markdown), what it does, and the
pattern of its arguments (the named groups are what a reader gets). A page marker also names the
function that renders it, as ``module:function`` (the site hook calls it: a name, not an import,
because the renderers read data through modules that read markers). A line that says
``specdec-guide:`` with a name the table does not have, in a place where that name is not read, or
with arguments its pattern refuses is a :func:`problems` finding: ``specdec-guide validate`` and
the site build fail on it, so a typo never leaves a marker silently ignored.

In Markdown only the HTML-comment form is a marker: ``# ...`` there is a heading.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

PREFIX = "specdec-guide:"
#: The one grammar: a line holding only a comment opener, ``specdec-guide:``, a name, its
#: arguments and, for an HTML comment, ``-->``. ``# #`` (a jupytext Markdown cell) counts as ``#``.
MARKER_RE = re.compile(
    r"^(?P<indent>[ \t]*)(?P<open><!--|#|//)[#/ \t]*specdec-guide:[ \t]*(?P<name>[A-Za-z][\w-]*)?"
    r"(?P<args>[^\n]*?)[ \t]*(?P<close>-->)?[ \t]*\r?$", re.M)

PLACES = ("snippet", "notebook", "page")


@dataclass(frozen=True)
class Marker:
    name: str
    syntax: str  # how it is written
    where: tuple[str, ...]  # the places (PLACES) where it is read
    says: str  # what it does, one sentence
    args: str = r"[ \t]*"  # pattern of what follows the name (matched whole)
    render: str | None = None  # page markers: "module:function" that writes what replaces the line
    html: bool = False  # written as an HTML comment (page markers)

    @property
    def pattern(self) -> re.Pattern:
        return _compiled(self.args)


_PATTERNS: dict[str, re.Pattern] = {}


def _compiled(args: str) -> re.Pattern:
    if args not in _PATTERNS:
        _PATTERNS[args] = re.compile(args)
    return _PATTERNS[args]


_OPTIONAL_NOTE = r"(?:[ \t]+.*)?"  # a comment after the value, separated by blanks

#: Every marker, by name.
MARKERS: dict[str, Marker] = {m.name: m for m in (
    Marker("trtllm", "# specdec-guide: trtllm=<track id or alias>", ("snippet", "notebook", "page"),
           "the TensorRT-LLM track (schemas/tracks.yaml) the file, or a notebook cell, is checked against; "
           "in a model.yaml, the release the CPU stand-in answers as",
           r"[ \t]*=[ \t]*(?P<value>[\w.\-]+)" + _OPTIONAL_NOTE),
    Marker("engine", "# specdec-guide: engine=cpu", ("snippet", "notebook"),
           "a model.yaml written for the guide's CPU reference engine (cpu_drafter allowed)",
           r"[ \t]*=[ \t]*(?P<value>cpu)" + _OPTIONAL_NOTE),
    Marker("llm-api-yaml", "# specdec-guide: llm-api-yaml", ("snippet", "notebook"),
           "check this YAML file as an LLM API options file, when its content says too little",
           _OPTIONAL_NOTE),
    Marker("unchecked", "# specdec-guide: unchecked: <reason>", ("notebook",),
           "a notebook cell no checker can read, with the reason (its first line, or the line after "
           "its cell magic)",
           r"[ \t]*:?(?P<reason>.*)"),
    Marker("tracks-table", "<!-- specdec-guide: tracks-table -->", ("page",),
           "one row per track of schemas/tracks.yaml", render="specdec_guide.site.version_tables:tracks_table",
           html=True),
    Marker("llm-api-tables", "<!-- specdec-guide: llm-api-tables -->", ("page",),
           "the decoding_type spellings, draft-model keys and rule counts of each track's snapshot",
           render="specdec_guide.site.version_tables:markdown", html=True),
    Marker("track-tabs", "<!-- specdec-guide: track-tabs LANG PATH -->", ("page",),
           "one tab per track including snippets/PATH with {track} replaced by the track's id",
           r"[ \t]+(?P<lang>[\w-]+)[ \t]+(?P<path>[\w.{}/-]+)",
           render="specdec_guide.site.version_tables:track_tabs", html=True),
    Marker("migration-table", "<!-- specdec-guide: migration-table -->", ("page",),
           "the migration map of snippets/migration/map.yaml",
           render="specdec_guide.migration:markdown_table", html=True),
    Marker("migration-request-inputs", "<!-- specdec-guide: migration-request-inputs -->", ("page",),
           "the request inputs of each model the migration map compares",
           render="specdec_guide.migration:markdown_inputs", html=True),
    Marker("field-notes", "<!-- specdec-guide: field-notes -->", ("page",),
           "the symptom index, the error index and the notes of schemas/field_notes/",
           render="specdec_guide.field_notes:markdown", html=True),
    Marker("support-matrices", "<!-- specdec-guide: support-matrices -->", ("page",),
           "the support matrices of each track (schemas/<track>/support.yaml)",
           render="specdec_guide.site.support:markdown", html=True),
    Marker("calculator-data", "<!-- specdec-guide: calculator-data -->", ("page",),
           "the calculator's data (cost model, examples, published figures) as a JSON script",
           render="specdec_guide.site.calculator:data_script", html=True),
    Marker("published-figures", "<!-- specdec-guide: published-figures -->", ("page",),
           "the table of published figures the calculator compares with",
           render="specdec_guide.site.calculator:figures_table", html=True),
    Marker("markers-table", "<!-- specdec-guide: markers-table -->", ("page",),
           "this table: every marker of specdec_guide.markers", render="specdec_guide.markers:markdown_table",
           html=True),
)}


@dataclass(frozen=True)
class Found:
    """One marker line: where it is (1-based line, column of its name) and its arguments."""

    name: str
    line: int
    col: int
    args: dict
    indent: str
    start: int  # offsets of the whole line in the text
    end: int


@dataclass(frozen=True)
class Problem:
    line: int
    col: int
    message: str

    def __iter__(self):  # (line, col, message), as the checkers' findings are
        return iter((self.line, self.col, self.message))


def known(place: str | None = None) -> list[str]:
    """The names read in ``place`` (every name when None), sorted."""
    return sorted(n for n, m in MARKERS.items() if place is None or place in m.where)


def _lines(text: str, place: str | None):
    for m in MARKER_RE.finditer(text):
        if place == "page" and m["open"] != "<!--":
            continue  # a Markdown heading, not a comment
        yield m


def _position(text: str, m: re.Match) -> tuple[int, int]:
    line = text.count("\n", 0, m.start()) + 1
    at = m.start("name") if m["name"] else m.start() + m.group(0).index(PREFIX) + len(PREFIX)
    return line, at - m.start() + 1


def _parse(m: re.Match) -> dict | None:
    spec = MARKERS.get(m["name"] or "")
    if spec is None:
        return None
    if spec.html and not (m["open"] == "<!--" and m["close"]):
        return None
    if not spec.html and m["close"] and m["open"] != "<!--":
        return None
    got = spec.pattern.fullmatch(m["args"])
    return {k: v for k, v in got.groupdict().items() if v is not None} if got else None


def python_comment_lines(text: str) -> set[int] | None:
    """The lines of Python source that hold a comment (a marker in a string or docstring is an
    example, not a marker); None when the source does not tokenize (then every line counts)."""
    import io
    import tokenize

    try:
        return {tok.start[0] for tok in tokenize.generate_tokens(io.StringIO(text).readline)
                if tok.type == tokenize.COMMENT}
    except (tokenize.TokenError, SyntaxError):
        return None


def problems(text: str, place: str, lines: set[int] | None = None) -> list[Problem]:
    """Every marker line of ``text`` that is unknown, out of place, or not written as its syntax
    (only on ``lines``, when given: the comment lines of a Python file)."""
    out = []
    for m in _lines(text, place):
        line, col = _position(text, m)
        if lines is not None and line not in lines:
            continue
        name = m["name"] or ""
        spec = MARKERS.get(name)
        if spec is None:
            out.append(Problem(line, col, f"unknown marker '{name}' (known: {', '.join(known(place))})"))
        elif place not in spec.where:
            out.append(Problem(line, col, f"marker '{name}' is not read in a {place} (it is read in: "
                                          f"{', '.join(p for p in PLACES if p in spec.where)})"))
        elif _parse(m) is None:
            out.append(Problem(line, col, f"marker '{name}' is written `{spec.syntax}`"))
    return out


def find(text: str, name: str, place: str | None = None) -> list[Found]:
    """Every well-formed ``name`` marker of ``text``, in order."""
    if name not in MARKERS:
        raise KeyError(f"no marker '{name}' (known: {', '.join(known())})")
    out = []
    for m in _lines(text, place):
        if m["name"] != name:
            continue
        args = _parse(m)
        if args is not None:
            out.append(Found(name, *_position(text, m), args, m["indent"], m.start(), m.end()))
    return out


def first(text: str, name: str, place: str | None = None) -> Found | None:
    found = find(text, name, place)
    return found[0] if found else None


def value(text: str, name: str, place: str | None = None) -> str | None:
    """The value of the first well-formed ``name=VALUE`` marker (``trtllm``, ``engine``), else None."""
    found = first(text, name, place)
    return found.args.get("value") if found else None


def parse_line(line: str) -> Found | None:
    """The marker a single line holds, when it is one well-formed marker."""
    m = MARKER_RE.fullmatch(line.rstrip("\n"))
    if not m or m["name"] not in MARKERS:
        return None
    args = _parse(m)
    return None if args is None else Found(m["name"], 1, _position(line, m)[1], args, m["indent"], 0, len(line))


def page_markers(text: str) -> list[Found]:
    """Every well-formed page marker (one that a renderer replaces) of a page, in order."""
    out = []
    for m in _lines(text, "page"):
        spec = MARKERS.get(m["name"] or "")
        if spec is not None and spec.render:
            args = _parse(m)
            if args is not None:
                out.append(Found(spec.name, *_position(text, m), args, m["indent"], m.start(), m.end()))
    return out


def html_marker(name: str, *args: str) -> str:
    """The line that writes page marker ``name`` with ``args`` (as a page carries it)."""
    spec = MARKERS[name]
    if not spec.html:
        raise ValueError(f"marker '{name}' is a comment marker: `{spec.syntax}`")
    return f"<!-- {PREFIX} {' '.join((name, *args))} -->"


def comment(name: str, value: str | None = None, opener: str = "#") -> str:
    """The comment line that writes marker ``name`` (``name=value`` when it takes a value)."""
    spec = MARKERS[name]
    text = f"{opener} {PREFIX} {name}" + (f"={value}" if value is not None else "")
    if spec.html or parse_line(text) is None:
        raise ValueError(f"marker '{name}' is written `{spec.syntax}`")
    return text


def markdown_table() -> str:
    """Every marker as a Markdown table (the contributors page includes it through its own marker)."""
    rows = ["| Marker | Read in | What it does |", "|---|---|---|"]
    rows += [f"| `{m.syntax}` | {', '.join(p for p in PLACES if p in m.where)} | {m.says} |" for m in MARKERS.values()]
    return "\n".join(rows) + "\n"
