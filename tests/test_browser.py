"""The built site in a real browser, at a 1280-px-wide window: what a reader sees.

- the basics notebook shows its plot and its formulas as math (not raw TeX);
- no code block on any page hides text behind a horizontal scroll bar, except shell, YAML and
  printed-text blocks, which scroll by design: none of their lines wraps (a wrapped command or
  table row reads as another line);
- no table is wider than its column (Material puts a scroll bar under it: its last columns hide);
- no table cell or printed table breaks a line inside a number;
- the search box finds a page by what it says, and its results lead to pages that exist;
- no link on any page leads to a page or an anchor that does not exist. `mkdocs build --strict`
  checks the links of Markdown pages, not those inside rendered notebooks nor the tables of
  contents that mkdocs-jupyter makes; this checks every link the browser sees.

Every page is loaded once, and every check reads that one visit (``visits``). Uses the system's
headless Chromium (Debian package `chromium`; .ci/run installs it) on the session's site build
(``built_site``, `mkdocs build --strict`, what `make serve` serves), served over HTTP.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import json
import re
import shutil
import threading
from pathlib import Path
from urllib.parse import unquote, urlsplit

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


@contextlib.contextmanager
def _served(out: Path):
    """The built site over HTTP on a free loopback port: yields its base URL."""
    from loopback import served

    with served(functools.partial(_QuietHandler, directory=str(out))) as url:
        yield url + "/"


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@contextlib.contextmanager
def _chromium():
    """Headless Chromium through Playwright (in the calling thread)."""
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


# What the visit measures on the basics notebook: its last plot (scrolled to) and its first formula.
_PLOT = """() => {
  const imgs = [...document.querySelectorAll('img[src^="data:image/png"]')];
  const img = imgs[imgs.length - 1];
  if (!img) return null;
  img.scrollIntoView();
  const r = img.getBoundingClientRect();
  const stamp = [...document.querySelectorAll('article *')].find(
    e => e.childElementCount === 0 && e.textContent.includes('Last verified'));
  const s = stamp ? stamp.getBoundingClientRect() : null;
  return {natural: [img.naturalWidth, img.naturalHeight], width: r.width,
          visible: r.width > 0 && r.height > 0 && getComputedStyle(img).visibility !== 'hidden',
          stamp_visible: !!s && s.width > 0 && s.height > 0};
}"""

_FORMULA = """() => {
  const formula = document.querySelector('math');
  if (!formula) return {count: 0};
  formula.scrollIntoView();
  const f = formula.querySelector('mfrac');
  const text = document.querySelector('article').innerText;
  return {count: document.querySelectorAll('math').length,
          num_bottom: f ? f.children[0].getBoundingClientRect().bottom : null,
          den_top: f ? f.children[1].getBoundingClientRect().top : null,
          display: getComputedStyle(formula).display,
          raw_tex: text.includes('\\\\frac') || text.includes('$$'),
          empty_scripts: document.querySelectorAll('script[src=""]').length};
}"""


def test_basics_notebook_plot_is_visible_in_a_browser(visits):
    plot = visits[NOTEBOOK_URL]["plot"]
    assert plot and plot["visible"], plot
    width, height = plot["natural"]
    assert width >= 400 and height >= 200, plot
    assert plot["width"] > 300, plot
    assert plot["stamp_visible"], "the notebook page shows no visible 'Last verified' stamp"


def test_formulas_render_as_math_not_raw_tex(visits):
    formula = visits[NOTEBOOK_URL]["formula"]
    assert formula["count"] >= 1, formula
    # Drawn as math: the fraction's numerator sits above its denominator (raw TeX has no layout).
    assert formula["num_bottom"] is not None and formula["num_bottom"] <= formula["den_top"] + 1, formula
    assert formula["display"] in ("block", "block math"), formula
    assert not formula["raw_tex"] and formula["empty_scripts"] == 0, formula


# Blocks that keep their lines and scroll sideways (docs/assets/extra.css): shell, YAML, printed text.
_NO_WRAP = ".language-bash, .language-yaml, .language-text"

# For every other <pre>/<code> element: how much wider its content is than its box (a scroll bar's worth).
_HIDDEN_CODE = """() => [...document.querySelectorAll('article pre, article pre > code')]
  .filter(e => e.offsetParent !== null || e.closest('.tabbed-block'))
  .filter(e => !e.closest('%s'))
  .map(e => ({hidden: e.scrollWidth - e.clientWidth, text: e.innerText.split('\\n').slice(0, 2).join(' | ')}))
  .filter(r => r.hidden > 1)""" % _NO_WRAP

# For every shell/YAML/text code element: how much taller its text is laid out than with no wrapping
# at all (white-space: pre, set for the measure and put back). Measured on a Range over the text, so
# a scroll bar or padding does not count; more than a pixel means some line wrapped.
_WRAPPED_LINES = """() => [...document.querySelectorAll('article :is(%s) pre > code')]
  .filter(e => e.offsetParent !== null || e.closest('.tabbed-block'))
  .map(code => {
    const range = document.createRange();
    range.selectNodeContents(code);
    const shown = range.getBoundingClientRect().height;
    const saved = code.style.whiteSpace;
    code.style.whiteSpace = 'pre';
    const unwrapped = range.getBoundingClientRect().height;
    code.style.whiteSpace = saved;
    return {extra: shown - unwrapped, text: code.innerText.split('\\n').slice(0, 2).join(' | ')};
  })
  .filter(r => r.extra > 1)""" % _NO_WRAP

_NO_WRAP_COUNT = "() => document.querySelectorAll('article :is(%s) pre > code').length" % _NO_WRAP

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


# Every table with the widths of its content and of its wrapper (Material's scroll container):
# content wider than the wrapper means a scroll bar.
_TABLES = """() => [...document.querySelectorAll('article table')]
  .map(t => {
    const wrap = t.closest('.md-typeset__scrollwrap') || t.parentElement;
    return {scroll: wrap.scrollWidth, client: wrap.clientWidth,
            head: [...t.querySelectorAll('th')].slice(0, 3).map(h => h.innerText.trim().slice(0, 40))};
  })"""

_LINKS = "() => [...document.querySelectorAll('a[href]')].map(a => a.href)"


def _visit_every_page(out: Path) -> dict:
    """{"base": the URL it was served at, "pages": {page url: what the checks need from it}}: every
    page of the build loaded once, every tab's content shown, with its own HTTP server and Chromium,
    in a thread of its own: Playwright's sync API refuses a thread that has an asyncio loop (a
    notebook run by nbmake in this worker may have left one)."""
    got: dict = {}

    def visit():
        try:
            got["value"] = _visit(out)
        except BaseException as err:  # noqa: BLE001 - raised again below, in the test
            got["error"] = err

    thread = threading.Thread(target=visit, name="specdec-test-visits")
    thread.start()
    thread.join()
    if "error" in got:
        raise got["error"]
    return got["value"]


def _visit(out: Path) -> dict:
    seen = {}
    with _served(out) as base, _chromium() as browser:
        # One tab for every page, as a reader clicks through the site: a new tab per page would
        # start a renderer process per page (measured: 100 Chromium processes for one visit each).
        page = browser.new_page(viewport={"width": WIDTH, "height": 900})
        # Material's search worker fetches the whole site's index (over a megabyte) and builds it at
        # every page load: about half of this visit's CPU, for nothing the page checks read. The
        # search is visited once, below.
        page.route("**/search/search_index.json", lambda route: route.abort())
        for url in _page_urls(out):
            page.goto(base + url, wait_until="load")
            # Tabbed blocks: show every tab's content so hidden tabs are measured too.
            page.add_style_tag(content=".tabbed-block { display: block !important; }")
            seen[url] = {"code": page.evaluate(_HIDDEN_CODE), "wrapped": page.evaluate(_WRAPPED_LINES),
                         "no_wrap_blocks": page.evaluate(_NO_WRAP_COUNT),
                         "numbers": page.evaluate(_BROKEN_NUMBERS),
                         "tables": page.evaluate(_TABLES), "links": page.evaluate(_LINKS)}
            for name, probe in PROBES.get(url, {}).items():
                seen[url][name] = page.evaluate(probe)
        page.close()
        search = _search(browser.new_page(viewport={"width": WIDTH, "height": 900}), base)
    return {"base": base, "pages": seen, "search": search}


#: What a reader types into the search box, and a page that must be among the results.
SEARCH = ("prompt lookup", "speculative_decoding/cpu_speed/")


def _search(page, base: str) -> dict:
    """The home page's search box, typed into as a reader does: the results' count line and links.
    A failure here (no result, a selector the theme renamed) is recorded for the search test
    alone, not raised into every check of the visit."""
    from playwright.sync_api import Error as PlaywrightError

    try:
        page.goto(base, wait_until="load")
        box = page.locator("input.md-search__input")
        box.click()
        box.press_sequentially(SEARCH[0])
        page.wait_for_selector(".md-search-result__item", timeout=30_000)
        return {"meta": page.inner_text(".md-search-result__meta"),
                "links": page.evaluate("() => [...document.querySelectorAll('.md-search-result__item a')]"
                                       ".map(a => a.href)")}
    except PlaywrightError as err:  # TimeoutError is one
        return {"meta": f"the search failed: {(str(err).splitlines() or [type(err).__name__])[0]}", "links": []}
    finally:
        page.close()


@pytest.fixture(scope="module")
def visit(built_site):
    """The one visit of every page (``_visit_every_page``)."""
    return _visit_every_page(built_site)


@pytest.fixture(scope="module")
def visits(visit):
    """{page url: what the checks need from it}."""
    return visit["pages"]


def test_no_code_block_hides_text_behind_a_scroll_bar_and_no_number_is_broken(visits):
    assert NOTEBOOK_URL in visits and "speculative_decoding/triton_cpu/" in visits
    problems = []
    for url, seen in visits.items():
        for row in seen["code"]:
            problems.append(f"/{url}: code hides {row['hidden']} px: {row['text'][:100]}")
        for number in seen["numbers"]:
            problems.append(f"/{url}: number broken across lines: {number}")
    assert not problems, "\n".join(problems)


def _wrap_problems(url: str, rows: list[dict]) -> list[str]:
    return [f"/{url}: a line of this block wraps ({r['extra']:.0f} px taller than unwrapped): {r['text'][:100]}"
            for r in rows]


def test_no_line_of_a_shell_yaml_or_text_block_wraps(visits):
    # the selector finds the blocks (the site build marks each with its language: pygments_lang_class)
    assert visits["speculative_decoding/estimate/"]["no_wrap_blocks"] >= 10
    assert sum(seen["no_wrap_blocks"] for seen in visits.values()) >= 50
    problems = [p for url, seen in visits.items() for p in _wrap_problems(url, seen["wrapped"])]
    assert not problems, "\n".join(problems)


_PLANT_WRAP = """() => { document.querySelector('article').insertAdjacentHTML('beforeend',
  '<div class="language-bash highlight"><pre><span></span><code style="white-space: pre-wrap">'
  + 'echo ' + 'word '.repeat(80) + '\\\\\\n  --next-argument</code></pre></div>');
  return (%s)(); }""" % _WRAPPED_LINES


def test_a_wrapping_line_is_found(visits):
    """The measure itself can fail: a shell block whose long line is let wrap (as before the fix),
    planted on the estimate page after its own measure."""
    seen = visits["speculative_decoding/estimate/"]
    assert seen["wrapped"] == [] and seen["no_wrap_blocks"] >= 10
    found = _wrap_problems("speculative_decoding/estimate/", seen["planted_wrap"])
    assert len(found) == 1 and "echo word" in found[0], found


def _table_problems(url: str, rows: list[dict]) -> list[str]:
    return [f"/{url}: table {r['head']} is {r['scroll']} px wide in a {r['client']} px column"
            for r in rows if r["scroll"] > r["client"]]


def test_no_table_is_wider_than_its_column(visits):
    assert sum(len(seen["tables"]) for seen in visits.values()) >= 10, "the selector finds the site's tables"
    problems = [p for url, seen in visits.items() for p in _table_problems(url, seen["tables"])]
    assert not problems, "\n".join(problems)


_PLANT_TABLE = """() => { document.querySelector('article').insertAdjacentHTML('beforeend',
  '<div class="md-typeset__scrollwrap"><div class="md-typeset__table"><table><thead><tr><th>wide</th>'
  + '</tr></thead><tbody><tr><td><code>' + 'x'.repeat(300) + '</code></td></tr></tbody></table></div></div>');
  return (%s)(); }""" % _TABLES


def test_a_table_wider_than_its_column_is_found(visits):
    """The measure itself can fail: a table holding one long unbreakable identifier, planted on the
    versions page after its own measure."""
    problems = _table_problems("speculative_decoding/versions/", visits["speculative_decoding/versions/"]["planted_table"])
    assert len(problems) == 1 and "['wide']" in problems[0], problems


CALCULATOR_URL = "speculative_decoding/calculator/"


def _calc_grid() -> list[dict]:
    """Inputs for the calculator's compute() and for payoff: every form, draft lengths, batch sizes
    measured and between, every acceptance kind, default and given draft costs, costs on and off,
    and inputs both must refuse (a batch outside the measurement, a form with no draft figure)."""
    from specdec_guide import payoff

    grid = []
    for form in [f.id for f in payoff.forms()]:
        for k in (1, 3, 4, 8):
            for batch in (1, 3, 16, 20, 100, 128, 200):
                for kind, value in (("length", 1 + 0.6 * k), ("rate", 0.55),
                                    ("per_position", [round(0.9 - 0.1 * i, 2) for i in range(k)])):
                    for draft_cost in (None, 0.1):
                        for count in (True, False):
                            grid.append({"form": form, "k": k, "kind": kind, "value": value, "batch": batch,
                                         "draftCost": draft_cost, "verifyCost": None, "countVerify": count,
                                         "countOverlap": count})
    return grid


CALC_GRID = _calc_grid()

_COMPUTE = """() => %s.map(inputs => {
  try { const r = window.SpecdecCalc.compute(inputs);
        return {low: r.low, high: r.high, tokens: r.tokens, c: r.c, v: r.v, tax: r.tax}; }
  catch (err) { return {error: err.message}; } })"""
_CALC_COMPUTE = _COMPUTE % json.dumps(CALC_GRID)


def _case(form, kind, value, k, batch, draft_cost=None, count=True):
    """An `estimate` command line and the same inputs for the page's compute()."""
    flag = {"length": "--acceptance-length", "rate": "--acceptance-rate", "per_position": "--per-position"}[kind]
    shown = ",".join(map(str, value)) if kind == "per_position" else str(value)
    args = ["--method", form, flag, shown, "--max-draft-len", str(k), "--batch-size", str(batch)]
    args += ["--draft-cost", str(draft_cost)] if draft_cost is not None else []
    args += [] if count else ["--no-verify-cost", "--no-overlap-cost"]
    return args, {"form": form, "k": k, "kind": kind, "value": value, "batch": batch, "draftCost": draft_cost,
                  "verifyCost": None, "countVerify": count, "countOverlap": count}


