"""The repository itself passes its own checks: what `make test` promises about the guide."""

from __future__ import annotations

import subprocess
import sys

from site_build import ROOT


def _run(*args):
    return subprocess.run([sys.executable, "-m", "specdec_guide", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)


def test_specdec_guide_validate_passes_on_the_whole_repository():
    proc = _run("validate")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "no problems" in proc.stdout
    assert "Traceback" not in proc.stderr


def test_every_snippet_is_verified_somehow():
    proc = _run("coverage")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "NOT VERIFIED" not in proc.stdout
