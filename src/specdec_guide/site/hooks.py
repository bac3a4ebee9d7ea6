"""MkDocs hooks: what the site build adds on top of the Markdown pages.

- ``speculative_decoding/verification.md`` is generated at build time from
  ``specdec-guide coverage``, so the page that tells readers how each snippet is verified
  can never drift from the checks that really run.
- ``speculative_decoding/migration.md`` carries a marker that is replaced by the migration table,
  rendered from ``snippets/migration/map.yaml`` (the same data tests/test_migration.py checks).
- ``speculative_decoding/versions.md``: its LLM-API tables (``decoding_type`` spellings, draft-model
  key, rule counts) are rendered from the schema snapshots (:mod:`specdec_guide.site.version_tables`).
- Each notebook page gets a "last verified" banner from the provenance stamp that
  ``make notebooks`` writes (or, for GPU notebooks, the container and TRT-LLM version the
  notebook declares).
- Formulas in notebook pages become MathML at build time (``latex2mathml``), which browsers
  draw natively: mkdocs-jupyter leaves the TeX for a MathJax script whose ``src`` it leaves
  empty, and the site loads nothing from outside.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

from mkdocs.structure.files import File

VERIFICATION_PAGE = "speculative_decoding/verification.md"


def on_files(files, config):
    from specdec_guide.coverage import markdown_page

    root = Path(config["config_file_path"]).parent
    files.append(File.generated(config, VERIFICATION_PAGE, content=markdown_page(root)))
    return files


def on_page_markdown(markdown, page, config, files):
    from specdec_guide import migration
    from specdec_guide.site.version_tables import expand

    markdown = expand(markdown)
    if migration.TABLE_MARKER not in markdown and migration.INPUTS_MARKER not in markdown:
        return markdown
    root = Path(config["config_file_path"]).parent
    markdown = markdown.replace(migration.TABLE_MARKER, migration.markdown_table(root))
    return markdown.replace(migration.INPUTS_MARKER, migration.markdown_inputs(root))


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


def on_page_content(page_html, page, config, files):
    src = page.file.abs_src_path
    if not src or not src.endswith(".ipynb"):
        return page_html
    meta = json.loads(Path(src).read_text(encoding="utf-8")).get("metadata", {}).get("specdec_guide", {})
    page_html = _EMPTY_MATHJAX.sub("", page_html)
    page_html = _MARKDOWN_CELL.sub(lambda m: m.group(1) + math_to_mathml(m.group(2)) + m.group(3), page_html)
    return _banner(meta) + page_html
