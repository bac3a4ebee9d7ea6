"""scripts/fidelity_mutants.py, the mutation run of the stand-in's fidelity tests, kept working.

The whole run starts a tritonserver per mutant (``make fidelity-mutants``, outside the CPU tier).
Here: every mutant still applies to this checkout, every fidelity test has a mutant that must fail
it, and the launcher's two mutants (they need no server) are run for real, so that the mechanism (a patched
copy of src/ that the tests import) is proven on every CPU run.
"""

from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest
from registry import tracks

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "fidelity_mutants.py"


def _script():
    spec = importlib.util.spec_from_file_location("fidelity_mutants", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("fidelity_mutants", module)
    spec.loader.exec_module(module)
    return module


def test_every_mutant_applies_to_this_checkout():
    fm = _script()
    stale = {m.name: fm.stale_edits(m) for m in fm.MUTANTS if fm.stale_edits(m)}
    assert not stale, f"keep these mutants current (scripts/fidelity_mutants.py): {stale}"
    assert len({m.name for m in fm.MUTANTS}) == len(fm.MUTANTS), "mutant names must be unique"


def test_every_fidelity_test_has_a_mutant_that_must_fail_it():
    fm = _script()
    tree = ast.parse((ROOT / fm.FIDELITY).read_text())
    tests = [n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")]
    named = {t.split("::")[1].split("[")[0] for m in fm.MUTANTS for t in m.tests
             if t.startswith(fm.FIDELITY)}
    assert tests and not set(tests) - named, f"no mutant for: {sorted(set(tests) - named)}"
    assert not named - set(tests), f"mutants name tests that are gone: {sorted(named - set(tests))}"


def test_the_per_track_mutants_run_every_track_of_the_registry():
    """A per-track mutant must fail its test on every track, a track added to tracks.yaml included."""
    fm = _script()
    assert fm.per_track("test_x") == tuple(f"{fm.FIDELITY}::test_x[{t}]" for t in tracks()), fm.TRACKS


def test_a_mutant_that_no_longer_applies_is_reported(tmp_path):
    fm = _script()
    mutant = fm.Mutant("gone", "fact", "answers", fm.one(fm.MODEL_PY, "text that is not there", "x"), ("t",))
    assert "occurs 0 times" in fm.stale_edits(mutant)[0]
    outside = fm.Mutant("outside", "fact", "answers", fm.one("tests/stand_in.py", "a", "b"), ("t",))
    assert "src/" in fm.stale_edits(outside)[0]


#: The launcher's two mutants: one in its code, one in the record it reads. Enough to prove the mechanism
#: on every CPU run; the other serverless mutants (engine/model.py's unit tests) run in the full run.
LAUNCHER_MUTANTS = ("launcher-keeps-auto-complete", "record-launcher-keeps-auto-complete")


@pytest.mark.timeout(600)
def test_the_launchers_mutants_are_killed():
    """The launcher's mutants run for real: a patched copy, its tests, the verdict. The code mutant
    shows the copy is what the tests import; the record mutant, that the test's expected answer does
    not come from the record the launcher reads."""
    fm = _script()
    assert all(not m.server for m in fm.by_name(LAUNCHER_MUTANTS)), "the launcher's mutants start no server"
    done = subprocess.run([sys.executable, str(SCRIPT), *LAUNCHER_MUTANTS], cwd=ROOT, capture_output=True,
                          text=True, timeout=540)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    for name in LAUNCHER_MUTANTS:
        assert f"KILLED    {name} " in out, out
    assert "tests pass unpatched" in out, out  # a kill counts only where the unpatched copy passes
