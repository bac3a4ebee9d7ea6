"""The stored benchmark runs: their tables are rendered from their JSON, their verdicts follow from
their times.

The "Speed on a CPU" page includes ``benchmarks/results/real_model.md`` as written, and the box on
"Choosing a method" includes ``benchmarks/results/verify_cost.md``. These tests make sure no
figure or verdict in them was typed by hand: each file must be what its benchmark's own
``table()`` makes of the stored JSON, and each speed-up, ratio and goal line must follow from the
stored times. ``verify_cost.py`` needs a GPU for its real run; here it runs with ``--tiny`` on
the CPU, so the script itself is tested, not only its stored output.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import re
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from specdec_guide.regen import hint

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"{name}_bench", ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def bench():
    return _load("real_model")


@pytest.fixture(scope="module")
def stored():
    return json.loads((RESULTS / "real_model.json").read_text())


def test_the_included_table_is_rendered_from_the_stored_json(bench, stored):
    assert (RESULTS / "real_model.md").read_text() == bench.table(stored), \
        f"real_model.md is not the render of real_model.json: {hint('benchmark-tables', 'real_model')}"


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


# --- the cost of verification (benchmarks/verify_cost.py), quoted on "Choosing a method" ---

@pytest.fixture(scope="module")
def verify_cost():
    return _load("verify_cost")


def _schema_problems(result: dict) -> list[str]:
    """What a verify_cost.json lacks: provenance, settings, a time for every batch size and q."""
    problems = [f"missing {key}" for key in ("what", "date", "produced_by", "machine", "settings", "shapes", "target",
                                             "draft", "target_weights_gb", "draft_weights_gb") if key not in result]
    if problems:
        return problems
    problems += [f"machine lacks {k}" for k in ("device", "driver", "torch", "cuda") if k not in result["machine"]]
    problems += [f"settings lack {k}" for k in ("ctx", "dtype", "timing", "weights", "batches", "q")
                 if k not in result["settings"]]
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", str(result["date"])):
        problems.append(f"date {result['date']!r} is not YYYY-MM-DD")
    batches, qs = result["settings"].get("batches", []), result["settings"].get("q", [])
    target = {(r["batch"], r["q"]): r["ms"] for r in result["target"]}
    draft = {r["batch"]: r["ms"] for r in result["draft"] if r["q"] == 1}
    problems += [f"no target time at batch {b}, q {q}" for b in batches for q in qs if (b, q) not in target]
    problems += [f"no draft time at batch {b}" for b in batches if b not in draft]
    problems += [f"time {ms} is not positive" for ms in [*target.values(), *draft.values()] if not ms > 0]
    if 1 not in qs:
        problems.append("no one-token pass (q = 1) to compare with")
    return problems


@pytest.fixture(scope="module")
def stored_verify_cost():
    return json.loads((RESULTS / "verify_cost.json").read_text())


def test_the_stored_verification_cost_run_is_complete_and_says_where_it_ran(stored_verify_cost):
    assert _schema_problems(stored_verify_cost) == []
    m = stored_verify_cost["machine"]
    assert "H200" in m["device"] and m["driver"] and m["torch"].startswith("2.11") and m["cuda"].startswith("13")
    assert stored_verify_cost["date"] == "2026-11-30"
    # Made by the earlier script, and the file says so: not claimed as a run of benchmarks/verify_cost.py.
    assert "not yet by `benchmarks/verify_cost.py`" in stored_verify_cost["produced_by"]


def test_the_box_is_rendered_from_the_stored_run_and_the_page_types_no_figure(verify_cost, stored_verify_cost):
    md = (RESULTS / "verify_cost.md").read_text()
    assert md == verify_cost.table(stored_verify_cost), \
        f"verify_cost.md is not the render of verify_cost.json: {hint('benchmark-tables', 'verify_cost')}"
    page = (ROOT / "docs" / "speculative_decoding" / "choosing_a_method.md").read_text()
    assert '    --8<-- "benchmarks/results/verify_cost.md"' in page  # inside the box, indented
    figures = set(re.findall(r"\d+\.\d+×?", md.split("| --- |")[-1]))
    assert len(figures) > 10
    typed = sorted(f for f in figures if re.search(rf"(?<![\d.]){re.escape(f)}(?![\d])", page))
    assert not typed, f"choosing_a_method.md types figures of the stored run instead of including them: {typed}"
    # The box's title names the stored run's GPU, and its provenance sentence the script that made it.
    title = re.search(r'!!! info "([^"]+)"\n    --8<-- "benchmarks/results/verify_cost.md"', page).group(1)
    assert stored_verify_cost["machine"]["device"].split()[1] in title, title
    made_by = re.search(r"`(\w+\.py)`", stored_verify_cost["produced_by"]).group(1)
    assert f"the run was made by `{made_by}`" in page


def test_the_boxs_ratios_and_verdict_follow_from_the_stored_times(verify_cost, stored_verify_cost):
    from specdec_guide.speculation import expected_tokens_per_step

    one = {r["batch"]: r["ms"] for r in stored_verify_cost["target"] if r["q"] == 1}
    md = verify_cost.table(stored_verify_cost)
    for r in stored_verify_cost["target"]:
        if r["q"] > 1:
            assert f"{r['ms'] / one[r['batch']]:.2f}×" in md.split(f"\n| {r['batch']} | ")[1].split("\n")[0]
    slower = copy.deepcopy(stored_verify_cost)
    slowest_batch = max(one)
    for r in slower["target"]:
        if r["q"] == 5:
            r["ms"] = r["ms"] if r["batch"] == slowest_batch else one[r["batch"]]  # checking 5 tokens made free
    verdict = verify_cost.table(slower).split("Break-even")[1].split("\n")[0]
    assert f"more at {slowest_batch}," in verdict and expected_tokens_per_step(0.6, 4) > 1
    assert verify_cost.table(slower) != md


def test_the_script_runs_on_a_cpu_with_tiny_shapes(verify_cost, tmp_path):
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "verify_cost.py"), "--tiny", "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads((tmp_path / "verify_cost.json").read_text())
    assert _schema_problems(result) == []
    assert result["produced_by"] == "`benchmarks/verify_cost.py`" and result["machine"]["device"].startswith("CPU")
    assert "no CUDA graph" in result["settings"]["timing"]
    assert (tmp_path / "verify_cost.md").read_text() == verify_cost.table(result)


def test_an_incomplete_run_is_reported(stored_verify_cost):
    broken = copy.deepcopy(stored_verify_cost)
    broken["target"] = [r for r in broken["target"] if not (r["batch"] == 64 and r["q"] == 9)]
    del broken["machine"]["driver"]
    assert _schema_problems(broken) == ["machine lacks driver", "no target time at batch 64, q 9"]


def test_the_script_refuses_to_overwrite_the_stored_run_with_a_smoke_test(verify_cost, capsys):
    # The script's main() (what `python verify_cost.py --tiny` exits with), in this process: it
    # refuses before any work, and a new interpreter would only import torch again to say so.
    assert verify_cost.main(["--tiny"]) == 2
    assert "--out" in capsys.readouterr().err


def test_grouped_attention_is_pytorchs_grouped_query_attention_with_the_causal_mask(verify_cost):
    import torch
    import torch.nn.functional as F

    gen = torch.Generator().manual_seed(1)
    batch, q, heads, kv_heads, head_dim, ctx = 2, 3, 8, 2, 4, 5
    queries = torch.randn(batch, q, heads, head_dim, generator=gen)
    keys, values = (torch.randn(batch, kv_heads, ctx + q, head_dim, generator=gen) for _ in range(2))
    mask = verify_cost.causal_mask(q, ctx, "cpu")
    assert mask[0].tolist() == [True] * (ctx + 1) + [False] * (q - 1) and mask[-1].all()
    expected = F.scaled_dot_product_attention(queries.transpose(1, 2), keys, values, attn_mask=mask, enable_gqa=True)
    got = verify_cost.grouped_attention(queries, keys, values, mask, kv_heads)
    assert torch.allclose(got, expected.transpose(1, 2).reshape(batch, q, heads * head_dim), atol=1e-6)


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
    assert (RESULTS / "served_ngram.md").read_text() == served_bench.table(served), \
        f"served_ngram.md is not the render of served_ngram.json: {hint('benchmark-tables', 'served_ngram')}"
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


def _own_baseline(name: str) -> str:
    # Each side against the baseline of its own kind, timed in the same round (the page's reading).
    return {"served": "served_baseline", "inproc": "inproc_baseline", "hf": "hf_greedy"}[name.split("_")[0]]


def test_served_speedups_are_medians_of_the_rounds(served):
    rows, rounds = served["results"], served["settings"]["rounds"]
    assert rounds >= 3 and served["settings"]["max_tokens"] > 0
    for name, row in rows.items():
        assert len(row["rounds_cpu_s"]) == len(row["rounds_wall_s"]) == rounds, name
        assert row["cpu_s"] == pytest.approx(statistics.median(row["rounds_cpu_s"]), abs=0.006), name
        base = rows[_own_baseline(name)]["rounds_cpu_s"]
        ratios = [b / c for b, c in zip(base, row["rounds_cpu_s"])]
        assert row["speedup"] == pytest.approx(statistics.median(ratios), abs=0.0011), name
        assert row["speedup_range"] == pytest.approx([min(ratios), max(ratios)], abs=0.0011), name


def test_the_served_goal_follows_from_the_stored_rounds(served_bench, served):
    rows = served["results"]
    hf = [b / c for b, c in zip(rows["hf_greedy"]["rounds_cpu_s"], rows["hf_prompt_lookup"]["rounds_cpu_s"])]
    for pool, name in (("is_public_pool: false", "served_ngram_private"), ("public pool, as rendered", "served_ngram")):
        ours = [b / c for b, c in zip(rows["served_baseline"]["rounds_cpu_s"], rows[name]["rounds_cpu_s"])]
        goal = served["goal"][pool]
        assert goal["met"] == (rows[name]["speedup"] >= rows["hf_prompt_lookup"]["speedup"]), pool
        assert goal["ahead"] == sum(o >= h for o, h in zip(ours, hf)), pool
        assert f"{pool}: ours {rows[name]['speedup']:.2f}x" in (RESULTS / "served_ngram.md").read_text()
    assert served["goal"] == served_bench.goal(rows)


def test_a_slower_served_ngram_is_reported_as_a_missed_goal(served_bench, served):
    worse = copy.deepcopy(served)
    rows = worse["results"]
    row = rows["served_ngram_private"]
    row["rounds_cpu_s"] = [2 * c for c in rows["served_baseline"]["rounds_cpu_s"]]  # half the baseline's speed
    row["speedup"], row["speedup_range"] = 0.5, [0.5, 0.5]
    worse["goal"] = served_bench.goal(rows)
    assert worse["goal"]["is_public_pool: false"]["met"] is False
    assert worse["goal"]["is_public_pool: false"]["ahead"] == 0
    assert "is_public_pool: false: ours 0.50x" in served_bench.table(worse)
    private = served_bench.goal_line(worse).split("is_public_pool: false:")[1].split(";")[0]
    assert "NOT met, ours at least as fast in 0 of" in private and "overlap" not in private
