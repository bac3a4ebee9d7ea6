"""Notebook pairs stay in sync, declare their tier, and store outputs of a real run.

Executing the CPU notebooks is nbmake's job (they are collected from notebooks/); these tests
check what the site renders: the stored .ipynb.
"""

from __future__ import annotations

import itertools
import json
import re
import shutil
import subprocess
import sys
import time

import pytest

from site_build import ROOT
from specdec_guide import gpu_tier
from specdec_guide.diagnostics import UserError
from specdec_guide.notebooks import list_notebooks, out_of_sync, stale_outputs

NOTEBOOKS = list_notebooks(ROOT)


def test_there_are_notebooks_and_each_has_a_pair():
    assert NOTEBOOKS
    for info in NOTEBOOKS:
        assert info.paired.is_file(), f"{info.source} has no paired .ipynb"


@pytest.mark.parametrize("info", NOTEBOOKS, ids=lambda i: i.source.name)
def test_pair_is_in_sync(info):
    assert out_of_sync(info) is None


@pytest.mark.parametrize("info", [i for i in NOTEBOOKS if i.tier == "cpu"], ids=lambda i: i.source.name)
def test_cpu_notebook_outputs_come_from_a_run_of_the_current_source(info):
    assert stale_outputs(info) is None


def _edit(src, pattern, repl):
    """Edit one line of a notebook source; fail loudly if the line is not there any more."""
    text, n = re.subn(pattern, repl, src.read_text(), count=1, flags=re.M)
    assert n == 1, f"{src.name}: no line matches {pattern!r}: update this test with the notebook"
    src.write_text(text)


@pytest.fixture()
def copied(tmp_path):
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "mkdocs.yml").write_text("site_name: copy\n")
    info = NOTEBOOKS[0]
    for path in (info.source, info.paired):
        shutil.copy2(path, tmp_path / "notebooks" / path.name)
    return tmp_path, tmp_path / "notebooks" / info.source.name


def test_an_edited_source_is_reported_out_of_sync_and_stale(copied):
    root, src = copied
    _edit(src, r"^MAX_NEW = (\d+)$", lambda m: f"MAX_NEW = {int(m[1]) + 1}")
    info = list_notebooks(root)[0]
    assert "differs" in out_of_sync(info)
    # once synced, the outputs are still those of the old code: stale
    from specdec_guide.notebooks import sync
    sync(info)
    assert out_of_sync(info) is None
    assert "code changed since the stored run" in stale_outputs(info)


def test_a_notebook_without_a_tier_is_rejected(copied):
    root, src = copied
    src.write_text(src.read_text().replace("#     tier: cpu\n", ""))
    with pytest.raises(UserError, match="must declare specdec_guide.tier"):
        list_notebooks(root)


def test_a_gpu_notebook_must_name_its_container(copied):
    root, src = copied
    src.write_text(src.read_text().replace("#     tier: cpu\n", "#     tier: gpu\n"))
    with pytest.raises(UserError, match="container, trtllm_version"):
        list_notebooks(root)


def test_a_notebook_that_did_not_run_is_stale(copied):
    root, _ = copied
    info = list_notebooks(root)[0]
    nb = json.loads(info.paired.read_text())
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            cell["execution_count"] = None
    info.paired.write_text(json.dumps(nb))
    assert "did not run" in stale_outputs(info)


@pytest.mark.skipif(not gpu_tier.missing(), reason="this machine has a GPU and tensorrt_llm: the GPU tier can run")
def test_gpu_tier_refuses_to_pass_with_nothing_run():
    proc = subprocess.run([sys.executable, "-m", "specdec_guide.gpu_tier"], capture_output=True, text=True)
    assert proc.returncode == 1
    assert "cannot run on this machine" in proc.stderr


def _notebook(path, tier, source):
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.metadata["specdec_guide"] = {"tier": tier}
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(source)]
    nbformat.write(nb, path)


