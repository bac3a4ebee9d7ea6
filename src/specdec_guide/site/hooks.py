"""MkDocs hooks: what the site build adds on top of the Markdown pages.

- ``speculative_decoding/verification.md`` is generated at build time from
  ``specdec-guide coverage``, so the page that tells readers how each snippet is verified
  can never drift from the checks that really run.
- ``speculative_decoding/migration.md`` carries a marker that is replaced by the migration table,
  rendered from ``snippets/migration/map.yaml`` (the same data tests/test_migration.py checks).
- ``speculative_decoding/versions.md``: its LLM-API tables (``decoding_type`` spellings, draft-model
  key, rule counts) are rendered from the schema snapshots (:mod:`specdec_guide.site.version_tables`).
- ``speculative_decoding/calculator.md``: its data (the cost model's tables, examples, published
  figures) and its table of published figures are written in by :mod:`specdec_guide.site.calculator`.
- ``speculative_decoding/support.md``: the support matrices of each track, from
  ``schemas/<track>/support.yaml`` (:mod:`specdec_guide.site.support`).
- ``speculative_decoding/field_notes.md``: the symptom index, the error index and the notes, from
  ``schemas/field_notes/`` (:mod:`specdec_guide.field_notes`).
- Each notebook page gets a "last verified" banner from the provenance stamp that
  ``make regen WHAT=notebooks`` writes (or, for GPU notebooks, the container and TRT-LLM version the
  notebook declares).
- Formulas in notebook pages become MathML at build time (``latex2mathml``), which browsers
  draw natively: mkdocs-jupyter leaves the TeX for a MathJax script whose ``src`` it leaves
  empty, and the site loads nothing from outside.
- Notebook pages get what MkDocs gives Markdown pages and mkdocs-jupyter does not: links to
  ``.md``/``.ipynb`` files become links to their pages (a missing target is a warning, which
  ``--strict`` turns into a failed build), and the table of contents is rebuilt from the rendered
  headings, so it keeps their inline code and its anchors are the headings' own ids
  (mkdocs-jupyter's drops the code, from the titles and from the anchors, which then lead nowhere).
- Long inline code gets break points after ``_``, ``.``, ``/`` and ``,`` (and at its spaces), and
  only there: a table column narrower than an identifier wraps it at a sensible point instead of
  growing past the page or breaking it at a hyphen or inside a word (docs/assets/extra.css).
"""

from __future__ import annotations

import html
import json
import logging
import posixpath
import re
from pathlib import Path

from mkdocs.structure.files import File

VERIFICATION_PAGE = "speculative_decoding/verification.md"
# Under "mkdocs.", so that `mkdocs build --strict` counts its warnings.
log = logging.getLogger("mkdocs.hooks.specdec_guide")


def on_files(files, config):
    from specdec_guide.coverage import markdown_page

    root = Path(config["config_file_path"]).parent
    files.append(File.generated(config, VERIFICATION_PAGE, content=markdown_page(root)))
    return files


def on_page_markdown(markdown, page, config, files):
    from mkdocs.exceptions import PluginError

    from specdec_guide.diagnostics import UserError

    src = page.file.abs_src_path
    if src and not src.endswith(".md"):
        return markdown  # a notebook page: its cells are checked by the validator, not expanded
    root = Path(config["config_file_path"]).parent
    shown = f"{Path(config['docs_dir']).name}/{page.file.src_uri}"
    try:
        return expand_markers(markdown, shown, root)
    except UserError as err:
        raise PluginError(str(err)) from None


