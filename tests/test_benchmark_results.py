"""The stored real-model run: its table is rendered from its JSON, and its verdicts follow from its times.

The "Speed on a CPU" page includes ``benchmarks/results/real_model.md`` as written. These tests
make sure no figure or verdict in it was typed by hand: the file must be what the benchmark's
own ``table()`` makes of ``real_model.json``, and each speed-up and goal line must follow from the
stored times.
"""

from __future__ import annotations

import copy
import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("real_model_bench", ROOT / "benchmarks" / "real_model.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def stored():
    return json.loads((RESULTS / "real_model.json").read_text())


def test_the_included_table_is_rendered_from_the_stored_json(bench, stored):
    assert (RESULTS / "real_model.md").read_text() == bench.table(stored)


def test_speedups_and_the_goal_follow_from_the_stored_times(bench, stored):
    for kind, rows in stored["results"].items():
        for name in bench.LABELS:
            base = rows["hf_greedy" if name.startswith("hf_") else "baseline"]
            assert rows[name]["speedup"] == pytest.approx(base["cpu_s"] / rows[name]["cpu_s"], abs=0.011), (kind, name)
    assert stored["goal"] == bench.goal(stored["results"])
    assert set(stored["goal"]) == set(bench.GOAL_KINDS)


def test_the_run_checked_every_greedy_output(stored):
    assert stored["greedy_identical"] is True, stored["mismatches"]
    assert stored["settings"]["repeats"] >= 1 and stored["settings"]["max_tokens"] > 0


def test_a_slower_ngram_is_reported_as_a_missed_goal(bench, stored):
    worse = copy.deepcopy(stored)
    rows = worse["results"]["code editing"]
    rows["ngram"]["speedup"] = rows["hf_prompt_lookup"]["speedup"] - 0.01
    worse["goal"] = bench.goal(worse["results"])
    assert worse["goal"]["code editing"]["met"] is False
    assert "code editing: ours" in bench.table(worse) and "NOT met" in bench.table(worse)


def test_different_pass_counts_are_named(bench, stored):
    other = copy.deepcopy(stored)
    other["results"]["open chat"]["ngram"]["passes"] += 1
    assert "different (open chat" in bench.same_drafts(other["results"])


# -- the served NGram run (benchmarks/served_ngram.py, the "Served through Triton" section) -------
@pytest.fixture(scope="module")
def served_bench():
    spec = importlib.util.spec_from_file_location("served_ngram_bench", ROOT / "benchmarks" / "served_ngram.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def served():
    return json.loads((RESULTS / "served_ngram.json").read_text())


def test_the_served_table_is_rendered_from_the_stored_json(served_bench, served):
    assert (RESULTS / "served_ngram.md").read_text() == served_bench.table(served)
    assert served["greedy_identical"] is True, served["mismatches"]


def test_served_pass_costs_follow_from_the_stored_times(served_bench, served):
    rows = served["results"]
    assert set(rows) == set(served_bench.LABELS)
    for name, row in rows.items():
        assert row["cpu_ms_per_pass"] == pytest.approx(1000 * row["cpu_s"] / row["passes"], abs=0.1), name
        if not name.startswith("hf_"):
            assert row["passes"] == row["generated"] - row["accepted"], name
    # The page's reading: served and in-process drafted alike with the public pool, so their pass
    # costs compare the same work; a pool per request served makes the fresh in-process pool's passes.
    assert (rows["served_ngram"]["drafted"], rows["served_ngram"]["accepted"]) == (
        rows["inproc_ngram"]["drafted"], rows["inproc_ngram"]["accepted"])
    assert rows["served_ngram_private"]["passes"] == rows["inproc_ngram_fresh"]["passes"]


def test_different_served_drafts_are_named(served_bench, served):
    other = copy.deepcopy(served)
    other["results"]["inproc_ngram"]["drafted"] += 1
    assert "drafted differently" in "\n".join(served_bench.verdict(other["results"]))
