"""Fixtures shared by several test modules. Keep this file small: one fixture per shared need."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def built_site(tmp_path_factory):
    """The site as `make build` makes it (`mkdocs build --strict`), built once per session: the
    static checks of test_site.py and the browser checks of test_browser.py read the same build."""
    from site_build import ROOT, build

    out = tmp_path_factory.mktemp("site")
    result = build(ROOT, out)
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    return out


@pytest.fixture(scope="session")
def tiny_models(tmp_path_factory):
    """(target_dir, draft_dir): the deterministic tiny HF models, written once per test session."""
    from specdec_guide.models.tiny import write_tiny_models

    return write_tiny_models(tmp_path_factory.mktemp("tiny_models"))


@pytest.fixture(scope="session")
def smollm2_dir():
    """The real model's checkpoint folder: downloaded and converted once per machine (cached)."""
    from specdec_guide.models.smollm2 import ensure_checkpoint

    return ensure_checkpoint()


@pytest.fixture(scope="session")
def walked_page(tmp_path_factory):
    """walked_page(PAGE) -> (WalkResult, the reader's clone it ran in): each page walked once per
    session. A walk is the expensive part (it runs the real model): test_page_walk checks what it
    printed, other tests check what it wrote (test_tools_pages reads the estimate page's log)."""
    from specdec_guide import pagewalk
    from specdec_guide.diagnostics import UserError
    from specdec_guide.models import smollm2

    walks: dict = {}

    def walk(page: str):
        if page not in walks:
            # Fetched before the walk (once per machine), so the page's `models fetch` prints the
            # cached form that the page shows; the download itself is tested in test_models_smollm2.py.
            smollm2.ensure_checkpoint()
            workdir = tmp_path_factory.mktemp("walk")
            try:
                walks[page] = (pagewalk.walk(page, workdir=workdir), workdir / "clone")
            except UserError as err:
                walks[page] = err
        if isinstance(walks[page], UserError):
            pytest.fail(f"walking docs/{page} failed: {walks[page]}", pytrace=False)
        return walks[page]

    return walk