def expand_markers(markdown: str, page: str = "page", root: Path | None = None, registry=None) -> str:
    """The page with each page marker (:data:`specdec_guide.markers.MARKERS` with a ``render``)
    replaced by what its renderer writes, indented as the marker is. A marker line that is unknown
    or not written as its syntax raises :class:`UserError` ``page:line:col: ...`` (one line each),
    so the build fails on it instead of leaving an HTML comment where content should be."""
    from specdec_guide import markers
    from specdec_guide.diagnostics import UserError

    problems = markers.problems(markdown, "page")
    if problems:
        raise UserError("\n".join(f"{page}:{p.line}:{p.col}: {p.message}" for p in problems))
    out, last = [], 0
    context = {"root": root, "registry": registry}
    for found in markers.page_markers(markdown):
        text = _render(markers.MARKERS[found.name].render, found.args, context)
        if found.indent:
            text = "\n".join(found.indent + ln if ln.strip() else "" for ln in text.splitlines())
        out += [markdown[last:found.start], text]
        last = found.end
    return "".join(out) + markdown[last:]


def _render(target: str, args: dict, context: dict) -> str:
    """Call a marker's renderer (``module:function``) with the marker's arguments, and the
    repository root and the track registry where its signature takes them (one registry a page)."""
    import importlib
    import inspect

    module, name = target.split(":")
    fn = getattr(importlib.import_module(module), name)
    params = inspect.signature(fn).parameters
    if "registry" in params and context["registry"] is None:
        from specdec_guide.releases.tracks import Registry

        context["registry"] = Registry()
    extra = {k: context[k] for k in ("root", "registry") if k in params and context[k] is not None}
    return fn(**args, **extra)


def _banner(meta: dict) -> str:
    tier = meta.get("tier", "cpu")
    run = meta.get("last_run")
    if tier == "gpu":
        written = (f"Written for <code>{html.escape(str(meta.get('container')))}</code> with TensorRT-LLM "
                   f"{html.escape(str(meta.get('trtllm_version')))}.")
        if run:
            title = f"Run on a GPU {html.escape(str(run.get('date')))}"
            body = (f"{written} The outputs below come from <code>make test-gpu</code> on "
                    f"{html.escape(str(run.get('gpu')))} (driver {html.escape(str(run.get('driver')))}) in "
                    f"<code>{html.escape(str(run.get('container')))}</code>, in {run.get('duration_s')} s.")
            kind = "success"
        else:
            # Said plainly: nothing on this page has run on a GPU yet, so it shows no outputs.
            title = "Not yet run on a GPU"
            body = (f"{written} This notebook has not been run on a GPU: it carries no outputs. On every "
                    "commit each of its code cells is checked statically against the schema snapshot of "
                    "that release (commands and flags, LLM API keywords, YAML and config.pbtxt keys); "
                    "<code>make test-gpu</code> executes it in that container.")
            kind = "warning"
    elif run:
        versions = ", ".join(f"{k} {v}" for k, v in run.get("versions", {}).items())
        title = f"Last verified {html.escape(run['date'])}"
        body = (f"Every output below comes from executing this notebook on {html.escape(run['where'])} "
                f"in {run.get('duration_s')} s ({html.escape(versions)}). The test suite re-runs it on every commit.")
        kind = "success"
    else:
        title, body, kind = "Not yet run", "This notebook has no stored run.", "failure"
    return f'<div class="admonition {kind}"><p class="admonition-title">{title}</p><p>{body}</p></div>\n'


# Display math ($$...$$) first, then inline math ($...$, not "$ " and not escaped).
_DISPLAY_MATH = re.compile(r"\$\$(.+?)\$\$", re.S)
_INLINE_MATH = re.compile(r"(?<![\\$])\$(?![\s$])([^$<>]+?)(?<!\s)\$(?!\$)")
_MARKDOWN_CELL = re.compile(r'(<div class="[^"]*jp-RenderedMarkdown[^"]*"[^>]*>)(.*?)(</div>)', re.S)
_EMPTY_MATHJAX = re.compile(r'<script src="">\s*</script>')


def math_to_mathml(cell_html: str) -> str:
    """TeX in a rendered Markdown cell -> MathML (display and inline)."""
    from latex2mathml.converter import convert

    def tex(m):
        return html.unescape(m.group(1)).strip()

    cell_html = _DISPLAY_MATH.sub(lambda m: convert(tex(m), display="block"), cell_html)
    return _INLINE_MATH.sub(lambda m: convert(tex(m)), cell_html)


