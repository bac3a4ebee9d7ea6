"""The specdec-guide: markers: one grammar (specdec_guide.markers), and an unknown, misplaced or
malformed marker fails the site build and ``specdec-guide validate`` with ``path:line:col``."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from specdec_guide import markers
from specdec_guide.diagnostics import UserError
from specdec_guide.site import hooks
from specdec_guide.validate import kinds
from specdec_guide.validate.runner import validate_paths

ROOT = Path(__file__).resolve().parents[1]
PAGE_KNOWN = ", ".join(markers.known("page"))
SNIPPET_KNOWN = ", ".join(markers.known("snippet"))


def test_every_marker_of_the_repository_is_known_and_well_formed():
    """What the validator reads: the pages, and the snippets, templates and notebooks (not the files
    that describe them, such as snippets/PER_TRACK.yaml, whose templates hold {{id}})."""
    found, bad = 0, []
    for path in kinds.snippet_files(ROOT) + kinds.page_files(ROOT):
        if path.suffix not in (".md", ".yaml", ".yml", ".sh", ".py", ".pbtxt"):
            continue
        place = "page" if path.suffix == ".md" else "notebook" if kinds.is_notebook(path, ROOT) else "snippet"
        text = path.read_text(encoding="utf-8")
        found += len(markers.MARKER_RE.findall(text))
        bad += [f"{path.relative_to(ROOT)}:{p.line}:{p.col}: {p.message}" for p in markers.problems(text, place)]
    assert found >= 50, found  # the scan saw the repository's markers (not a vacuous pass)
    assert not bad, "\n".join(bad)


def test_the_grammar_reads_each_kind_of_marker():
    text = ("# specdec-guide: trtllm = latest   (the newest)\n"
            "// specdec-guide: engine=cpu\n"
            "  # specdec-guide: llm-api-yaml\n"
            "<!-- specdec-guide: trtllm=1.2.1 -->\n"
            "x = 1  # specdec-guide: trtllm=9.9\n")  # not a line of its own: not a marker
    assert [f.args["value"] for f in markers.find(text, "trtllm")] == ["latest", "1.2.1"]
    assert markers.value(text, "engine") == "cpu" and markers.first(text, "llm-api-yaml").line == 3
    assert markers.parse_line("%%bash") is None
    assert markers.parse_line("# specdec-guide: unchecked: a request body").args["reason"].strip() == "a request body"
    page = "# specdec-guide: heading, not a comment\n    <!-- specdec-guide: track-tabs bash x/{track}/y.sh -->\n"
    assert markers.problems(page, "page") == []
    (tabs,) = markers.page_markers(page)
    assert (tabs.line, tabs.indent, tabs.args) == (2, "    ", {"lang": "bash", "path": "x/{track}/y.sh"})


@pytest.mark.parametrize("place, text, message", [
    ("page", "<!-- specdec-guide: feild-notes -->", f"1:21: unknown marker 'feild-notes' (known: {PAGE_KNOWN})"),
    ("snippet", "a: 1\n  # specdec-guide: llm-api-yml\n",
     f"2:20: unknown marker 'llm-api-yml' (known: {SNIPPET_KNOWN})"),
    ("snippet", "# specdec-guide:\n", f"1:17: unknown marker '' (known: {SNIPPET_KNOWN})"),
    ("snippet", "# specdec-guide: unchecked: no checker reads it\n",
     "1:18: marker 'unchecked' is not read in a snippet (it is read in: notebook)"),
    ("notebook", "# specdec-guide: field-notes\n", "1:18: marker 'field-notes' is not read in a notebook (it is read in: page)"),
    ("page", "<!-- specdec-guide: track-tabs bash -->", "1:21: marker 'track-tabs' is written "
     "`<!-- specdec-guide: track-tabs LANG PATH -->`"),
    ("snippet", "# specdec-guide: engine=gpu\n", "1:18: marker 'engine' is written `# specdec-guide: engine=cpu`"),
    ("snippet", "# specdec-guide: trtllm 1.1.0\n", "1:18: marker 'trtllm' is written "
     "`# specdec-guide: trtllm=<track id or alias>`"),
])
def test_an_unknown_misplaced_or_malformed_marker_is_a_problem(place, text, message):
    assert [f"{p.line}:{p.col}: {p.message}" for p in markers.problems(text, place)] == [message]


def _page(tmp_path: Path, text: str):
    docs = tmp_path / "docs"
    docs.mkdir(exist_ok=True)
    (docs / "index.md").write_text(text)
    page = SimpleNamespace(file=SimpleNamespace(abs_src_path=str(docs / "index.md"), src_uri="index.md"))
    return page, {"config_file_path": str(tmp_path / "mkdocs.yml"), "docs_dir": str(docs)}


def test_the_site_hook_fails_on_an_unknown_page_marker(tmp_path):
    from mkdocs.exceptions import PluginError

    page, config = _page(tmp_path, "# T\n\n  <!-- specdec-guide: tracks-tabel -->\n")
    with pytest.raises(PluginError) as err:
        hooks.on_page_markdown((tmp_path / "docs/index.md").read_text(), page, config, None)
    assert str(err.value) == f"docs/index.md:3:23: unknown marker 'tracks-tabel' (known: {PAGE_KNOWN})"
    # The known spelling renders (one row per track).
    page, config = _page(tmp_path, "# T\n\n<!-- specdec-guide: tracks-table -->\n")
    out = hooks.on_page_markdown((tmp_path / "docs/index.md").read_text(), page, config, None)
    assert "specdec-guide:" not in out and "| Track | TensorRT-LLM |" in out


def test_the_mkdocs_build_fails_on_an_unknown_marker(tmp_path):
    (tmp_path / "mkdocs.yml").write_text(f"site_name: t\nhooks:\n  - {ROOT / 'src/specdec_guide/site/hooks.py'}\n")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs/index.md").write_text("# T\n\n<!-- specdec-guide: field-note -->\n")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, env=dict(os.environ, NO_MKDOCS_2_WARNING="1"))
    assert done.returncode != 0, done.stdout + done.stderr
    assert f"docs/index.md:3:21: unknown marker 'field-note' (known: {PAGE_KNOWN})" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_validate_reports_each_marker_problem_with_its_position(tmp_path):
    (tmp_path / "mkdocs.yml").write_text("site_name: t\n")
    (tmp_path / "snippets").mkdir()
    (tmp_path / "docs").mkdir()
    # A misspelt llm-api-yaml marker: the file is then judged by content alone, but the line is read.
    (tmp_path / "snippets/draft.yaml").write_text("# specdec-guide: llm-api-yml\nmax_draft_len: 4\n")
    (tmp_path / "snippets/serve.sh").write_text("#!/bin/bash\n# specdec-guide: trtllm=1.1.0\n"
                                                "# specdec-guide: unchecked: shell\necho hi\n")
    (tmp_path / "docs/index.md").write_text("# T\n\n<!-- specdec-guide: migration-tabel -->\n")
    report = validate_paths(None, root=tmp_path, is_verified=lambda _p: True)
    assert [str(d) for d in report.diagnostics] == [
        f"docs/index.md:3:21: unknown marker 'migration-tabel' (known: {PAGE_KNOWN})",
        f"snippets/draft.yaml:1:18: unknown marker 'llm-api-yml' (known: {SNIPPET_KNOWN})",
        "snippets/serve.sh:3:18: marker 'unchecked' is not read in a snippet (it is read in: notebook)",
    ]
    done = subprocess.run([sys.executable, "-m", "specdec_guide", "validate"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stdout + done.stderr
    assert f"docs/index.md:3:21: unknown marker 'migration-tabel' (known: {PAGE_KNOWN})" in done.stdout


def test_in_python_only_a_comment_is_a_marker(tmp_path):
    """A marker written in a docstring or a string (an example, test data) is not read; the same
    line as a comment is."""
    (tmp_path / "mkdocs.yml").write_text("site_name: t\n")
    (tmp_path / "snippets").mkdir()
    (tmp_path / "snippets/client.py").write_text(
        '"""Example::\n\n    # specdec-guide: NAME\n"""\nDATA = """\n# specdec-guide: nope\n"""\n'
        "# specdec-guide: nope\nprint(DATA)\n")
    report = validate_paths(None, root=tmp_path, is_verified=lambda _p: True)
    assert [str(d) for d in report.diagnostics if "marker" in d.message] == [
        f"snippets/client.py:8:18: unknown marker 'nope' (known: {SNIPPET_KNOWN})"]