CLI_CASES = [_case("ngram", "length", 2.8, 3, 20), _case("draft_target", "rate", 0.55, 4, 100),
             _case("eagle3", "per_position", [0.9, 0.8, 0.7], 3, 3, draft_cost=0.1),
             _case("eagle3_two_model", "length", 3.4, 8, 128, draft_cost=0.1, count=False)]

# As a reader uses it: the answer shown, after changing inputs, after bad inputs, after an example.
_CALC_INTERACT = """() => {
  const root = document.getElementById('specdec-calc');
  const shown = () => root.querySelector('[data-calc-result]').innerText;
  const set = (name, value) => { const f = root.querySelector(`[name="${name}"]`);
    if (f.type === 'checkbox') f.checked = value; else f.value = value;
    f.dispatchEvent(new Event('input', {bubbles: true})); f.dispatchEvent(new Event('change', {bubbles: true})); };
  const out = {initial: shown()};
  set('form', 'ngram'); set('k', '4'); set('kind', 'length'); set('acceptance', '2.5'); set('batch', '1');
  out.batch1 = shown();
  set('batch', '64'); out.batch64 = shown();
  set('count_overlap', false); out.no_overlap = shown(); set('count_overlap', true);
  set('acceptance', 'abc'); out.bad_acceptance = shown();
  set('acceptance', '2.5'); set('batch', '500'); out.bad_batch = shown();
  set('verify_cost', '2.0'); out.own_verify = shown(); set('verify_cost', '');
  set('batch', '0x10'); out.hex_batch = shown();
  set('batch', '1'); set('draft_cost', '1e400'); out.huge_cost = shown(); set('draft_cost', '');
  set('kind', 'rate'); set('acceptance', '0'); out.rate_zero = shown();
  set('kind', 'length'); set('acceptance', '2.5');
  set('form', 'mtp'); out.no_draft_cost = shown();
  set('draft_cost', '-1'); out.negative_cost = shown();
  set('verify_cost', '3');  // an example sets every input: the reader's own v must not stay behind
  const ex = root.querySelector('[name="example"]');
  out.examples = ex.options.length - 1;
  ex.value = '0'; ex.dispatchEvent(new Event('change', {bubbles: true}));
  out.example = shown(); out.example_source = root.querySelector('[data-calc-example-source]').innerText;
  return out; }"""

