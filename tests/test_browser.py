"""The built site in a real browser, at a 1280-px-wide window: what a reader sees.

- the basics notebook shows its plot and its formulas as math (not raw TeX);
- no code block on any page hides text behind a horizontal scroll bar;
- no table cell or printed table breaks a line inside a number.

Uses the system's headless Chromium (Debian package `chromium`; .ci/run installs it) on the site
built with `mkdocs build --strict` (what `make serve` serves), served from a throw-away folder.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import shutil
import threading
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(not CHROMIUM, reason="needs headless Chromium (apt-get install chromium)")

NOTEBOOK_URL = "speculative_decoding/notebooks/01_speculative_decoding_basics/"
WIDTH = 1280


def _page_urls(site: Path) -> list[str]:
    """Every page of the built site (one index.html per page), as paths relative to the root."""
    urls = []
    for index in sorted(site.rglob("index.html")):
        rel = index.parent.relative_to(site).as_posix()
        if rel.startswith(("assets", "search")) or rel == "404":
            continue
        urls.append("" if rel == "." else rel + "/")
    return urls


@pytest.fixture(scope="module")
def site(built_site):
    out = built_site  # the session's build (tests/conftest.py), shared with test_site.py
    handler = functools.partial(_QuietHandler, directory=str(out))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/", _page_urls(out)
    finally:
        server.shutdown()
        server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--no-first-run", "--disable-quic"],
        )
        try:
            yield chromium
        finally:
            chromium.close()


@contextlib.contextmanager
def _page(browser, url: str):
    page = browser.new_page(viewport={"width": WIDTH, "height": 900})
    try:
        page.goto(url, wait_until="load")
        yield page
    finally:
        page.close()


def test_basics_notebook_plot_is_visible_in_a_browser(site, browser, tmp_path):
    base, _ = site
    with _page(browser, base + NOTEBOOK_URL) as page:
        assert "Speculative decoding basics" in page.content()
        plot = page.locator('img[src^="data:image/png"]').last
        plot.scroll_into_view_if_needed()
        assert plot.is_visible()
        width, height = plot.evaluate("img => [img.naturalWidth, img.naturalHeight]")
        assert width >= 400 and height >= 200
        box = plot.bounding_box()
        assert box and box["width"] > 300, box
        page.screenshot(path=str(tmp_path / "basics.png"))
        assert page.get_by_text("Last verified").first.is_visible()


def test_formulas_render_as_math_not_raw_tex(site, browser):
    base, _ = site
    with _page(browser, base + NOTEBOOK_URL) as page:
        formulas = page.locator("math")
        assert formulas.count() >= 1
        formula = formulas.first
        formula.scroll_into_view_if_needed()
        # Drawn as math: the fraction's numerator sits above its denominator (raw TeX has no layout).
        num_bottom, den_top = formula.locator("mfrac").first.evaluate(
            "f => [f.children[0].getBoundingClientRect().bottom, f.children[1].getBoundingClientRect().top]")
        assert num_bottom <= den_top + 1, (num_bottom, den_top)
        assert formula.evaluate("m => getComputedStyle(m).display") in ("block", "block math")
        text = page.locator("article").inner_text()
        assert "\\frac" not in text and "$$" not in text
        assert page.locator('script[src=""]').count() == 0


# For every <pre>/<code> element: how much wider its content is than its box (a scroll bar's worth).
_HIDDEN_CODE = """() => [...document.querySelectorAll('article pre, article pre > code')]
  .filter(e => e.offsetParent !== null || e.closest('.tabbed-block'))
  .map(e => ({hidden: e.scrollWidth - e.clientWidth, text: e.innerText.split('\\n').slice(0, 2).join(' | ')}))
  .filter(r => r.hidden > 1)"""

# Every number in a table cell or a printed text output that the browser laid out on two lines.
_BROKEN_NUMBERS = """() => {
  const found = [];
  for (const el of document.querySelectorAll('article td, article th, article .jp-OutputArea-output pre')) {
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const m of node.textContent.matchAll(/\\d[\\d.,]*\\d/g)) {
        const range = document.createRange();
        range.setStart(node, m.index);
        range.setEnd(node, m.index + m[0].length);
        const tops = new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.top)));
        if (tops.size > 1) found.push(m[0]);
      }
    }
  }
  return found;
}"""


def test_no_code_block_hides_text_behind_a_scroll_bar_and_no_number_is_broken(site, browser):
    base, urls = site
    assert NOTEBOOK_URL in urls and "speculative_decoding/triton_cpu/" in urls
    problems = []
    for url in urls:
        with _page(browser, base + url) as page:
            # Tabbed blocks: show every tab's content so hidden tabs are measured too.
            page.add_style_tag(content=".tabbed-block { display: block !important; }")
            for row in page.evaluate(_HIDDEN_CODE):
                problems.append(f"/{url}: code hides {row['hidden']} px: {row['text'][:100]}")
            for number in page.evaluate(_BROKEN_NUMBERS):
                problems.append(f"/{url}: number broken across lines: {number}")
    assert not problems, "\n".join(problems)
