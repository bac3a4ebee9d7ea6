"""The site builds strictly, renders every notebook with its plot, and its checks can fail.

``built_site`` (tests/conftest.py) is the session's one build of this checkout, shared with the
browser tests.
"""

from __future__ import annotations

import base64
import re
import struct

import pytest
import yaml

from site_build import ROOT, build, copy_tree
from specdec_guide.notebooks import list_notebooks

NOTEBOOK_PAGE = "speculative_decoding/notebooks/01_speculative_decoding_basics/index.html"


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return struct.unpack(">II", data[16:24])


def test_site_builds_strict_with_every_page(built_site):
    for page in ("index.html", "speculative_decoding/index.html", NOTEBOOK_PAGE,
                 "speculative_decoding/verification/index.html"):
        assert (built_site / page).is_file(), page


def test_basics_notebook_page_shows_its_plot_and_stamp(built_site):
    html = (built_site / NOTEBOOK_PAGE).read_text(encoding="utf-8")
    images = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', html)
    assert images, "the rendered notebook has no embedded plot"
    width, height = _png_size(base64.b64decode(images[-1]))
    assert width >= 400 and height >= 200, (width, height)
    assert "Last verified" in html
    assert "all outputs identical to plain greedy decoding" in html


def test_gpu_notebook_pages_say_they_were_not_run_and_show_no_output(built_site):
    """A GPU notebook without a stamped GPU run says so on its page; the migration table is rendered."""
    for info in [i for i in list_notebooks(ROOT) if i.tier == "gpu"]:
        html = (built_site / f"speculative_decoding/notebooks/{info.source.stem}/index.html").read_text(encoding="utf-8")
        stamped = '"last_run"' in info.paired.read_text(encoding="utf-8")
        if not stamped:
            assert "has not been run on a GPU" in html, info.source.name
            cells = re.findall(r'class="jp-Cell jp-CodeCell[^"]*"', html)
            assert cells and all("jp-mod-noOutputs" in c for c in cells), f"{info.source.name}: shows an output"
    migration = (built_site / "speculative_decoding/migration/index.html").read_text(encoding="utf-8")
    assert "migration-table" not in migration and "<table>" in migration


def test_python_sources_of_notebooks_are_not_published(built_site):
    assert not list(built_site.rglob("01_speculative_decoding_basics.py"))


def _nav_paths(node) -> list[str]:
    if isinstance(node, str):
        return [node]
    if isinstance(node, list):
        return [p for item in node for p in _nav_paths(item)]
    if isinstance(node, dict):
        return [p for value in node.values() for p in _nav_paths(value)]
    return []


def test_every_notebook_is_in_the_nav():
    nav = _nav_paths(yaml.safe_load((ROOT / "mkdocs.yml").read_text())["nav"])
    for info in list_notebooks(ROOT):
        assert f"speculative_decoding/notebooks/{info.paired.name}" in nav, f"{info.paired.name} is not in the nav"


# --- the checks themselves must be able to fail: break a copy, expect a failed build ---
BROKEN_LINKS = [
    ("[gone](speculative_decoding/nope.md)", "nope.md"),
    ("[gone](speculative_decoding/index.md#no-such-heading)", "no-such-heading"),
]
BREAKS = {
    "include": '\n```bash\n--8<-- "snippets/no/such/file.sh"\n```\n',
    # Every broken link in one copy: with --strict each one's warning alone fails the build, so
    # one build shows them all (a build costs ~7 s).
    "links": "".join(f"\n{link}\n" for link, _ in BROKEN_LINKS),
}


def _append(path, text):
    path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")


@pytest.fixture(scope="module")
def broken_copy(tmp_path_factory, built_site):
    """broken_copy(NAME) -> the finished build of a copy broken by BREAKS[NAME] (each built once).
    After ``built_site``: its build leaves the notebook render cache that the copies carry."""
    built = {}

    def get(name: str):
        if name not in built:
            tree = copy_tree(tmp_path_factory.mktemp(f"site_{name}") / "repo")
            _append(tree / "docs/index.md", BREAKS[name])
            built[name] = build(tree, tree.parent / "out")
        return built[name]

    return get


def _warnings(result) -> list[str]:
    return [line for line in (result.stdout + result.stderr).splitlines() if line.startswith("WARNING")]


