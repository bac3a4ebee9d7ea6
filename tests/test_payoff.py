"""The cost model behind `estimate` and the site's calculator (specdec_guide.payoff).

Expected values are computed here from the stored measurement's raw milliseconds and from the
figures the page states, never read back from payoff itself.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from specdec_guide import cli, payoff
from specdec_guide.diagnostics import UserError
from specdec_guide.regen import hint

ROOT = Path(__file__).resolve().parents[1]
VERIFY_JSON = ROOT / "benchmarks" / "results" / "verify_cost.json"
OVERLAP_TAX = (0.03, 0.10)  # TensorRT-LLM blog 2 (1.03x) to SGLang (1.1x), as schemas/overlap_cost.yaml sources it


def _ms(kind: str, batch: int, q: int = 1) -> float:
    return next(r["ms"] for r in json.loads(VERIFY_JSON.read_text())[kind] if (r["batch"], r["q"]) == (batch, q))


@pytest.mark.parametrize("kind, value, k, expected", [
    ("length", 2.5, 4, 2.5),
    ("rate", 0.5, 4, 3.0),  # 1 + 0.5 * 4
    ("rate", 0.0, 3, 1.0),
    ("per_position", (1.0, 1.0, 1.0), 3, 4.0),
    ("per_position", (0.5, 0.5), 2, 1.75),  # 1 + 0.5 + 0.25
    ("per_position", (0.8, 0.0, 0.9), 3, 1.8),  # a rejected position ends the chain
])
def test_acceptance_figures_become_tokens_per_step(kind, value, k, expected):
    assert payoff.acceptance_length(kind, value, k) == pytest.approx(expected)


@pytest.mark.parametrize("kind, value, k, message", [
    ("length", 0.9, 4, "between 1 and max_draft_len + 1 = 5"),
    ("length", 5.5, 4, "between 1 and max_draft_len + 1 = 5"),
    ("rate", 1.2, 4, "between 0 and 1"),
    ("per_position", (0.5, 0.5), 3, "one figure per draft position: 3"),
    ("per_position", (0.5, 1.5), 2, "between 0 and 1"),
])
def test_bad_acceptance_figures_are_refused(kind, value, k, message):
    with pytest.raises(UserError, match=message.replace("+", r"\+")):
        payoff.acceptance_length(kind, value, k)


def test_predict_divides_tokens_by_the_step_cost_and_ranges_by_the_tax():
    p = payoff.predict(3.0, 2, 0.1, payoff.VerifyCost(1.2, "given"), (0.05, 0.10))
    assert p.readings == (pytest.approx(3.0 / 1.4),)
    assert p.low == pytest.approx(3.0 / 1.4 / 1.10) and p.high == pytest.approx(3.0 / 1.4 / 1.05)
    flat = payoff.predict(3.0, 2, 0.1, payoff.VerifyCost(1.2, "given"))
    assert flat.low == flat.high == pytest.approx(3.0 / 1.4)


def test_ngram_is_priced_at_the_batch_with_the_overlap_tax():
    c, _, verify, tax, counted = payoff.costs("ngram", 4, 16)
    assert c == 0.0
    assert verify.factor == pytest.approx(_ms("target", 16, 5) / _ms("target", 16, 1))
    assert tax == OVERLAP_TAX
    assert any("overlap scheduler off for NGram" in line for line in counted)


def test_one_model_forms_keep_the_overlap_scheduler_and_two_model_forms_pay():
    assert payoff.costs("eagle3", 3, 1, draft_cost=0.05)[3] == (0.0, 0.0)
    assert payoff.costs("eagle3_two_model", 3, 1, draft_cost=0.05)[3] == OVERLAP_TAX
    assert payoff.costs("mtp", 3, 1, draft_cost=0.05)[3] == (0.0, 0.0)
    assert payoff.costs("draft_target", 3, 1)[3] == OVERLAP_TAX
    assert payoff.costs("ngram", 3, 1, count_overlap=False)[3] == (0.0, 0.0)


def test_draft_target_takes_the_stored_draft_pass_and_interpolates_it():
    assert payoff.costs("draft_target", 4, 4)[0] == pytest.approx(_ms("draft", 4) / _ms("target", 4))
    at_8 = payoff.costs("draft_target", 4, 8)[0]
    share4, share16 = _ms("draft", 4) / _ms("target", 4), _ms("draft", 16) / _ms("target", 16)
    assert at_8 == pytest.approx(share4 + (share16 - share4) * (8 - 4) / (16 - 4))


@pytest.mark.parametrize("form_id", ["eagle3", "eagle3_two_model", "mtp", "user_provided"])
def test_a_method_without_a_draft_figure_asks_for_one(form_id):
    with pytest.raises(UserError, match="--draft-cost"):
        payoff.costs(form_id, 3, 1)


def test_verification_can_be_left_out_or_given():
    assert payoff.costs("ngram", 4, 64, count_verify=False)[2].factor == 1.0
    assert payoff.costs("ngram", 4, 64, verify_cost=1.7)[2].factor == 1.7


def test_the_cli_prices_an_acceptance_figure_as_predict_does(capsys):
    assert cli.main(["estimate", "--acceptance-rate", "0.5", "--max-draft-len", "4", "--method",
                     "eagle3_two_model", "--draft-cost", "0.05", "--batch-size", "16", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    v = _ms("target", 16, 5) / _ms("target", 16, 1)
    reading = 3.0 / (4 * 0.05 + v)
    assert got["acceptance_length"] == pytest.approx(3.0)
    assert got["speedup_range"] == [pytest.approx(reading / 1.10), pytest.approx(reading / 1.03)]
    assert cli.main(["estimate", "--acceptance-length", "3", "--max-draft-len", "4", "--method", "ngram"]) == 0
    out = capsys.readouterr().out
    assert "counted:" in out and "verification" in out and "overlap scheduler off for NGram" in out
    v1 = _ms("target", 1, 5) / _ms("target", 1, 1)
    assert f"predicted speed-up: {3 / v1 / 1.10:.2f}-{3 / v1 / 1.03:.2f}x" in out, out


@pytest.mark.parametrize("args, message", [
    (["--acceptance-length", "2"], "give --max-draft-len K"),
    (["--acceptance-length", "2", "--max-draft-len", "3", "--method", "mtp"], "MTP: no measured figure"),
    (["--acceptance-length", "2", "--acceptance-rate", "0.5", "--max-draft-len", "3"], "give one of"),
    (["log.jsonl", "--acceptance-length", "2", "--max-draft-len", "3"], "an acceptance figure replaces the log"),
    (["--per-position", "0.5,0.5", "--max-draft-len", "3"], "one figure per draft position: 3"),
    (["--acceptance-length", "2", "--max-draft-len", "3", "--batch-size", "200"], "batch size 200 is outside"),
    ([], "give a LOG to replay, or an acceptance figure"),
    # outside the measured batches each lookup names its own flag: v first, then the draft pass
    (["--method", "draft_target", "--acceptance-length", "2", "--max-draft-len", "3", "--batch-size", "200"],
     "batch size 200 is outside the measured 1-128; give --verify-cost instead"),
    (["--method", "draft_target", "--acceptance-length", "2", "--max-draft-len", "3", "--batch-size", "200",
      "--verify-cost", "2"], "batch size 200 is outside the measured 1-128; give --draft-cost instead"),
])

def test_bad_figure_inputs_are_one_line(capsys, args, message):
    assert cli.main(["estimate", *args]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err, err
    assert len([line for line in err.strip().splitlines() if not line.startswith((" ", "usage:"))]) == 1, err


def test_a_batch_outside_the_measurement_is_priced_with_the_readers_own_v_and_c(capsys):
    assert cli.main(["estimate", "--method", "draft_target", "--acceptance-length", "2.5", "--max-draft-len", "3",
                     "--batch-size", "200", "--verify-cost", "2", "--draft-cost", "0.25", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    reading = 2.5 / (3 * 0.25 + 2)
    assert got["speedup_range"] == [pytest.approx(reading / 1.10), pytest.approx(reading / 1.03)]


def test_the_calculator_pages_command_prints_its_stored_output_exactly(capsys):
    """The page walk compares outputs by shape (digits masked); the figures themselves are compared here."""
    import shlex

    line = next(x for x in (ROOT / "snippets/tools/estimate_figure.sh").read_text().splitlines()
                if x.startswith("specdec-guide estimate"))
    assert cli.main(shlex.split(line)[1:]) == 0
    assert capsys.readouterr().out == (ROOT / "snippets/tools/output/estimate_figure.out").read_text(), \
        f"estimate_figure.out differs from a fresh run: {hint('walks', 'speculative_decoding/calculator.md')}"


def test_a_bad_cost_block_in_the_methods_registry_is_named(tmp_path):
    from specdec_guide.releases import methods

    text = (ROOT / "src/specdec_guide/schemas/methods.yaml").read_text()
    bad = tmp_path / "methods.yaml"
    bad.write_text(text.replace("draft_cost: draft_pass", "draft_cost: -1"))
    with pytest.raises(UserError, match="method draft_target: cost.draft_cost must be a number >= 0"):
        methods.load(bad)


def test_an_empty_per_position_item_is_refused_not_skipped(capsys):
    with pytest.raises(SystemExit) as err:
        cli.main(["estimate", "--per-position", "0.9,,0.8"])
    assert err.value.code == 2
    assert "expected comma-separated numbers between 0 and 1, got '0.9,,0.8'" in capsys.readouterr().err


def test_acceptance_figures_at_their_bounds_and_the_messages():
    assert payoff.acceptance_length("length", 1.0, 4) == 1.0
    assert payoff.acceptance_length("length", 5.0, 4) == 5.0
    assert payoff.acceptance_length("rate", 1.0, 4) == 5.0
    assert payoff.acceptance_length("per_position", (0.0, 1.0), 2) == 1.0
    with pytest.raises(UserError, match=r"^each per-position acceptance is between 0 and 1$"):
        payoff.acceptance_length("per_position", (0.5, -0.1), 2)
    with pytest.raises(UserError, match=r"^unknown acceptance kind 'odd'; one of length, rate, per_position$"):
        payoff.acceptance_length("odd", 1.0, 2)


def test_a_verify_table_that_is_not_an_object_or_has_no_draft_rows(tmp_path):
    listed = tmp_path / "list.json"
    listed.write_text("[1, 2]\n")
    with pytest.raises(UserError, match=r"list\.json:1:1: expected a 'target' list of \{batch, q, ms\} rows"):
        payoff.VerifyTable(listed)
    bare = tmp_path / "bare.json"
    bare.write_text('{"target": [{"batch": 1, "q": 1, "ms": 2.0}, {"batch": 1, "q": 2, "ms": 3.0}]}\n')
    table = payoff.VerifyTable(bare)
    assert table.path == bare and table.cost(1, 1).factor == 1.5
    with pytest.raises(UserError) as err:
        table.draft_cost(1)
    assert str(err.value) == f"{bare}:1:1: no 'draft' rows to read a draft pass from"


def test_a_prediction_as_json_names_every_term():
    p = payoff.predict(3.0, 2, 0.1, payoff.VerifyCost(1.2, "given"), (0.05, 0.10), ("a", "b"))
    assert p.as_json() == {"speedup_range": [p.low, p.high], "readings": [3.0 / 1.4], "draft_len": 2,
                           "draft_cost": 0.1, "verify_cost": 1.2, "verify_cost_source": "given",
                           "overlap_tax": [0.05, 0.10], "counted": ["a", "b"]}


def _table(tmp_path: Path, data, name: str = "table.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


TARGET_ROWS = [{"batch": 1, "q": 1, "ms": 2.0}, {"batch": 1, "q": 3, "ms": 3.0},
               {"batch": 4, "q": 1, "ms": 4.0}, {"batch": 4, "q": 3, "ms": 8.0}]


def test_a_verify_table_says_what_it_measured_and_where_it_is(tmp_path):
    full = _table(tmp_path, {"target": TARGET_ROWS, "machine": {"device": "GPU X"}, "shapes": {"target": {"name": "Tiny"}},
                             "date": "2030-01-02"})
    t = payoff.VerifyTable(full)
    assert t.name == str(full)
    assert t.what == (f"{full}: GPU X, random-weight Tiny-shaped target, plain PyTorch with CUDA graphs, 2030-01-02; "
                      "not TensorRT-LLM")
    bare = payoff.VerifyTable(_table(tmp_path, {"target": TARGET_ROWS, "machine": "GPU X", "shapes": ["Tiny"]}, "b.json"))
    assert bare.what.endswith("b.json: unknown GPU, random-weight Llama-shaped target, plain PyTorch with CUDA graphs, "
                              "undated; not TensorRT-LLM")
    bare2 = payoff.VerifyTable(_table(tmp_path, {"target": TARGET_ROWS, "machine": {}, "shapes": {}}, "c.json"))
    assert "c.json: unknown GPU, random-weight Llama-shaped target" in bare2.what
    stored = payoff.VerifyTable(VERIFY_JSON)
    assert stored.name == "benchmarks/results/verify_cost.json"
    assert stored.what.startswith("benchmarks/results/verify_cost.json: NVIDIA H200 (141 GB), random-weight "
                                  "Llama-3.1-8B-shaped target")


def test_a_verify_table_interpolates_between_measured_points(tmp_path):
    t = payoff.VerifyTable(_table(tmp_path, {"target": TARGET_ROWS}))
    assert t.ratio == {1: {1: 1.0, 3: 1.5}, 4: {1: 1.0, 3: 2.0}}
    assert t.cost(1, 2) == payoff.VerifyCost(1.5, "at batch 1, 3 tokens checked; both measured", t.what)
    assert t.cost(4, 1).factor == pytest.approx(1.5)  # q = 2: half-way between 1.0 and 2.0
    assert t.cost(4, 1).source == "at batch 4, 2 tokens checked; interpolated: tokens between measured 1 and 3"
    got = t.cost(2, 2)  # batch 2: a third of the way from 1 (1.5) to 4 (2.0)
    assert got.factor == pytest.approx(1.5 + 0.5 / 3)
    assert got.source == "at batch 2, 3 tokens checked; interpolated: batch between measured 1 and 4"
    assert t.cost(2, 1).source == ("at batch 2, 2 tokens checked; interpolated: batch between measured 1 and 4, "
                                   "tokens between measured 1 and 3")
    for batch, k, message in ((5, 1, "batch size 5 is outside the measured 1-4; give --verify-cost instead"),
                              (1, 3, "max_draft_len + 1 = 4 is outside the measured 1-3; give --verify-cost instead")):
        with pytest.raises(UserError) as err:
            t.cost(batch, k)
        assert str(err.value) == f"{t.name}: {message}"


@pytest.mark.parametrize("data", [
    {"target": [{"batch": 1, "q": 2, "ms": 3.0}]},  # no q = 1 row
    {"target": [{"batch": 1, "q": 1, "ms": 0.0}]},  # a q = 1 row of no time
    {"target": [{"batch": 1, "q": 1, "ms": -1.0}]},
    {"target": [{"batch": 1, "q": 1, "ms": 2.0}, {"batch": 1, "q": 2}]},  # a row without ms
    {"target": [{"batch": 1, "q": 1, "ms": "fast"}]},
    {"target": [{"batch": 1, "q": 1, "ms": 2.0}, 5]},
    {"target": {"batch": 1}},
    {"rows": []},
])
def test_a_verify_table_without_usable_target_rows_is_refused(tmp_path, data):
    path = _table(tmp_path, data)
    with pytest.raises(UserError) as err:
        payoff.VerifyTable(path)
    assert str(err.value) == (f"{path}:1:1: expected a 'target' list of {{batch, q, ms}} rows with a q = 1 row per "
                              "batch, as benchmarks/verify_cost.py writes")


def test_draft_rows_are_one_token_passes_of_a_measured_batch(tmp_path):
    draft = [{"batch": 1, "q": 1, "ms": 0.5}, {"batch": 4, "q": 1, "ms": 2.0}, {"batch": 4, "q": 2, "ms": 9.0},
             {"batch": 16, "q": 1, "ms": 1.0}, "row", {"q": 1}]
    t = payoff.VerifyTable(_table(tmp_path, {"target": TARGET_ROWS, "draft": draft}))
    assert t.draft_share == {1: 0.25, 4: 0.5}
    assert t.draft_cost(2) == pytest.approx(0.25 + 0.25 / 3)
    assert t.as_data() == {"what": t.what, "name": t.name, "target": [[1, [[1, 1.0], [3, 1.5]]], [4, [[1, 1.0], [3, 2.0]]]],
                           "draft": [[1, 0.25], [4, 0.5]]}
    with pytest.raises(UserError, match="batch size 5 is outside the measured 1-4; give --draft-cost instead"):
        t.draft_cost(5)


@pytest.mark.parametrize("k, length", [(1, 1.0), (1, 2.0), (1, 1.5), (4, 3.0), (3, 2.952)])
def test_the_acceptance_that_gives_a_length(k, length):
    a = payoff.per_token_acceptance_from_length(length, k)
    assert 0.0 <= a <= 1.0
    # (1 - a^(k+1)) / (1 - a), written out here: the sum 1 + a + ... + a^k
    assert sum(a ** i for i in range(k + 1)) == pytest.approx(length, abs=1e-6)


def test_the_inverse_halves_0_to_1_sixty_times():
    """One token per step is a = 0 exactly; sixty halvings of [0, 1] end on [0, 2**-60], and the answer
    is that interval's midpoint, the same for every draft length."""
    for k in (1, 4):
        assert payoff.per_token_acceptance_from_length(1.0, k) == 2.0 ** -61


