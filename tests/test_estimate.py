"""``specdec-guide estimate`` on the tiny models: exact against the CPU engine, formats, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tiny_prompts import TINY_PROMPTS as PROMPTS

from specdec_guide import cli
from specdec_guide.diagnostics import UserError
from specdec_guide.engine.core import Engine
from specdec_guide.estimate import NGramSettings, replay, user_drafter
from specdec_guide.traffic_log import load_tokenizer, read_log

ROOT = Path(__file__).resolve().parents[1]
DRAFTER = ROOT / "snippets" / "drafters" / "prompt_lookup_drafter.py"
SETTINGS = [
    NGramSettings(4, 2),
    NGramSettings(3, 3, is_keep_all=False, is_use_oldest=False, is_public_pool=False),
    NGramSettings(2, 1, is_public_pool=True, is_use_oldest=False),
]


def _yaml(folder: Path, target: Path, spec: str) -> Path:
    path = folder / "model.yaml"
    path.write_text(f"model: {target}\nbackend: pytorch\n{spec}")
    return path


def _serve(engine: Engine, log: Path, max_tokens: list[int]) -> list:
    """Serve PROMPTS in order, write the Triton-shaped log, return the engine's final chunks."""
    chunks = []
    with log.open("w") as fh:
        for prompt, n in zip(PROMPTS, max_tokens):
            request = {"text_input": prompt, "sampling_param_max_tokens": n}
            done = engine.complete(request)
            chunks.append(done)
            # prompt echoed, as the llmapi model does by default: the reader must strip it
            fh.write(json.dumps({**request, "text_output": done.text, "finish_reason": done.finish_reason}) + "\n")
    return chunks


@pytest.mark.parametrize("settings", SETTINGS, ids=lambda s: s.label())
def test_replay_equals_what_the_engine_measures(tiny_models, tmp_path, settings):
    target, _ = tiny_models
    spec = ("speculative_config: {decoding_type: NGram, " + ", ".join(
        f"{k}: {str(getattr(settings, k)).lower()}" for k in settings.__dataclass_fields__) + "}\n")
    engine = Engine.from_yaml(_yaml(tmp_path, target, spec))
    chunks = _serve(engine, tmp_path / "log.jsonl", [24, 7, 31, 2, 16])
    requests = read_log(tmp_path / "log.jsonl", load_tokenizer(target))
    est = replay(requests, settings.drafter(), settings.max_draft_len, "x")
    assert sum(c.total_draft_tokens for c in chunks) > 0
    for chunk, got in zip(chunks, est.requests):
        want = chunk.stats
        assert (got.stats.drafted_tokens, got.stats.accepted_tokens, got.stats.acceptance_lengths) == (
            want.drafted_tokens, want.accepted_tokens, want.acceptance_lengths), got.where


def test_public_pool_makes_order_matter(tiny_models, tmp_path):
    target, _ = tiny_models
    engine = Engine.from_yaml(_yaml(tmp_path, target, ""))
    _serve(engine, tmp_path / "log.jsonl", [32] * len(PROMPTS))
    lines = (tmp_path / "log.jsonl").read_text().splitlines()
    (tmp_path / "reversed.jsonl").write_text("\n".join(reversed(lines)) + "\n")
    tok = load_tokenizer(target)
    forward = {r.where.split(":")[1]: r for r in
               replay(read_log(tmp_path / "log.jsonl", tok), NGramSettings().drafter(), 4, "f").requests}
    back = replay(read_log(tmp_path / "reversed.jsonl", tok), NGramSettings().drafter(), 4, "b")
    # the first request of each order has no predecessor to learn from; the totals differ
    assert back.total.accepted_tokens != sum(r.stats.accepted_tokens for r in forward.values())