def test_every_page_marker_names_a_renderer_that_takes_its_arguments():
    import importlib

    rendered = [m for m in markers.MARKERS.values() if m.render]
    assert {m.name for m in rendered} == set(markers.known("page")) - {"trtllm"}
    for m in rendered:
        module, name = m.render.split(":")
        fn = getattr(importlib.import_module(module), name)
        given = set(m.pattern.groupindex) | {"root", "registry"}
        needed = {p.name for p in inspect.signature(fn).parameters.values() if p.default is p.empty}
        assert needed <= given, (m.name, needed - given)
        assert markers.parse_line(markers.html_marker(m.name, *(["bash", "a/{track}.sh"] if m.name == "track-tabs"
                                                                else []))) is not None, m.name


def test_an_indented_page_marker_is_replaced_in_place_with_its_indent(tmp_path):
    text = hooks.expand_markers("=== \"A\"\n\n    <!-- specdec-guide: markers-table -->\n\nafter\n", "p.md", tmp_path)
    lines = text.splitlines()
    assert lines[2].startswith("    | Marker |") and lines[-1] == "after"
    with pytest.raises(UserError, match=r"^p\.md:1:21: marker 'track-tabs' is written"):
        hooks.expand_markers("<!-- specdec-guide: track-tabs yaml -->\n", "p.md", tmp_path)


def test_the_contributors_page_lists_every_marker_from_the_table():
    page = (ROOT / "docs/contributors.md").read_text(encoding="utf-8")
    assert markers.html_marker("markers-table") in page
    text = hooks.expand_markers(page, "docs/contributors.md", ROOT)
    for m in markers.MARKERS.values():
        assert f"| `{m.syntax}` |" in text, m.name
