"""Fixtures shared by several test modules. Keep this file small: one fixture per shared need."""

from __future__ import annotations

import pytest


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