def test_user_drafter_replay_equals_the_engine(tiny_models, tmp_path):
    target, _ = tiny_models
    spec = ("speculative_config: {decoding_type: UserProvided, max_draft_len: 4}\n"
            f"triton_config: {{cpu_drafter: '{DRAFTER}:PromptLookupDrafter'}}\n")
    engine = Engine.from_yaml(_yaml(tmp_path, target, spec))
    chunks = _serve(engine, tmp_path / "log.jsonl", [20] * len(PROMPTS))
    tok = load_tokenizer(target)
    est = replay(read_log(tmp_path / "log.jsonl", tok), user_drafter(f"{DRAFTER}:PromptLookupDrafter", 4,
                                                                     tok.eos_token_id), 4, "u")
    assert [r.stats.accepted_tokens for r in est.requests] == [c.total_accepted_draft_tokens for c in chunks]
    assert [r.stats.drafted_tokens for r in est.requests] == [c.total_draft_tokens for c in chunks]


def _write(path: Path, *objs) -> Path:
    path.write_text("".join((o if isinstance(o, str) else json.dumps(o)) + "\n" for o in objs))
    return path


def test_the_three_formats_give_the_same_tokens(tiny_models, tmp_path):
    target, _ = tiny_models
    tok = load_tokenizer(target)
    tok.chat_template = "{% for m in messages %}<s>{{ m['content'] }}</s>{% endfor %}{% if add_generation_prompt %}>{% endif %}"
    log = _write(
        tmp_path / "mixed.jsonl",
        {"prompt": "abc abc", "output": " abc", "finish_reason": "length"},
        {"text_input": "abc abc", "text_output": "abc abc abc"},  # echo stripped
        {"request": {"prompt": "abc abc", "max_tokens": 4}, "response": {"choices": [{"text": " abc"}]}},
        {"request": {"messages": [{"role": "user", "content": "hi"}]},
         "response": {"choices": [{"message": {"content": "ho"}, "finish_reason": "stop"}]}},
    )
    recs = read_log(log, tok)
    assert recs[0].prompt_ids == recs[1].prompt_ids == recs[2].prompt_ids == list(b"abc abc")
    assert recs[0].output_ids == recs[1].output_ids == recs[2].output_ids == list(b" abc")
    assert recs[2].max_tokens == 4
    # chat: the template's text, tokenized without extra special tokens; "stop" appends EOS
    assert recs[3].prompt_ids == [256, *b"hi", 257, ord(">")]
    assert recs[3].output_ids == [*b"ho", tok.eos_token_id]