def test_the_copy_warns_only_of_what_was_broken(broken_copy):
    """The control for the tests below: the copy holds every input the site reads (a missing one would
    warn too), so each of them fails for the one thing it breaks: the links copy's build warns of its
    planted links and of nothing else."""
    result = broken_copy("links")
    warnings = _warnings(result)
    assert len(warnings) == len(BROKEN_LINKS), warnings
    assert all(sum(complaint in w for _, complaint in BROKEN_LINKS) == 1 for w in warnings), warnings


def test_broken_include_fails_the_build(broken_copy):
    result = broken_copy("include")
    assert result.returncode != 0
    assert "no/such/file.sh" in result.stdout + result.stderr


@pytest.mark.parametrize("link, complaint", BROKEN_LINKS)
def test_broken_internal_link_fails_the_build(link, complaint, broken_copy):
    result = broken_copy("links")
    assert result.returncode != 0
    assert complaint in result.stdout + result.stderr
    # ...as a warning, which --strict turns into the failure
    assert any(complaint in line for line in _warnings(result))


# --- what the site hook adds to notebook pages and inline code ---

def test_notebook_tables_of_contents_keep_inline_code_and_link_to_the_headings(built_site):
    """mkdocs-jupyter's table of contents dropped inline code from titles and anchors; the hook
    rebuilds it from the rendered headings. Every heading with code must be in it, whole."""
    checked = 0
    for info in list_notebooks(ROOT):
        page = (built_site / f"speculative_decoding/notebooks/{info.source.stem}/index.html").read_text(encoding="utf-8")
        toc = {anchor: re.sub(r"\s+", " ", text).strip() for anchor, text in re.findall(
            r'<a href="#([^"]+)" class="md-nav__link">\s*<span class="md-ellipsis">(.*?)</span>', page, re.S)}
        for anchor, inner in re.findall(r'<h[2-6] id="([^"]+)"[^>]*>(.*?)</h[2-6]>', page, re.S):
            codes = re.findall(r"<code[^>]*>(.*?)</code>", inner, re.S)
            if not codes:
                continue
            assert anchor in toc, f"{info.source.name}: heading #{anchor} is not in the table of contents"
            for code in codes:
                assert re.sub(r"<[^>]+>", "", code) in toc[anchor], (info.source.name, anchor, toc[anchor])
            checked += 1
    assert checked >= 5


def _fake_page(src_uri: str):
    """A documentation file as the build sees it (notebooks wrapped as mkdocs-jupyter wraps them)."""
    from mkdocs.structure.files import File
    from mkdocs_jupyter.plugin import NotebookFile

    file = File(src_uri, src_dir="docs", dest_dir="site", use_directory_urls=True)
    return NotebookFile(file, use_directory_urls=True, site_dir="site") if src_uri.endswith(".ipynb") else file


def test_links_in_notebook_pages_become_page_links_and_a_missing_one_warns(caplog):
    from types import SimpleNamespace

    from mkdocs.structure.files import Files

    from specdec_guide.site import hooks

    notebook = _fake_page("speculative_decoding/notebooks/08_benchmarking.ipynb")
    files = Files([notebook, _fake_page("speculative_decoding/reading_the_numbers.md"),
                   _fake_page("speculative_decoding/notebooks/09_benchmarking_gpu.ipynb")])
    page = SimpleNamespace(file=notebook)
    out = hooks.notebook_links('<a href="../reading_the_numbers.md#a">x</a> <a href="09_benchmarking_gpu.ipynb">y</a> '
                               '<a href="https://example.org/x.md">z</a>', page, files)
    assert 'href="../../reading_the_numbers/#a"' in out and 'href="../09_benchmarking_gpu/"' in out
    assert 'href="https://example.org/x.md"' in out
    with caplog.at_level("WARNING"):
        kept = hooks.notebook_links('<a href="../nope.md">gone</a>', page, files)
    assert kept == '<a href="../nope.md">gone</a>' and "nope.md" in caplog.text


def test_long_inline_code_breaks_only_after_separators():
    from specdec_guide.site import hooks

    out = hooks.code_break_points("<p><code>sampling_param_max_tokens</code> <code>trtllm-build</code></p>"
                                  "<pre><code>keep_this_one_as_it_is</code></pre>")
    assert ('<code class="sg-breaks"><span>sampling_</span><wbr><span>param_</span><wbr><span>max_</span><wbr>'
            "<span>tokens</span></code>") in out
    assert "<code>trtllm-build</code>" in out and "<pre><code>keep_this_one_as_it_is</code></pre>" in out
