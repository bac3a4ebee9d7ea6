"""`make serve` serves the guide, and a real browser sees the basics notebook with its plot.

Uses the system's headless Chromium (Debian package `chromium`; .ci/run installs it).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
import urllib.request

import pytest

from site_build import ROOT
from specdec_guide.triton import free_ports

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(not CHROMIUM, reason="needs headless Chromium (apt-get install chromium)")

NOTEBOOK_URL = "speculative_decoding/notebooks/01_speculative_decoding_basics/"


@pytest.fixture(scope="module")
def served():
    (port,) = free_ports(1)
    proc = subprocess.Popen(["make", "-s", "serve", f"PORT={port}"], cwd=ROOT, start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    base = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                pytest.fail("make serve exited early:\n" + proc.stdout.read())
            try:
                with urllib.request.urlopen(base + NOTEBOOK_URL, timeout=2) as resp:
                    if resp.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("make serve was not ready within 120 s")
            time.sleep(0.5)
        yield base
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def test_basics_notebook_plot_is_visible_in_a_browser(served, tmp_path):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--no-first-run", "--disable-quic"],
        )
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(served + NOTEBOOK_URL, wait_until="load")
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
        finally:
            browser.close()