@pytest.mark.parametrize("line, message", [
    ('{"prompt": "abc"}', "log.jsonl:2:1: missing 'output'"),
    ('{"output": "x"}', "log.jsonl:2:1: missing 'prompt'"),
    ('{"prompt": "a", "output": ', "log.jsonl:2:27: invalid JSON"),
    ('[1, 2]', "log.jsonl:2:1: expected a JSON object"),
    ('{"text_input": "a"}', "log.jsonl:2:1: missing 'text_output'"),
    ('{"request": {"messages": []}, "response": {"choices": []}}', "log.jsonl:2:1: missing 'response.choices[0]'"),
    ('{"prompt": "a", "output": "b", "finish_reason": "eos"}', "finish_reason' must be"),
    ('{"prompt": "a", "output": ""}', "log.jsonl:2:1: the output is empty"),
    ('{"hello": 1}', "log.jsonl:2:1: unrecognised record"),
])
def test_bad_records_name_the_line(tiny_models, tmp_path, monkeypatch, capsys, line, message):
    target, _ = tiny_models
    monkeypatch.chdir(tmp_path)
    _write(tmp_path / "log.jsonl", {"prompt": "a", "output": "b"}, line)
    assert cli.main(["estimate", "log.jsonl", "--tokenizer", str(target)]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_empty_file_missing_file_and_missing_tokenizer(tiny_models, tmp_path, capsys):
    target, _ = tiny_models
    empty = _write(tmp_path / "empty.jsonl", "")
    assert cli.main(["estimate", str(empty), "--tokenizer", str(target)]) == 2
    assert "no records (the file is empty)" in capsys.readouterr().err
    assert cli.main(["estimate", str(tmp_path / "nope.jsonl"), "--tokenizer", str(target)]) == 2
    assert "no such file" in capsys.readouterr().err
    log = _write(tmp_path / "log.jsonl", {"prompt": "a", "output": "b"})
    assert cli.main(["estimate", str(log), "--tokenizer", str(tmp_path / "no_tokenizer")]) == 2
    err = capsys.readouterr().err
    assert "tokenizer" in err and "not found" in err and "Traceback" not in err


def test_cli_table_sweep_and_plot(tiny_models, tmp_path, capsys):
    target, _ = tiny_models
    log = _write(tmp_path / "log.jsonl", *({"prompt": p, "output": p[-12:] * 2} for p in PROMPTS))
    assert cli.main(["estimate", str(log), "--tokenizer", str(target), "--max-draft-len", "3"]) == 0
    out = capsys.readouterr().out
    assert "max_draft_len=3" in out and f"all {len(PROMPTS)} requests" in out and "log.jsonl:5" in out
    png = tmp_path / "sweep.png"
    assert cli.main(["estimate", str(log), "--tokenizer", str(target), "--sweep", "--draft-lens", "1,4",
                     "--ngram-sizes", "1,2", "--plot", str(png)]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") >= 6 and "best: max_draft_len=" in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_json_output_and_draft_cost_lower_the_speedup(tiny_models, tmp_path, capsys):
    target, _ = tiny_models
    log = _write(tmp_path / "log.jsonl", {"prompt": "abc abc abc", "output": " abc abc abc abc"})
    runs = []
    for cost in ("0", "0.5"):
        assert cli.main(["estimate", str(log), "--tokenizer", str(target), "--json", "--draft-cost", cost]) == 0
        runs.append(json.loads(capsys.readouterr().out)["overall"])
    assert runs[0]["accepted"] == runs[1]["accepted"] > 0
    assert runs[1]["speedup_range"][1] < runs[0]["speedup_range"][1]


def test_settings_from_a_yaml_and_refusals(tiny_models, tmp_path, capsys):
    target, _ = tiny_models
    log = _write(tmp_path / "log.jsonl", {"prompt": "abc abc", "output": " abc"})
    cfg = ROOT / "snippets" / "llm_api" / "1.1.0" / "ngram.yaml"
    assert cli.main(["estimate", str(log), "--tokenizer", str(target), "--config", str(cfg)]) == 0
    assert "max_draft_len=4, max_matching_ngram_size=2" in capsys.readouterr().out
    eagle = ROOT / "snippets" / "llm_api" / "1.1.0" / "eagle3.yaml"
    assert cli.main(["estimate", str(log), "--tokenizer", str(target), "--config", str(eagle)]) == 2
    assert "estimate replays NGram" in capsys.readouterr().err
    with pytest.raises(UserError, match="--drafter nope.py:X"):
        user_drafter("nope.py:X", 4, None)


def test_serve_log_snippet_and_the_logged_counters(tiny_models, tmp_path, capsys):
    """The page's log generator on the tiny models; estimate checks itself against its counters.
    The script runs as ``python serve_log.py ...`` runs it (``__main__``, its argv), in this
    process: a new interpreter would import torch and transformers again (seconds of CPU)."""
    import runpy
    import sys

    target, _ = tiny_models
    yml = _yaml(tmp_path, target, "speculative_config: {decoding_type: NGram, max_draft_len: 3, "
                                  "max_matching_ngram_size: 2}\n")
    prompts = _write(tmp_path / "prompts.jsonl", *({"prompt": p} for p in PROMPTS))
    log = tmp_path / "log.jsonl"
    script = ROOT / "snippets" / "tools" / "serve_log.py"
    argv = sys.argv
    sys.argv = [str(script), str(yml), str(prompts), str(log), "--max-tokens", "20"]
    try:
        runpy.run_path(str(script), run_name="__main__")  # a SystemExit (argparse, an error) fails the test
    finally:
        sys.argv = argv
    printed = capsys.readouterr().out
    assert len(printed.splitlines()) == len(PROMPTS) and "accepted" in printed
    assert cli.main(["estimate", str(log), "--tokenizer", str(target), "--config", str(yml), "--summary"]) == 0
    assert "the replay equals them on every request" in capsys.readouterr().out
    assert cli.main(["estimate", str(log), "--tokenizer", str(target), "--max-draft-len", "1", "--summary"]) == 0
    assert "the replay differs on" in capsys.readouterr().out
    # The same log as a 1.1.0 / 1.2.1 server writes it with TorchSampler: counters at zero (PR #17082).
    import json

    zeroed = tmp_path / "log_release.jsonl"
    zeroed.write_text("".join(json.dumps({**json.loads(line), "total_draft_tokens": 0, "total_accepted_draft_tokens": 0})
                              + "\n" for line in log.read_text().splitlines()))
    assert cli.main(["estimate", str(zeroed), "--tokenizer", str(target), "--config", str(yml), "--summary"]) == 0
    out = capsys.readouterr().out
    assert "its counters were not filled" in out and "PR #17082" in out and "differs" not in out


def test_a_drafter_that_raises_is_one_line(tiny_models, tmp_path, capsys):
    target, _ = tiny_models
    bad = tmp_path / "bad_drafter.py"
    bad.write_text("class Broken:\n    def propose(self, request):\n        return 1 / 0\n")
    log = _write(tmp_path / "log.jsonl", {"prompt": "abc abc", "output": " abc abc"})
    assert cli.main(["estimate", str(log), "--tokenizer", str(target), "--drafter", f"{bad}:Broken"]) == 2
    err = capsys.readouterr().err
    assert "log.jsonl:1:1: the drafter failed on this request: ZeroDivisionError" in err and "Traceback" not in err


# -- the cost model: the printed columns give the printed range; the verification cost ----------
VERIFY_JSON = ROOT / "benchmarks" / "results" / "verify_cost.json"


def _rows(out: str) -> dict[str, dict[str, str]]:
    """The report's table as {record: {column: cell}} (the record name may hold spaces)."""
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("record "))
    header = lines[at].split()
    rows = {}
    for line in lines[at + 1:]:
        if line.startswith("logged by"):
            break
        cells = line.split()
        name = " ".join(cells[: len(cells) - len(header) + 1])
        rows[name] = dict(zip(header, [name, *cells[len(cells) - len(header) + 1:]]))
    return rows


def _measured(batch: int, q: int) -> float:
    rows = {(r["batch"], r["q"]): r["ms"] for r in json.loads(VERIFY_JSON.read_text())["target"]}
    return rows[(batch, q)] / rows[(batch, 1)]


def _echo_log(tmp_path: Path) -> Path:
    return _write(tmp_path / "log.jsonl", *({"prompt": p, "output": p[-12:] * 2} for p in PROMPTS))


# What the overlap scheduler's absence costs NGram per step, as schemas/overlap_cost.yaml sources it
# (TensorRT-LLM blog 2's 1.03x to SGLang's 1.1x): written here independently of that file, so a changed
# figure fails a test.
OVERLAP_TAX = (0.03, 0.10)


@pytest.mark.parametrize("extra, verify, tax", [
    (["--no-verify-cost", "--no-overlap-cost"], 1.0, (0.0, 0.0)),
    (["--verify-cost", "1.5", "--no-overlap-cost"], 1.5, (0.0, 0.0)),
    (["--batch-size", "16"], ("measured", 16), OVERLAP_TAX),
    ([], ("measured", 1), OVERLAP_TAX),  # the defaults: batch 1, verification and the overlap tax counted
])
def test_the_printed_columns_reproduce_the_printed_speedup(tiny_models, tmp_path, capsys, extra, verify, tax):
    """What the page tells a reader to compute: the formula at tok_accept with k drafts every step,
    and accept_len over the verification cost (draft cost 0), each divided by 1 + the overlap tax's
    high end (low) and low end (high), from the printed figures alone."""
    target, _ = tiny_models
    assert cli.main(["estimate", str(_echo_log(tmp_path)), "--tokenizer", str(target), "--max-draft-len", "4",
                     *extra]) == 0
    out = capsys.readouterr().out
    v = _measured(verify[1], 5) if isinstance(verify, tuple) else verify
    assert f"verification {v:.3f} (" in out
    assert ("each step 1.03-1.10x as long" in out) == (tax != (0.0, 0.0)), out
    rows = _rows(out)
    assert len(rows) == len(PROMPTS) + 1
    checked = 0
    for row in rows.values():
        a, length = float(row["tok_accept"]), float(row["accept_len"])
        low, high = (float(x) for x in row["speed-up"].rstrip("x").split("-"))
        formula = (5.0 if a >= 1 else (1 - a ** 5) / (1 - a)) / v
        assert low == pytest.approx(min(formula, length / v) / (1 + tax[1]), abs=0.011), row
        assert high == pytest.approx(max(formula, length / v) / (1 + tax[0]), abs=0.011), row
        checked += int(int(row["drafted"]) > 0)
    assert checked > 0  # some request drafted: the formula end is not trivially 1


def test_batch_size_looks_the_cost_up_and_says_which(tiny_models, tmp_path, capsys):
    target, _ = tiny_models
    log = _echo_log(tmp_path)
    assert cli.main(["estimate", str(log), "--tokenizer", str(target), "--summary", "--batch-size", "1"]) == 0
    out = capsys.readouterr().out
    assert f"verification {_measured(1, 5):.3f} (at batch 1, 5 tokens checked; both measured)" in out
    assert "H200" in out and "random-weight" in out and "not TensorRT-LLM" in out
    # batch 8 and 4 tokens lie between measurements: interpolated, between its neighbours, and said so
    assert cli.main(["estimate", str(log), "--tokenizer", str(target), "--json", "--batch-size", "8",
                     "--max-draft-len", "3"]) == 0
    got = json.loads(capsys.readouterr().out)
    lo, hi = sorted((_measured(4, 3), _measured(16, 5)))
    assert lo < got["verify_cost"] < hi
    assert got["verify_cost_source"] == ("at batch 8, 4 tokens checked; interpolated: batch between measured "
                                         "4 and 16, tokens between measured 3 and 5")
    # the sweep gives each draft length its own cost, and a higher cost lowers the range
    assert cli.main(["estimate", str(log), "--tokenizer", str(target), "--sweep", "--draft-lens", "1,4",
                     "--ngram-sizes", "1", "--batch-size", "16"]) == 0
    out = capsys.readouterr().out
    assert " verify " in out and f"{_measured(16, 2):.3f}" in out and f"{_measured(16, 5):.3f}" in out


@pytest.mark.parametrize("args, message", [
    (["--batch-size", "256"], "batch size 256 is outside the measured 1-128; give --verify-cost instead"),
    (["--batch-size", "4", "--max-draft-len", "9"], "max_draft_len + 1 = 10 is outside the measured 1-9"),
    (["--verify-table", "t.json", "--no-verify-cost"], "--verify-table is read only when verification is looked up"),
    (["--batch-size", "4", "--verify-table", "bad.json"], "bad.json:2:4: invalid JSON"),
    (["--batch-size", "4", "--verify-table", "rows.json"], "rows.json:1:1: expected a 'target' list"),
])
def test_bad_verification_inputs_are_one_line(tiny_models, tmp_path, monkeypatch, capsys, args, message):
    target, _ = tiny_models
    monkeypatch.chdir(tmp_path)
    _write(tmp_path / "log.jsonl", {"prompt": "a", "output": "b"})
    (tmp_path / "bad.json").write_text('{"target": [\n  ]]\n')
    (tmp_path / "rows.json").write_text('{"target": [{"batch": 1, "q": 2, "ms": 3.0}]}\n')
    assert cli.main(["estimate", "log.jsonl", "--tokenizer", str(target), *args]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1, err


@pytest.mark.parametrize("value", ["0", "-1", "x", "inf", "nan"])
def test_a_bad_verify_cost_is_a_usage_error(value, capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(["estimate", "log.jsonl", "--verify-cost", value])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "--verify-cost: expected a number > 0" in err and "Traceback" not in err