@pytest.mark.parametrize("k, length", [(1, 1.5), (2, 2.2), (4, 1.25)])
def test_the_inverse_answers_where_the_computed_length_first_reaches_the_target(k, length):
    """In floating point the length stays the same over a few neighbouring a: the answer is the first a
    that reaches the target (the float below it falls short), not the last one that does not pass it."""
    a = payoff.per_token_acceptance_from_length(length, k)
    below, above = math.nextafter(a, 0.0), math.nextafter(a, 2.0)
    assert payoff.expected_tokens_per_step(below, k) < length <= payoff.expected_tokens_per_step(above, k)


def test_an_acceptance_length_outside_1_to_k_plus_1_has_no_acceptance():
    for length in (0.99, 5.01):
        with pytest.raises(ValueError, match=r"^tokens per step must be between 1 and draft_len \+ 1 = 5, got "):
            payoff.per_token_acceptance_from_length(length, 4)


def test_the_calculator_gets_every_form_and_the_sources():
    data = payoff.calculator_data()
    assert set(data) == {"verify", "overlap", "forms"}
    assert data["verify"] == payoff.VerifyTable(VERIFY_JSON).as_data()
    assert (data["overlap"]["low"], data["overlap"]["high"]) == OVERLAP_TAX
    assert data["overlap"]["source"].endswith("src/specdec_guide/schemas/overlap_cost.yaml")
    assert "https://lmsys.org/blog/2024-12-04-sglang-v0-4/#zero-overhead-batch-scheduler" in data["overlap"]["urls"]
    by_id = {f["id"]: f for f in data["forms"]}
    assert {"ngram", "draft_target", "eagle3", "eagle3_two_model", "mtp", "user_provided"} <= set(by_id)
    assert set(by_id["ngram"]) == {"id", "method", "label", "overlap_scheduler", "why", "draft_cost",
                                   "draft_cost_source"}
    assert (by_id["ngram"]["method"], by_id["ngram"]["overlap_scheduler"], by_id["ngram"]["draft_cost"]) == (
        "ngram", False, 0)
    assert by_id["draft_target"]["draft_cost"] == "draft_pass" and by_id["eagle3"]["overlap_scheduler"] is True
    assert by_id["eagle3_two_model"]["why"] == "guide_config" and by_id["ngram"]["why"] == "release"