#: Measures taken on one page after the checks every page gets (the plants change the page).
PROBES = {NOTEBOOK_URL: {"plot": _PLOT, "formula": _FORMULA},
          "speculative_decoding/estimate/": {"planted_wrap": _PLANT_WRAP},
          "speculative_decoding/versions/": {"planted_table": _PLANT_TABLE},
          CALCULATOR_URL: {"calc_compute": _CALC_COMPUTE, "calc_interact": _CALC_INTERACT,
                           "calc_cli": _COMPUTE % json.dumps([inputs for _, inputs in CLI_CASES])}}


def _payoff(inputs: dict) -> dict:
    """What specdec_guide.payoff computes for one calculator input (the CLI's code path)."""
    from specdec_guide import payoff
    from specdec_guide.diagnostics import UserError

    try:
        c, _, verify, tax, _ = payoff.costs(inputs["form"], inputs["k"], inputs["batch"], draft_cost=inputs["draftCost"],
                                            count_verify=inputs["countVerify"], count_overlap=inputs["countOverlap"])
        tokens = payoff.acceptance_length(inputs["kind"], inputs["value"], inputs["k"])
        p = payoff.predict(tokens, inputs["k"], c, verify, tax)
    except UserError as err:
        return {"error": str(err)}
    return {"low": p.low, "high": p.high, "tokens": tokens, "c": c, "v": verify.factor, "tax": list(tax)}