# Inline code (not inside <pre>) with plain text only, long enough to need break points.
_PRE_BLOCK = re.compile(r"(<pre\b.*?</pre>)", re.S)
_INLINE_CODE = re.compile(r"<code>([^<]{%d,})</code>" % 16)
_BREAK_AFTER = re.compile(r"(?<=[_./,])(?=[^_./,])")


def code_break_points(page_html: str) -> str:
    """``<code>sampling_param_max_tokens</code>`` -> segments that never break inside, with a
    break opportunity (``<wbr>``) after each ``_ . / ,`` and at spaces (CSS: code.sg-breaks)."""

    def segments(m):
        text = m.group(1)
        words = []
        for word in text.split(" "):
            parts = [p for p in _BREAK_AFTER.split(word) if p]
            words.append("<wbr>".join(f"<span>{p}</span>" for p in parts))
        return '<code class="sg-breaks">' + " ".join(words) + "</code>"

    chunks = _PRE_BLOCK.split(page_html)
    return "".join(c if i % 2 else _INLINE_CODE.sub(segments, c) for i, c in enumerate(chunks))


_HREF = re.compile(r'href="([^"#:?]+\.(?:md|ipynb))(#[^"]*)?"')


def notebook_links(page_html: str, page, files) -> str:
    """Relative links to .md/.ipynb files in a notebook page -> links to their pages, as MkDocs does
    for Markdown pages (mkdocs-jupyter leaves them as written, so on the site they lead nowhere)."""

    def rewrite(m):
        target = posixpath.normpath(posixpath.join(posixpath.dirname(page.file.src_uri), m.group(1)))
        found = files.get_file_from_path(target)
        if found is None:
            log.warning("Doc file '%s' contains a link '%s', but the target '%s' is not found among "
                        "documentation files.", page.file.src_uri, m.group(1), target)
            return m.group(0)
        return f'href="{found.url_relative_to(page.file)}{m.group(2) or ""}"'

    return _HREF.sub(rewrite, page_html)


_HEADING = re.compile(r'<h([1-6]) id="([^"]+)"[^>]*>(.*?)</h\1>', re.S)
_ANCHOR_LINK = re.compile(r'<a class="anchor-link"[^>]*>.*?</a>', re.S)
_TAG = re.compile(r"<[^>]+>")


def notebook_toc(page_html: str):
    """The page's table of contents from its rendered headings: their ids and their whole text."""
    from mkdocs.structure.toc import get_toc

    root: list[dict] = []
    stack: list[dict] = []
    for level, anchor, inner in _HEADING.findall(page_html):
        text = html.unescape(_TAG.sub("", _ANCHOR_LINK.sub("", inner))).strip()
        token = {"level": int(level), "id": anchor, "name": html.escape(text, quote=False), "children": []}
        while stack and stack[-1]["level"] >= token["level"]:
            stack.pop()
        (stack[-1]["children"] if stack else root).append(token)
        stack.append(token)
    return get_toc(root)


def on_page_content(page_html, page, config, files):
    src = page.file.abs_src_path
    if not src or not src.endswith(".ipynb"):
        return code_break_points(page_html)
    from specdec_guide.notebooks import track_meta

    meta = json.loads(Path(src).read_text(encoding="utf-8")).get("metadata", {}).get("specdec_guide", {})
    meta = track_meta(meta, src)  # the header names its track; container and version come from tracks.yaml
    page_html = _EMPTY_MATHJAX.sub("", page_html)
    page_html = _MARKDOWN_CELL.sub(lambda m: m.group(1) + math_to_mathml(m.group(2)) + m.group(3), page_html)
    page_html = notebook_links(page_html, page, files)
    page.toc = notebook_toc(page_html)
    return _banner(meta) + code_break_points(page_html)