def test_an_unknown_method_lists_the_known_ones():
    with pytest.raises(UserError) as err:
        payoff.form("lookahead")
    ids = [f.id for f in payoff.forms()]
    assert str(err.value) == f"unknown method 'lookahead'; choose one of: {', '.join(ids)}"
    assert payoff.form("ngram").label == "NGram"


def test_defaults_and_sources_of_the_costs():
    assert payoff.expected_speedup(1.0, 4, 0.0) == 5.0  # verification taken as one plain step unless given
    given = payoff.costs("ngram", 3, 1, draft_cost=0.2, verify_cost=1.7, count_overlap=False)
    assert given[:2] == (0.2, "given") and given[2] == payoff.VerifyCost(1.7, "given")
    assert given[4][:2] == ("draft 0.200 per draft token (given)", "verification 1.700 (given)")
    kept = payoff.costs("eagle3", 3, 1, draft_cost=0.05)
    assert kept[4][-1] == f"overlap scheduler: kept on for {payoff.form('eagle3').label}, nothing to charge"


def test_a_form_without_a_draft_source_says_nothing(monkeypatch):
    from types import SimpleNamespace

    from specdec_guide.releases import methods

    fake = [SimpleNamespace(id="m", cost={"forms": [{"id": "f", "label": "F", "overlap_scheduler": True}]})]
    monkeypatch.setattr(methods, "load", lambda: fake)
    assert payoff.forms() == (payoff.Form("f", "F", "m", True, None, None, ""),)


def test_a_fast_one_token_pass_is_a_measurement(tmp_path):
    path = tmp_path / "fast.json"
    path.write_text(json.dumps({"target": [{"batch": 1, "q": 1, "ms": 0.5}, {"batch": 1, "q": 2, "ms": 0.75}]}))
    assert payoff.VerifyTable(path).cost(1, 1).factor == 1.5