def test_the_calculator_computes_what_estimate_computes_on_a_grid(visits):
    got = visits[CALCULATOR_URL]["calc_compute"]
    assert len(got) == len(CALC_GRID) > 1000
    mismatches, refused = [], 0
    for inputs, js in zip(CALC_GRID, got):
        py = _payoff(inputs)
        if "error" in py or "error" in js:
            refused += 1
            if ("error" in py) != ("error" in js):
                mismatches.append(f"{inputs}: page {js}, payoff {py}")
            continue
        for key in ("low", "high", "tokens", "c", "v"):
            if js[key] != pytest.approx(py[key], rel=1e-12, abs=0):
                mismatches.append(f"{inputs}: {key} page {js[key]!r}, payoff {py[key]!r}")
        if js["tax"] != py["tax"]:
            mismatches.append(f"{inputs}: tax page {js['tax']}, payoff {py['tax']}")
    assert not mismatches, "\n".join(mismatches[:20])
    assert 0 < refused < len(CALC_GRID) / 2  # batch 200 and forms without a draft figure are refused by both


def test_the_calculator_agrees_with_the_estimate_command(visits, capsys):
    """The command a reader runs, against the same inputs typed into the page's compute()."""
    from specdec_guide import cli

    seen = visits[CALCULATOR_URL]["calc_cli"]
    assert len(seen) == len(CLI_CASES)
    for (args, inputs), page in zip(CLI_CASES, seen):
        assert cli.main(["estimate", *args, "--json"]) == 0
        command = json.loads(capsys.readouterr().out)
        assert "error" not in page, (args, page)
        assert command["speedup_range"] == [pytest.approx(page["low"], rel=1e-12, abs=0),
                                            pytest.approx(page["high"], rel=1e-12, abs=0)], (args, page)
        assert command["verify_cost"] == pytest.approx(page["v"], rel=1e-12, abs=0), (args, page)
        assert command["acceptance_length"] == pytest.approx(page["tokens"], rel=1e-12, abs=0), (args, page)


