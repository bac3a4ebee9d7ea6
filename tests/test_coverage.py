"""``specdec-guide coverage``: every snippet's verification, the VERIFIED_BY.yaml registry."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from specdec_guide import coverage
from specdec_guide.diagnostics import UserError
from specdec_guide.releases.tracks import Registry

FIX = Path(__file__).parent / "fixtures" / "validate"
REG = Registry(FIX / "schemas")
REPO = Path(__file__).resolve().parents[1]


def test_clean_fixture_every_snippet_verified():
    rows, diags = coverage.collect(FIX / "clean", registry=REG)
    assert diags == []
    methods = {r.path: r.methods for r in rows}
    assert methods["snippets/serve/curl_generate.sh"] == ["executed on CPU (tests/fake_suite.py::test_curl)"]
    assert methods["snippets/serve/ngram.sh"] == ["checked against schema of TRT-LLM 1.1.0"]
    assert methods["snippets/serve/eagle3.yaml"] == ["checked against schema of TRT-LLM 1.2.0"]
    # The notebook glob does not claim the GPU notebook ran on CPU.
    assert methods["notebooks/02_gpu_eagle3.py"] == ["checked against schema of TRT-LLM 1.2.0",
                                                     "1 of 1 code cells checked statically against TRT-LLM 1.2.0",
                                                     "GPU tier only"]
    assert methods["notebooks/01_basics.py"][0].startswith("executed on CPU")
    assert "snippets/VERIFIED_BY.yaml" not in methods


def test_a_notebooks_schema_line_names_the_notebooks_track_not_its_first_cells(tmp_path):
    """A notebook pinned to one track with a cell written for another (a migration notebook shows
    the next release's file): both lines name the track the notebook is checked against."""
    root = shutil.copytree(FIX / "clean", tmp_path / "clean")
    notebook = root / "notebooks" / "02_gpu_eagle3.py"
    text = notebook.read_text().replace("#     tier: gpu\n", "#     tier: gpu\n#     track: 1.1.0\n")
    notebook.write_text(text.replace("# %%\n# specdec-guide: trtllm=latest\n",
                                     "# %%\nx = 1\n\n# %%\n# specdec-guide: trtllm=latest\n", 1))
    methods = {r.path: r.methods for r in coverage.collect(root, registry=REG)[0]}
    assert methods["notebooks/02_gpu_eagle3.py"][:2] == ["checked against schema of TRT-LLM 1.1.0",
                                                         "2 of 2 code cells checked statically against TRT-LLM 1.1.0"]


def test_coverage_for_a_chosen_track_names_it_on_both_lines_of_a_notebook():
    """`coverage --trtllm 1.1.0` checks the GPU notebook (pinned by its cell to latest, 1.2.0 here)
    against 1.1.0, and both of its lines say so."""
    rows, _ = coverage.collect(FIX / "clean", registry=REG, trtllm="1.1.0")
    methods = {r.path: r.methods for r in rows}
    assert methods["notebooks/02_gpu_eagle3.py"][:2] == ["checked against schema of TRT-LLM 1.1.0",
                                                         "1 of 1 code cells checked statically against TRT-LLM 1.1.0"]


def test_a_notebook_with_an_unknown_track_stops_coverage_with_its_path(tmp_path):
    root = shutil.copytree(FIX / "clean", tmp_path / "clean")
    notebook = root / "notebooks" / "02_gpu_eagle3.py"
    notebook.write_text(notebook.read_text().replace("#     tier: gpu\n", "#     tier: gpu\n#     track: 9.9.9\n"))
    with pytest.raises(UserError, match=r"^notebooks/02_gpu_eagle3\.py:1:1: unknown TRT-LLM track '9\.9\.9'"):
        coverage.collect(root, registry=REG)


def test_unverified_snippet_and_stale_registry_entries_fail():
    _, diags = coverage.collect(FIX / "coverage_bad", registry=REG)
    assert [str(d) for d in diags] == [
        "snippets/VERIFIED_BY.yaml:2:1: 'snippets/gone.sh' matches no snippet",
        "snippets/VERIFIED_BY.yaml:2:1: tests/fake_suite.py::test_gone: 'test_gone' is not defined in "
        "tests/fake_suite.py",
        "snippets/plain_curl.sh:0:0: not verified: no test in snippets/VERIFIED_BY.yaml runs it, it names nothing "
        "of TRT-LLM that `specdec-guide validate` checks, and it is not a GPU-tier notebook",
    ]


def test_plain_and_markdown_output():
    rows, _ = coverage.collect(FIX / "coverage_bad", registry=REG)
    plain = coverage.plain_table(rows).split("\n")
    assert plain[0].split() == ["SNIPPET", "VERIFIED", "BY"]
    assert plain[2].split(None, 1) == ["snippets/plain_curl.sh", "NOT VERIFIED"]
    md = coverage.markdown_table(rows=rows)
    assert md.startswith("| Snippet | Verified by |\n| --- | --- |\n")
    assert "| `snippets/plain_curl.sh` | **not verified** |" in md


def test_markdown_cells_name_each_test_as_code_so_the_site_can_break_it():
    """A node id in plain text does not wrap and widens the table (tests/test_browser.py); as code,
    one per line, the site's hook gives it break points after each `_`."""
    for label in (coverage.EXECUTED, coverage.READ_BY_TEST):
        cell = coverage._md_method(f"{label} (tests/test_a.py::test_one_long_name, tests/test_b.py::test_two)")
        assert cell == f"{label}: `test_one_long_name`<br>`test_two`", cell


def test_markdown_page_for_the_site(monkeypatch):
    monkeypatch.setenv("SPECDEC_GUIDE_SCHEMA_DIR", str(FIX / "schemas"))
    page = coverage.markdown_page(FIX / "clean")
    assert page.startswith("# How every snippet is verified\n")
    assert "| `snippets/serve/ngram.sh` | checked against schema of TRT-LLM 1.1.0 |" in page


def test_node_id_problem():
    root = FIX / "clean"
    assert coverage.node_id_problem(root, "tests/fake_suite.py::test_curl") is None
    assert coverage.node_id_problem(root, "tests/fake_suite.py::TestNotebooks::test_cpu_notebook[x]") is None
    assert coverage.node_id_problem(root, "tests/fake_suite.py::TestNotebooks::nope") == (
        "'nope' is not defined in tests/fake_suite.py")
    assert coverage.node_id_problem(root, "tests/none.py::t") == "test file 'tests/none.py' does not exist"


def test_cli_exit_codes(monkeypatch):
    env = dict(os.environ, SPECDEC_GUIDE_SCHEMA_DIR=str(FIX / "schemas"))
    ok = subprocess.run([sys.executable, "-m", "specdec_guide", "coverage", "--format", "markdown"],
                        cwd=FIX / "clean", env=env, capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.startswith("| Snippet | Verified by |")
    bad = subprocess.run([sys.executable, "-m", "specdec_guide", "coverage"], cwd=FIX / "coverage_bad", env=env,
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 1
    assert "snippets/plain_curl.sh:0:0: not verified" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_repository_registry_names_existing_tests():
    """Every test the real snippets/VERIFIED_BY.yaml declares must exist."""
    entries, diags = coverage.load_registry(REPO)
    assert diags == []
    assert coverage.check_registry(REPO, entries) == []


def test_validate_does_not_import_coverage():
    """coverage builds on validate (its Verifier lives in validate/verified.py); no import goes back."""
    import ast

    pkg = REPO / "src" / "specdec_guide" / "validate"
    back = []
    for path in sorted(pkg.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([node.module or ""] + [f"{node.module}.{a.name}" for a in node.names]
                     if isinstance(node, ast.ImportFrom) else
                     [a.name for a in node.names] if isinstance(node, ast.Import) else [])
            if any(n == "specdec_guide.coverage" or n.startswith("specdec_guide.coverage.") for n in names):
                back.append(f"{path.name}:{node.lineno}")
    assert len(list(pkg.glob("*.py"))) > 10 and back == []


def test_a_test_that_only_reads_a_file_is_not_called_execution(tmp_path):
    """`read_by:` entries (a `docker run` a test reads but cannot run) are labelled as read, never as executed."""
    from specdec_guide.validate.verified import EXECUTED, READ_BY_TEST, Verifier, load_registry

    (tmp_path / "snippets").mkdir()
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests/test_x.py").write_text("def test_reads():\n    pass\n\ndef test_runs():\n    pass\n")
    (tmp_path / "snippets/docker_run.sh").write_text("docker run --rm hello\n")
    (tmp_path / "snippets/run.sh").write_text("echo hi\n")
    (tmp_path / "snippets/VERIFIED_BY.yaml").write_text(
        "snippets/docker_run.sh:\n  read_by: tests/test_x.py::test_reads\n"
        "snippets/run.sh: tests/test_x.py::test_runs\n"
        "snippets/bad.sh:\n  ran_by: tests/test_x.py::test_runs\n")
    entries, diags = load_registry(tmp_path)
    assert [d.line for d in diags] == [4] and "read_by" in diags[0].message
    v = Verifier(tmp_path, Registry())
    read = v.methods(tmp_path / "snippets/docker_run.sh")
    assert read == [f"{READ_BY_TEST} (tests/test_x.py::test_reads)"] and not any(EXECUTED in m for m in read)
    assert v.methods(tmp_path / "snippets/run.sh") == [f"{EXECUTED} (tests/test_x.py::test_runs)"]