@pytest.mark.skipif(not gpu_tier.missing(), reason="this machine has a GPU and tensorrt_llm: the GPU tier can run")
def test_gpu_notebooks_are_collected_and_skipped_with_the_reason(tmp_path):
    """The root conftest, on a throw-away tree: the CPU notebook runs, the GPU one is skipped."""
    shutil.copy2(ROOT / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "notebooks").mkdir()
    _notebook(tmp_path / "notebooks/cpu.ipynb", "cpu", "assert 1 + 1 == 2")
    _notebook(tmp_path / "notebooks/gpu.ipynb", "gpu", "import tensorrt_llm")
    proc = subprocess.run([sys.executable, "-m", "pytest", "--nbmake", "-rs", "-p", "no:cacheprovider", "notebooks"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert "1 passed, 1 skipped" in proc.stdout, proc.stdout + proc.stderr
    assert "notebooks/gpu.ipynb" in proc.stdout and gpu_tier.SKIP_REASON in proc.stdout


def test_a_failing_notebook_run_is_reported_in_one_line_and_keeps_the_stored_outputs(copied):
    from specdec_guide.notebooks import execute

    root, src = copied
    # In the first code cell: the run fails before it loads any model (a later cell costs ~10 s more).
    _edit(src, r"^import time$", lambda m: m[0] + "\nraise RuntimeError('boom')")
    info = list_notebooks(root)[0]
    with pytest.raises(UserError) as err:
        execute(info, timeout=120)
    assert "failed" in str(err.value) and "boom" in str(err.value) and "\n" not in str(err.value)
    # Nothing from the failed run was stored: no error output, and the stamp is the old run's,
    # so the check still says the outputs are stale.
    outputs = [o for c in json.loads(info.paired.read_text())["cells"] for o in c.get("outputs", [])]
    assert outputs and not [o for o in outputs if o.get("output_type") == "error"]
    assert "code changed since the stored run" in stale_outputs(info)


@pytest.mark.skipif(not gpu_tier.missing(), reason="this machine has a GPU and tensorrt_llm: the GPU tier can run")
def test_make_test_gpu_stops_before_installing_anything_here():
    proc = subprocess.run(["make", "test-gpu"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert "cannot run on this machine" in proc.stderr and "pip install" not in proc.stdout + proc.stderr


def test_a_notebooks_own_cell_timeout_is_honoured(tmp_path):
    """`execution.timeout` in a notebook's metadata (nbmake reads it too) bounds each of its cells."""
    from specdec_guide.notebooks import execute

    (tmp_path / "notebooks").mkdir()
    (tmp_path / "mkdocs.yml").write_text("site_name: copy\n")
    src = tmp_path / "notebooks" / "slow.py"
    src.write_text("# ---\n# jupyter:\n#   execution:\n#     timeout: 2\n#   kernelspec:\n#     display_name: Python 3\n"
                   "#     language: python\n#     name: python3\n#   specdec_guide:\n#     tier: cpu\n# ---\n\n"
                   "# %%\nimport time\ntime.sleep(30)\n")
    info = list_notebooks(tmp_path)[0]
    started = time.monotonic()
    with pytest.raises(UserError, match="cell 1 failed|a cell failed"):
        execute(info, timeout=600)
    assert time.monotonic() - started < 25


# --- the benchmarking notebook's reading follows from its stored numbers ---

def _stored_output(notebook: str, marker: str) -> str:
    """The text of the stored output that has a line starting with ``marker``."""
    nb = json.loads((ROOT / "notebooks" / notebook).read_text())
    for cell in nb["cells"]:
        for out in cell.get("outputs", []):
            text = "".join(out.get("text", ""))
            if any(line.startswith(marker) for line in text.splitlines()):
                return text
    raise AssertionError(f"{notebook}: no stored output has a line starting with {marker!r}: update this test with the notebook")


def _stored_table(notebook: str, header: str) -> tuple[list[list[str]], str]:
    """The rows (split at spaces, up to a blank line) of the printed table whose header line starts with ``header``,
    and what the same output printed above the header (the sweep's teaching-mode label)."""
    text = _stored_output(notebook, header)
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith(header))
    rows = list(itertools.takewhile(str.strip, lines[at + 1:]))  # the table ends at a blank line
    return [line.split() for line in rows], "\n".join(lines[:at])


TEACHING_LABEL_WORDS = ("TEACHING MODE", "cpu_behaviour: stream_per_step, filled_draft_counters", "#14079", "#17082",
                        "not the pinned 1.1.0 / 1.2.1 container")


def test_benchmarking_notebooks_reading_follows_from_its_stored_tables():
    """Each claim of 08's "How to read this" paragraphs, checked against the stored outputs: after a
    re-run that changes them, this fails until the prose is changed with them."""
    prose = (ROOT / "notebooks" / "08_benchmarking.py").read_text()
    throughput, label = _stored_table("08_benchmarking.ipynb", "server    conc")
    # The sweep ran in the stand-in's teaching mode, and its printed tables say so.
    assert all(w in label for w in TEACHING_LABEL_WORDS), label
    # "This notebook measures one level": one row per server, at concurrency 1.
    assert "This notebook measures one level" in prose
    assert sorted((r[0], r[1]) for r in throughput) == [("baseline", "1"), ("ngram", "1")], throughput
    table, label = _stored_table("08_benchmarking.ipynb", "server    set")
    assert all(w in label for w in TEACHING_LABEL_WORDS), label
    rows = {(r[0], r[1]): r for r in table}
    code, chat = rows[("ngram", "code-editing")], rows[("ngram", "chat")]
    # columns: server set requests tokens drafted accepted rate length
    assert "longer acceptance length but the\n# lower acceptance rate" in prose
    assert float(code[7]) > float(chat[7]) and float(code[6]) < float(chat[6]), (code, chat)
    assert "a few dozen drafted tokens" in prose and all(12 <= int(r[4]) < 100 for r in (code, chat))
    assert "far below NGram's ceiling of 5" in prose and max(float(code[7]), float(chat[7])) < 2.5
    assert "twice" not in prose.split("How to read this on this machine")[1].split("max_tokens` trap")[0]
    # ...and what it says the page "Speed on a CPU" measures (its stored run, benchmarks/results).
    real = json.loads((ROOT / "benchmarks" / "results" / "real_model.json").read_text())["results"]
    assert "code editing accepts far more than open\n# chat" in prose
    assert real["code editing"]["ngram"]["acceptance_rate"] > 3 * real["open chat"]["ngram"]["acceptance_rate"]


def test_benchmarking_notebooks_release_section_follows_from_its_stored_output():
    """08's first section, as the pinned release: what its prose says (one event, TTFT equal to the
    request latency, ITL 0.0 ms, zero counters, from a server with no departures) is what it printed."""
    prose = (ROOT / "notebooks" / "08_benchmarking.py").read_text()
    text = _stored_output("08_benchmarking.ipynb", "one streamed request:")
    assert "departures asked: none (answers as the release)" in text and "TEACHING" not in text, text
    assert re.search(r"^one streamed request: 1 event\(s\); its counters: total_draft_tokens=0, "
                     r"total_accepted_draft_tokens=0, acceptance_rate=0\.0$", text, re.M), text
    m = re.search(r"TTFT (\d+) ms, request latency (\d+) ms, ITL ([\d.]+) ms", text)
    assert m and m[1] == m[2] and float(m[3]) == 0.0, text
    assert "**TTFT is the request latency**" in prose and "**ITL reads 0.0 ms**" in prose
    sums = re.findall(r"(\S+) drafted (\d+), accepted (\d+)", text)
    assert sums and all(d == a == "0" for _, d, a in sums), text
    assert "**acceptance counters read zero**" in prose



def test_a_gpu_runs_stamp_names_the_gpu_and_driver_nvidia_smi_reports(tmp_path):
    """One reader of nvidia-smi for every stamp (notebooks, benchmarks/verify_cost.py)."""
    fake = tmp_path / "nvidia-smi"
    fake.write_text("#!/bin/sh\necho 'NVIDIA H100 80GB HBM3, 570.86.15'\n")
    fake.chmod(0o755)
    assert gpu_tier.gpu_name_and_driver(str(fake)) == ("NVIDIA H100 80GB HBM3", "570.86.15")
    fake.write_text("#!/bin/sh\nexit 9\n")
    assert gpu_tier.gpu_name_and_driver(str(fake)) == ("unknown", "unknown")
    assert gpu_tier.gpu_name_and_driver(str(tmp_path / "absent")) == ("unknown", "unknown")