def test_the_calculator_answers_a_reader(visits):
    seen = visits[CALCULATOR_URL]["calc_interact"]
    assert "Predicted speed-up" in seen["initial"] and "NaN" not in seen["initial"], seen
    # NGram, L 2.5, k 4: the answer changes with the batch size and with the overlap tax
    assert "Predicted speed-up" in seen["batch1"] and seen["batch64"] != seen["batch1"], seen
    assert seen["no_overlap"] != seen["batch64"] and "not counted" in seen["no_overlap"], seen
    for key, message in (("bad_acceptance", "the acceptance length is a number"),
                         ("bad_batch", "batch size 500 is outside the measured 1-128"),
                         ("no_draft_cost", "no measured figure for MTP"),
                         ("negative_cost", "the draft cost is a number of at least 0")):
        assert message in seen[key] and "NaN" not in seen[key] and "Predicted" not in seen[key], (key, seen[key])
    # a batch outside the measurement is priced with the reader's own v; no hex, no infinity
    assert "Predicted speed-up" in seen["own_verify"] and "v = 2.000: given" in seen["own_verify"], seen
    assert "the batch size is a whole number" in seen["hex_batch"], seen
    assert "the draft cost is a number" in seen["huge_cost"] and "0.00x" not in seen["huge_cost"], seen
    # TensorRT-LLM 1.1.0/1.2.1's per-request acceptance_rate of 0 is flagged, not taken at face value
    assert "Predicted speed-up" in seen["rate_zero"] and "counters are not filled" in seen["rate_zero"], seen
    assert seen["examples"] >= 2, seen
    assert "Predicted speed-up" in seen["example"] and "estimate" in seen["example_source"], seen
    assert "v = 3.000" not in seen["example"] and "at batch 1" in seen["example"], seen


def dead_links(site_dir: Path, base: str, links: dict[str, list[str]]) -> list[str]:
    """Links into the site (from {page: hrefs}) whose page, or whose anchor on that page, is missing."""
    ids: dict[Path, set[str]] = {}
    prefix = urlsplit(base).path
    problems = []
    for url, hrefs in links.items():
        for href in sorted(set(hrefs)):
            if not href.startswith(base):
                continue  # another site, or mailto: and the like
            parts = urlsplit(href)
            target = site_dir / unquote(parts.path[len(prefix):])
            if target.is_dir():
                target = target / "index.html"
            if not target.is_file():
                problems.append(f"/{url}: links to a page that does not exist: {href[len(base) - 1:]}")
                continue
            if parts.fragment and target.suffix == ".html":
                if target not in ids:
                    ids[target] = set(re.findall(r'\bid="([^"]+)"', target.read_text(encoding="utf-8")))
                if unquote(parts.fragment) not in ids[target]:
                    problems.append(f"/{url}: links to an anchor that does not exist: {href[len(base) - 1:]}")
    return problems


def test_no_link_leads_nowhere(built_site, visit, visits):
    base = visit["base"]  # the links are absolute, at the visit's own server
    assert any(u.startswith("speculative_decoding/notebooks/") for u in visits)
    problems = dead_links(built_site, base, {url: seen["links"] for url, seen in visits.items()})
    assert not problems, "\n".join(problems)


def test_the_search_box_finds_the_pages_that_say_it(built_site, visit):
    """The visit blocks the search index on every page but this one: here it is built and used."""
    search, base = visit["search"], visit["base"]
    count = re.fullmatch(r"(\d+) matching documents?", search["meta"].strip())
    assert count and int(count[1]) >= 2, search["meta"]
    assert any(urlsplit(link).path == urlsplit(base).path + SEARCH[1] for link in search["links"]), search["links"]
    problems = dead_links(built_site, base, {"(search results)": search["links"]})
    assert not problems, "\n".join(problems)


def test_a_link_to_a_missing_page_or_anchor_is_found(built_site):
    base = "http://127.0.0.1:9/"  # links are compared as text: no server needed
    problems = dead_links(built_site, base, {"x/": [base + "speculative_decoding/nope/", base + "#no-such-anchor",
                                                  base + "speculative_decoding/versions/", "https://example.org/"]})
    assert len(problems) == 2, problems
    assert any("page that does not exist: /speculative_decoding/nope/" in p for p in problems), problems
    assert any("anchor that does not exist: /#no-such-anchor" in p for p in problems), problems
