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


SERVE_LOG = ROOT / "snippets" / "tools" / "serve_log.py"


def _serve_log(*args) -> int | str | None:
    """Run the page's log generator as ``python serve_log.py ARGS`` runs it (``__main__``, its argv),
    in this process: a new interpreter would import torch and transformers again (seconds of CPU).
    Returns the exit code or message it stopped with, None when it ran to the end."""
    import runpy
    import sys

    argv = sys.argv
    sys.argv = [str(SERVE_LOG), *map(str, args)]
    try:
        runpy.run_path(str(SERVE_LOG), run_name="__main__")
    except SystemExit as stop:
        return stop.code
    finally:
        sys.argv = argv
    return None


def test_serve_log_snippet_and_the_logged_counters(tiny_models, tmp_path, capsys):
    """The page's log generator on the tiny models; estimate checks itself against its counters."""
    target, _ = tiny_models
    yml = _yaml(tmp_path, target, "speculative_config: {decoding_type: NGram, max_draft_len: 3, "
                                  "max_matching_ngram_size: 2}\n")
    prompts = _write(tmp_path / "prompts.jsonl", *({"prompt": p} for p in PROMPTS))
    log = tmp_path / "log.jsonl"
    assert _serve_log(yml, prompts, log, "--max-tokens", "20") is None
    printed = capsys.readouterr().out
    assert len(printed.splitlines()) == len(PROMPTS) and "accepted" in printed
    # A request the engine refuses (as the server would answer it) stops the script on its line,
    # and the log already written stays as it was.
    logged = log.read_text()
    too_long = _write(tmp_path / "too_long.jsonl", {"prompt": PROMPTS[0]}, {"prompt": "abc " * 100_000})
    stop = _serve_log(yml, too_long, log)
    assert str(stop).startswith(f"{too_long}:2:1: the engine refused this request: the prompt has ")
    assert log.read_text() == logged
    # A chat line on a tokenizer without a chat template (the tiny models have none): one line too.
    # An empty prompt beside valid messages is a chat line, and is served as one.
    chat = _write(tmp_path / "chat.jsonl", {"prompt": "a"},
                  {"prompt": "", "messages": [{"role": "user", "content": "hi"}]})
    assert str(_serve_log(yml, chat, log)).startswith(f"{chat}:2:1: cannot render this chat: ")
    assert log.read_text() == logged
    capsys.readouterr()
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


WANT_PROMPT = 'want {"prompt": "some text"} or {"messages": [{"role": "user", "content": "..."}, ...]}'


@pytest.mark.parametrize("case, lines, want", [
    ("no_yaml", '{"prompt": "a"}\n', "nope.yaml:0:0: cannot read the engine config"),
    ("no_prompts", None, "nope.jsonl:0:0: cannot read: No such file or directory"),
    ("bad_json", '{"prompt": "a"}\n{bad\n', "prompts.jsonl:2:2: not JSON: "),
    ("not_an_object", "[1]\n", f"prompts.jsonl:1:1: {WANT_PROMPT}"),
    ("empty_prompt", '{"prompt": "a"}\n{"prompt": ""}\n', f"prompts.jsonl:2:1: {WANT_PROMPT}"),
    ("prompt_list", '{"prompt": ["a"]}\n', f"prompts.jsonl:1:1: {WANT_PROMPT}"),
    ("no_messages", '{"messages": []}\n', f"prompts.jsonl:1:1: {WANT_PROMPT}"),
    ("message_without_content", '{"messages": [{"role": "user"}]}\n', f"prompts.jsonl:1:1: {WANT_PROMPT}"),
    ("messages_not_dicts", '{"messages": [1, 2]}\n', f"prompts.jsonl:1:1: {WANT_PROMPT}"),
    ("not_utf8", b"\xff\xfe\n", "prompts.jsonl:0:0: cannot read: 'utf-8' codec can't decode"),
    ("log_folder_missing", '{"prompt": "a"}\n', "no/such/log.jsonl:0:0: cannot write the log there"),
    ("no_prompt_at_all", "\n\n", "prompts.jsonl:1:1: no prompts in the file"),
    ("log_is_the_prompts", '{"prompt": "a"}\n', "prompts.jsonl:0:0: the log would overwrite the prompts file"),
])
def test_serve_log_snippet_says_what_is_wrong_in_one_line(tmp_path, case, lines, want):
    """The page's script on a reader's mistakes: path:line:col and a message, no traceback, and the
    reader's earlier log left as it was."""
    yml = tmp_path / "model.yaml"  # never loaded: each case stops before the engine starts
    yml.write_text("model: nowhere\n")
    prompts = tmp_path / "prompts.jsonl"
    if isinstance(lines, bytes):
        prompts.write_bytes(lines)
    elif lines is not None:
        prompts.write_text(lines)
    log = tmp_path / {"log_folder_missing": "no/such/log.jsonl", "log_is_the_prompts": "prompts.jsonl"}.get(case, "log.jsonl")
    if log.parent.is_dir() and log != prompts:
        log.write_text("an earlier log\n")
    stop = _serve_log(tmp_path / "nope.yaml" if case == "no_yaml" else yml,
                      tmp_path / "nope.jsonl" if case == "no_prompts" else prompts, log)
    assert isinstance(stop, str) and stop.startswith(str(tmp_path))
    assert want in stop and "\n" not in stop
    if log == prompts:
        assert prompts.read_text() == lines
    elif log.parent.is_dir():
        assert log.read_text() == "an earlier log\n"


@pytest.mark.parametrize("value", ["0", "-3", "many"])
def test_serve_log_snippet_wants_a_positive_max_tokens(value, capsys):
    assert _serve_log("m.yaml", "p.jsonl", "l.jsonl", "--max-tokens", value) == 2
    assert f"argument --max-tokens: want a whole number >= 1, got '{value}'" in capsys.readouterr().err


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


# -- the pieces, without a model: hand-made counts, parsers, settings, the figure command ----------
import argparse  # noqa: E402
from types import SimpleNamespace  # noqa: E402

from specdec_guide import estimate as E  # noqa: E402
from specdec_guide import payoff  # noqa: E402
from specdec_guide.speculation_types import DraftRequest, SpecStats, StepResult  # noqa: E402


def stats_of(*steps) -> SpecStats:
    s = SpecStats()
    for tokens, drafted, accepted in steps:
        s.add(StepResult(list(tokens), drafted, accepted))
    return s


def two_requests(logged=((2, 2), (4, 1)), **kw) -> "E.Estimate":
    # A: 3 steps, 5 tokens, 2 drafted and both accepted. B: 3 steps, 4 tokens, 4 drafted, 1 accepted, 2 rejections.
    a = stats_of(([3], 0, 0), ([1, 2, 3], 2, 2), ([9], 0, 0))
    b = stats_of(([6], 0, 0), ([7], 2, 0), ([5, 6], 2, 1))
    est = E.Estimate("NGram test", 2, kw.get("draft_cost", 0.0), verify_cost=kw.get("verify_cost", 1.0),
                     tax=kw.get("tax", (0.0, 0.0)))
    est.requests = [E.RequestResult("log.jsonl:1", 5, a, logged[0]), E.RequestResult("log.jsonl:2", 3, b, logged[1])]
    return est


def test_combined_counts_and_their_speedup_range():
    est = two_requests()
    t = est.total
    assert (t.target_steps, t.drafted_tokens, t.accepted_tokens, t.rejections, t.acceptance_lengths) == (
        6, 6, 3, 2, [1, 3, 1, 1, 1, 2])
    # a = 3 / 5: (1 - a^3) / (1 - a) = 1.96 at no cost; the replay's own 9 / 6 = 1.5 tokens per step
    assert est.speedup() == (pytest.approx(1.5), pytest.approx(1.96))
    assert est.speedup(est.requests[0].stats) == (pytest.approx(5 / 3), pytest.approx(3.0))
    priced = two_requests(draft_cost=0.5, verify_cost=1.2, tax=(0.03, 0.10))
    # formula 1.96 / (2 x 0.5 + 1.2); replay 1.5 / (1.2 + 0.5 x 1 drafted per step); then the tax's two ends
    assert priced.speedup() == (pytest.approx(1.5 / 1.7 / 1.10), pytest.approx(1.96 / 2.2 / 1.03))
    assert E.speedup_range(SpecStats(), 2, 0.5, 1.25, (0.0, 0.25)) == (pytest.approx(0.8 / 1.25), pytest.approx(0.8))
    assert E.combine([]) == SpecStats()


def _line(*cells, widths=(14, 5, 6, 7, 8, 11, 10, 10, 10)):
    return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))


HEAD = ("record", "steps", "tokens", "drafted", "accepted", "accept_rate", "tok_accept", "accept_len", "speed-up")


def test_the_report_table_and_the_logged_counters():
    est = two_requests()
    assert E.report(est).split("\n") == [
        _line(*HEAD),
        _line("log.jsonl:1", "3", "5", "2", "2", "1.000", "1.000", "1.667", "1.67-3.00x"),
        _line("log.jsonl:2", "3", "4", "4", "1", "0.250", "0.333", "1.333", "1.33-1.44x"),
        _line("all 2 requests", "6", "9", "6", "3", "0.500", "0.600", "1.500", "1.50-1.96x"),
        "logged by the server: drafted 6, accepted 3; the replay equals them on every request"]
    widths = (14, 5, 6, 7, 8, 11, 10, 10, 10)
    assert E.report(est, per_request=False, compare=False).split("\n") == [
        _line(*HEAD, widths=widths), _line("all 2 requests", "6", "9", "6", "3", "0.500", "0.600", "1.500",
                                           "1.50-1.96x", widths=widths)]
    differs = two_requests(logged=((2, 2), (4, 2)))
    assert E.report(differs).split("\n")[-1] == (
        "logged by the server: drafted 6, accepted 4; the replay differs on 1 request(s), first log.jsonl:2: the server "
        "ran other settings, sampled, or its tokenizer splits the output differently")
    assert E.report(two_requests(logged=((2, 2), None))).count("\n") == 3  # a request without counters: no line
    zeroed = two_requests(logged=((0, 0), (0, 0)))
    assert E.report(zeroed).split("\n")[-1] == (
        "logged by the server: drafted 0, accepted 0 on every request: its counters were not filled (TensorRT-LLM "
        "1.1.0 and 1.2.1 leave them at zero with TorchSampler, fixed by PR #17082); the replay above is the acceptance "
        "figure")
    nothing = E.Estimate("x", 2, 0.0)
    nothing.requests = [E.RequestResult("l:1", 1, stats_of(([1], 0, 0)), (0, 0))]
    assert E.report(nothing).split("\n")[-1] == ("logged by the server: drafted 0, accepted 0; the replay equals them "
                                                 "on every request")


def test_the_json_report():
    est = two_requests(draft_cost=0.25, verify_cost=1.5, logged=((2, 2), None))
    got = E.as_json(est)
    lo_a, hi_a = est.speedup(est.requests[0].stats)
    lo_b, hi_b = est.speedup(est.requests[1].stats)
    lo, hi = est.speedup()
    assert got == {
        "drafter": "NGram test", "draft_cost": 0.25, "verify_cost": 1.5,
        "requests": [
            {"record": "log.jsonl:1", "target_steps": 3, "tokens": 5, "drafted": 2, "accepted": 2, "acceptance_rate": 1.0,
             "acceptance_length": 5 / 3, "per_token_acceptance": 1.0, "speedup_range": [lo_a, hi_a],
             "logged": {"drafted": 2, "accepted": 2}},
            {"record": "log.jsonl:2", "target_steps": 3, "tokens": 4, "drafted": 4, "accepted": 1, "acceptance_rate": 0.25,
             "acceptance_length": 4 / 3, "per_token_acceptance": 1 / 3, "speedup_range": [lo_b, hi_b]}],
        "overall": {"target_steps": 6, "tokens": 9, "drafted": 6, "accepted": 3, "acceptance_rate": 0.5,
                    "acceptance_length": 1.5, "per_token_acceptance": 0.6, "speedup_range": [lo, hi]}}
    assert lo_a != lo_b  # each request is priced with its own counts
    assert E.as_json(two_requests(logged=((2, 5), (4, 1))))["requests"][0]["logged"] == {"drafted": 2, "accepted": 5}


def test_settings_label_and_drafter():
    s = E.NGramSettings(3, 1, is_keep_all=False, is_use_oldest=False, is_public_pool=False)
    assert s.label() == ("max_draft_len=3, max_matching_ngram_size=1, is_keep_all=False, is_use_oldest=False, "
                         "is_public_pool=False")
    d = s.drafter()
    assert (d.max_draft_len, d.max_matching_ngram_size, d.is_keep_all, d.is_use_oldest, d.is_public_pool) == (
        3, 1, False, False, False)
    assert E.NGramSettings().label() == ("max_draft_len=4, max_matching_ngram_size=2, is_keep_all=True, "
                                         "is_use_oldest=True, is_public_pool=True")


def _est(k: int, n: int, steps, verify=1.0) -> "E.Estimate":
    est = E.Estimate(E.NGramSettings(k, n).label(), k, 0.0, verify_cost=verify)
    est.requests = [E.RequestResult("l:1", 1, stats_of(*steps), None)]
    return est


def test_the_sweep_table_and_the_best_setting():
    fast = _est(2, 1, [([1, 2, 3], 2, 2)], verify=1.25)  # 3 tokens in one step
    slow = _est(4, 3, [([1], 4, 0), ([2, 3], 4, 1)], verify=1.5)
    widths = (1, 1, 5, 6, 7, 8, 11, 10, 10, 6, 10)
    row = lambda *c: "  ".join(x.rjust(w) for x, w in zip(c, widths))  # noqa: E731
    assert E.sweep_report([fast, slow], show_verify=True).split("\n") == [
        row("k", "n", *HEAD[1:-1], "verify", "speed-up"),
        row("2", "1", "1", "3", "2", "2", "1.000", "1.000", "3.000", "1.250", "2.40-2.40x"),
        row("4", "3", "2", "3", "8", "1", "0.125", "0.333", "1.500", "1.500", "1.00-1.00x")]
    # formula at a = 1/3 with k = 4: (1 - a^5) / (1 - a) = 1.494, over 1.5; the replay 1.5 / 1.5
    assert slow.speedup() == (pytest.approx(1.49383 / 1.5, abs=1e-5), pytest.approx(1.0))
    plain = E.sweep_report([fast]).split("\n")
    assert plain[0].split() == ["k", "n", *HEAD[1:]] and plain[1].split()[-1] == "2.40-2.40x"
    assert E.best([slow, fast]) is fast
    twin = _est(3, 1, [([1, 2, 3], 2, 2)], verify=1.25)  # the same range with a longer draft: the shorter wins
    assert E.best([twin, fast]) is fast and E.best([fast, twin]) is fast


class ListDrafter:
    """Proposes a fixed list; records what it was asked."""

    def __init__(self, proposal):
        self.proposal, self.asked, self.events = list(proposal), [], []

    def start_request(self, request_id, prompt_len, max_tokens):
        self.events.append(("start", request_id, prompt_len, max_tokens))

    def propose(self, request: DraftRequest):
        self.asked.append(request)
        return list(self.proposal)

    def end_request(self, request_id):
        self.events.append(("end", request_id))


def logged(output, max_tokens=None, finish="length", prompt=(1, 2), where="log.jsonl:1"):
    return SimpleNamespace(prompt_ids=list(prompt), output_ids=list(output), max_tokens=max_tokens,
                           finish_reason=finish, where=where, logged=None)


def steps(stats: SpecStats):
    return stats.target_steps, stats.drafted_tokens, stats.accepted_tokens, stats.rejections, stats.acceptance_lengths


def test_a_replayed_request_follows_the_loop():
    d = ListDrafter([6, 7, 0])
    got = E.replay_request(logged([5, 6, 7, 8, 9]), d, 3, request_id=4)
    # no draft on the context step; then 6 7 accepted, 0 rejected, 8 the target's; one token left: no draft
    assert steps(got) == (3, 3, 2, 1, [1, 3, 1])
    assert [(r.request_id, r.tokens, r.prompt_len, r.max_draft_len) for r in d.asked] == [(4, [1, 2, 5], 2, 3)]
    assert d.events == [("start", 4, 2, 5), ("end", 4)]
    # stopped by itself: its budget was not the end, so the last step drafts too
    d = ListDrafter([6, 7, 0])
    got = E.replay_request(logged([5, 6, 7, 8, 9], finish="stop"), d, 3, request_id=1)
    assert steps(got) == (3, 6, 2, 2, [1, 3, 1]) and d.events[0] == ("start", 1, 2, 9)
    assert [r.max_draft_len for r in d.asked] == [3, 3]
    # a known budget: drafts never run past it (budget - 1)
    d = ListDrafter([6, 7, 8, 9])
    got = E.replay_request(logged([5, 6, 7, 8, 9], max_tokens=5), d, 4, request_id=1)
    assert [r.max_draft_len for r in d.asked] == [3] and steps(got) == (2, 3, 3, 0, [1, 4])
    # a draft longer than what is left of the log: accepted up to the logged end
    d = ListDrafter([6, 7, 8, 9, 10])
    got = E.replay_request(logged([5, 6, 7, 8, 9], finish="stop"), d, 5, request_id=1)
    assert steps(got) == (2, 5, 4, 1, [1, 4])
    # no draft length: plain decoding, the drafter never asked
    d = ListDrafter([6])
    assert steps(E.replay_request(logged([5, 6, 7]), d, 0, request_id=1)) == (3, 0, 0, 0, [1, 1, 1]) and not d.asked


def test_a_replay_numbers_requests_in_log_order_and_names_a_failing_one():
    d = ListDrafter([0])
    est = E.replay([logged([5, 6, 7], where="a:1"), logged([5, 6], where="a:2", prompt=(1, 2, 3))], d, 1, "lbl",
                   0.5, 1.25, (0.0, 0.1))
    assert [e for e in d.events if e[0] == "start"] == [("start", 1, 2, 3), ("start", 2, 3, 2)]
    assert (est.label, est.max_draft_len, est.draft_cost, est.verify_cost, est.tax) == ("lbl", 1, 0.5, 1.25, (0.0, 0.1))
    assert [(r.where, r.prompt_tokens, r.logged) for r in est.requests] == [("a:1", 2, None), ("a:2", 3, None)]

    class Broken(ListDrafter):
        def propose(self, request):
            raise KeyError("boom")

    with pytest.raises(UserError) as err:
        E.replay([logged([5, 6, 7], where="b:7")], Broken([]), 2, "x")
    assert str(err.value) == "b:7:1: the drafter failed on this request: KeyError: 'boom'"


def test_user_drafter_classes(tmp_path):
    src = tmp_path / "mine.py"
    src.write_text(
        "class Sized:\n    def __init__(self, max_draft_len):\n        self.k = max_draft_len\n"
        "    def propose(self, request):\n        return []\n"
        "class Loose:\n    def __init__(self, **kw):\n        self.kw = kw\n    def propose(self, request):\n        return []\n"
        "class Plain:\n    def propose(self, request):\n        return []\n"
        "class Neither:\n    pass\n")
    assert E.user_drafter(f"{src}:Sized", 3, None).k == 3
    assert E.user_drafter(f"{src}:Loose", 5, None).kw == {"max_draft_len": 5}
    assert type(E.user_drafter(f"{src}:Plain", 5, None)).__name__ == "Plain"
    with pytest.raises(UserError) as err:
        E.user_drafter(f"{src}:Neither", 2, None)
    assert str(err.value) == (f"--drafter {src}:Neither: ValueError: Neither has neither prepare_draft_tokens("
                              "scheduled_requests, resource_manager=None) nor propose(request)")
    adapted = E.user_drafter(f"{DRAFTER}:PromptLookupDrafter", 2, 7)
    assert callable(adapted.propose) and adapted.max_draft_len == 2


def parse(*argv):
    parser = argparse.ArgumentParser(prog="specdec-guide")
    E.register(parser.add_subparsers(dest="command"))
    return parser.parse_args(["estimate", *argv])


def refused(capsys, flag, value, message):
    with pytest.raises(SystemExit):
        parse(f"{flag}={value}")
    assert f"{flag}: {message}" in capsys.readouterr().err


def test_flag_values(capsys):
    for text, want in (("true", True), ("TRUE", True), ("1", True), ("yes", True), ("false", False), ("0", False),
                       ("No", False)):
        assert parse("--is-keep-all", text).is_keep_all is want
    refused(capsys, "--is-use-oldest", "maybe", "expected true or false, got 'maybe'")
    assert parse("--max-draft-len", "1").max_draft_len == 1
    for bad in ("0", "-2", "x"):
        refused(capsys, "--max-draft-len", bad, f"expected a positive integer, got '{bad}'")
    assert parse("--sweep", "--draft-lens", "3, 1,,2").draft_lens == (3, 1, 2)
    assert parse().draft_lens == (1, 2, 3, 4, 6, 8) and parse().ngram_sizes == (1, 2, 3, 4)
    refused(capsys, "--draft-lens", "1,0", "expected positive integers, got '1,0'")
    refused(capsys, "--ngram-sizes", ",", "expected positive integers, got ','")
    refused(capsys, "--ngram-sizes", "1,x", "expected comma-separated integers, got '1,x'")
    assert parse("--verify-cost", "0.5").verify_cost == 0.5
    assert parse("--draft-cost", "0").draft_cost == 0.0
    for bad in ("-1", "x", "inf"):
        refused(capsys, "--draft-cost", bad, f"expected a number >= 0, got '{bad}'")
    assert parse("--acceptance-length", "1e0").acceptance_length == 1.0
    for bad in ("x", "inf", "-inf", "nan"):
        refused(capsys, "--acceptance-rate", bad, f"expected a number, got '{bad}'")
    assert parse("--per-position", "0,1").per_position == (0.0, 1.0)
    refused(capsys, "--per-position", "0.5,1.5", "expected comma-separated numbers between 0 and 1, got '0.5,1.5'")
    refused(capsys, "--per-position", "-0.1", "expected comma-separated numbers between 0 and 1, got '-0.1'")


def test_the_default_tokenizer_is_the_real_models(monkeypatch, tmp_path):
    import sys

    fake = SimpleNamespace(ensure_checkpoint=lambda: tmp_path)
    monkeypatch.setitem(sys.modules, "specdec_guide.models.smollm2", fake)
    assert E.default_tokenizer() == tmp_path
    monkeypatch.setitem(sys.modules, "specdec_guide.models.smollm2", None)  # not importable
    with pytest.raises(UserError) as err:
        E.default_tokenizer()
    assert str(err.value) == ("no --tokenizer given and the real model's package is not available: give a local "
                              "Hugging Face tokenizer directory with --tokenizer")


@pytest.mark.parametrize("text, where, message", [
    ("model: x\n", "1:1", "no speculative_config mapping to read the NGram keys from"),
    ("model: x\nspeculative_config: 3\n", "2:1", "no speculative_config mapping to read the NGram keys from"),
    ("- 1\n", "1:1", "no speculative_config mapping to read the NGram keys from"),
    ("model: x\nspeculative_config:\n  max_draft_len: 2\n  decoding_type: Eagle\n", "4:3",
     "speculative_config.decoding_type is 'Eagle'; estimate replays NGram (use --drafter for another deterministic "
     "drafter)"),
    ("speculative_config:\n  max_draft_len: 2\n", "1:1",
     "speculative_config.decoding_type is None; estimate replays NGram (use --drafter for another deterministic "
     "drafter)"),
    ("speculative_config:\n  decoding_type: NGram\n  max_draft_len: 0\n", "3:3",
     "speculative_config.max_draft_len: expected a positive integer, got 0"),
    ("speculative_config:\n  decoding_type: NGram\n  max_matching_ngram_size: true\n", "3:3",
     "speculative_config.max_matching_ngram_size: expected a positive integer, got True"),
    ("speculative_config:\n  decoding_type: NGram\n  max_draft_len: '3'\n", "3:3",
     "speculative_config.max_draft_len: expected a positive integer, got '3'"),
    ("speculative_config:\n  decoding_type: NGram\n  is_keep_all: 1\n", "3:3",
     "speculative_config.is_keep_all: expected true or false, got 1"),
    ("speculative_config: [1\n", "2:1", "invalid YAML: expected ',' or ']', but got '<stream end>'"),
    ("[" * 5000 + "]" * 5000 + "\n", "1:1", "invalid YAML: nested too deeply"),
])
def test_settings_from_a_yaml_say_where(tmp_path, text, where, message):
    path = tmp_path / "model.yaml"
    path.write_text(text)
    with pytest.raises(UserError) as err:
        E.settings_from_yaml(path)
    assert str(err.value) == f"{path}:{where}: {message}"


def test_settings_from_a_yaml_take_what_is_given(tmp_path):
    path = tmp_path / "model.yaml"
    path.write_text("speculative_config:\n  decoding_type: NGram\n  max_draft_len: 3\n  is_use_oldest: false\n"
                    "  is_public_pool: false\n  max_matching_ngram_size: 5\n  is_keep_all: false\n")
    assert E.settings_from_yaml(path) == E.NGramSettings(3, 5, False, False, False)
    path.write_text("speculative_config: {decoding_type: NGram}\n")
    assert E.settings_from_yaml(path) == E.NGramSettings()


def figure(capsys, *argv) -> tuple[int, str]:
    code = cli.main(["estimate", *argv])
    return code, capsys.readouterr()


FLAT = ("--no-verify-cost", "--no-overlap-cost")


def test_an_acceptance_figure_is_printed_with_its_arithmetic(capsys):
    code, out = figure(capsys, "--acceptance-length", "2.5", "--max-draft-len", "3", "--draft-cost", "0.1", *FLAT)
    assert code == 0 and out.out.split("\n") == [
        "NGram, max_draft_len 3, batch size 1; acceptance length 2.500",
        "costs in plain target steps, counted:",
        "  draft 0.100 per draft token (given)",
        "  verification 1.000 (not counted: checking k + 1 tokens taken to cost one plain step)",
        "  overlap scheduler off for NGram: not counted",
        "predicted speed-up: 1.92x = 2.500 / (3 x 0.100 + 1.000); step cost 1.300", ""]
    code, out = figure(capsys, "--acceptance-rate", "0.5", "--max-draft-len", "3", "--batch-size", "4", "--verify-cost",
                       "1.25")
    lines = out.out.split("\n")
    assert lines[0] == "NGram, max_draft_len 3, batch size 4; acceptance rate 0.5 -> acceptance length 2.500 (1 + rate x 3)"
    assert lines[-2] == ("predicted speed-up: 1.82-1.94x = 2.500 / (3 x 0.000 + 1.250), divided by 1.10 (low end) and "
                         "1.03 (high end); step cost 1.250")
    code, out = figure(capsys, "--acceptance-rate", "0", "--max-draft-len", "2", *FLAT)
    assert out.out.split("\n")[0] == (
        "NGram, max_draft_len 2, batch size 1; acceptance rate 0 -> acceptance length 1.000 (1 + rate x 2); note: "
        "TensorRT-LLM 1.1.0 and 1.2.1 report 0 per request with their default sampler whatever was accepted: measure "
        "acceptance another way (snippets/acceptance/check_acceptance.py)")
    code, out = figure(capsys, "--per-position", "0.5,0.5", *FLAT)  # k from the figures
    assert out.out.split("\n")[0] == ("NGram, max_draft_len 2, batch size 1; per-position acceptance 0.5, 0.5 -> "
                                      "acceptance length 1.750")


def test_an_acceptance_figure_as_json(capsys):
    code, out = figure(capsys, "--acceptance-length", "3", "--max-draft-len", "4", "--json", *FLAT)
    assert out.out.startswith('{\n  "method": "ngram",\n  "batch_size": 1,\n  "acceptance_length": 3.0,\n')
    got = json.loads(out.out)
    assert got["counted"] == [
        "draft 0.000 per draft token (NGram drafts from a pool on the host, no GPU pass: its lookup is taken as free)",
        "verification 1.000 (not counted: checking k + 1 tokens taken to cost one plain step)",
        "overlap scheduler off for NGram: not counted"]
    assert (got["draft_len"], got["speedup_range"], got["readings"]) == (4, [3.0, 3.0], [3.0])
    code, out = figure(capsys, "--acceptance-length", "3", "--max-draft-len", "4", "--json", "--batch-size", "16",
                       "--no-verify-cost")
    assert json.loads(out.out)["batch_size"] == 16


@pytest.mark.parametrize("extra", [["log.jsonl"], ["--sweep"], ["--drafter", "x.py:X"], ["--config", "m.yaml"],
                                   ["--plot", "p.png"]])
def test_an_acceptance_figure_takes_no_log_options(capsys, extra):
    code, out = figure(capsys, "--acceptance-length", "2", "--max-draft-len", "3", *extra)
    assert code == 2 and out.err.strip().endswith(
        "an acceptance figure replaces the log: drop LOG, --sweep, --drafter, --config and --plot")


def test_figure_refusals_word_for_word(capsys):
    code, out = figure(capsys, "--acceptance-rate", "0.5")
    assert code == 2 and out.err.strip().endswith("give --max-draft-len K with an acceptance figure")
    code, out = figure(capsys, "--acceptance-rate", "0.5", "--per-position", "0.5", "--max-draft-len", "1")
    assert out.err.strip().endswith("give one of --acceptance-length, --acceptance-rate, --per-position")
    code, out = figure(capsys, "--acceptance-rate", "0.5", "--max-draft-len", "1", "--verify-table", "t.json",
                       "--verify-cost", "2")
    assert out.err.strip().endswith("--verify-table is read only when verification is looked up (--batch-size, the "
                                    "default)")


def test_speedup_range_defaults_to_one_plain_step_of_verification():
    stats = stats_of(([1, 2], 1, 1))
    assert E.speedup_range(stats, 1, 0.0) == (pytest.approx(2.0), pytest.approx(2.0))


def test_a_difference_below_a_millionth_is_a_tie_that_the_shorter_draft_wins():
    longer = _est(4, 1, [([1], 0, 0)], verify=1 / 1.0000004)
    shorter = _est(2, 1, [([1], 0, 0)], verify=1 / 1.0000001)
    assert E.best([longer, shorter]) is shorter
    clearly = _est(4, 1, [([1], 0, 0)], verify=1 / 1.4)
    assert E.best([clearly, _est(2, 1, [([1], 0, 0)], verify=1 / 1.3)]) is clearly


def test_zero_logged_counters_after_a_single_drafted_token():
    one = E.Estimate("x", 1, 0.0)
    one.requests = [E.RequestResult("l:1", 1, stats_of(([5], 1, 0)), (0, 0))]
    assert "its counters were not filled" in E.report(one)


def test_a_sweep_prices_each_setting_with_its_own_verification(tmp_path):
    requests = [logged([1, 2, 1, 2, 1, 2], prompt=(1, 2, 1, 2))]
    costs = {1: 1.1, 3: 1.3}
    got = E.sweep(requests, E.NGramSettings(is_keep_all=False), (1, 3), (2, 1), 0.25,
                  verify=lambda k: payoff.VerifyCost(costs[k], "x"), tax=(0.01, 0.02))
    assert [(e.max_draft_len, e.label.split(", ")[1], e.verify_cost, e.draft_cost, e.tax) for e in got] == [
        (1, "max_matching_ngram_size=2", 1.1, 0.25, (0.01, 0.02)), (3, "max_matching_ngram_size=2", 1.3, 0.25, (0.01, 0.02)),
        (1, "max_matching_ngram_size=1", 1.1, 0.25, (0.01, 0.02)), (3, "max_matching_ngram_size=1", 1.3, 0.25, (0.01, 0.02))]
    assert all("is_keep_all=False" in e.label for e in got)
    plain = E.sweep(requests, E.NGramSettings(), (2,), (1,), 0.0)
    assert (plain[0].verify_cost, plain[0].tax) == (1.0, (0.0, 0.0))
    assert plain[0].total.accepted_tokens > 0  # the prompt's pattern is drafted and accepted


def test_figure_commands_that_need_a_draft_figure_or_a_table_of_your_own(tmp_path, capsys):
    code, out = figure(capsys, "--method", "user_provided", "--acceptance-length", "2", "--max-draft-len", "3")
    assert code == 2 and out.err.strip().endswith("(--draft-cost C, in target steps per draft token)")
    table = tmp_path / "mine.json"
    table.write_text(json.dumps({"target": [{"batch": 1, "q": 1, "ms": 2.0}, {"batch": 1, "q": 3, "ms": 5.0}]}))
    code, out = figure(capsys, "--acceptance-length", "2", "--max-draft-len", "2", "--verify-table", str(table),
                       "--no-overlap-cost", "--json")
    got = json.loads(out.out)
    assert (got["verify_cost"], got["verify_cost_source"]) == (2.5, "at batch 1, 3 tokens checked; both measured")


def test_log_options_word_for_word(tmp_path, capsys):
    code, out = figure(capsys)
    assert code == 2 and out.err.strip().endswith(
        "give a LOG to replay, or an acceptance figure (--acceptance-length, --acceptance-rate, --per-position) with "
        "--method")
    log = str(tmp_path / "log.jsonl")
    for argv in (["--method", "eagle3"], ["--method", "user_provided"], ["--drafter", "d.py:D", "--method", "ngram"]):
        code, out = figure(capsys, log, *argv)
        assert code == 2 and out.err.strip().endswith(
            "a log replay runs NGram, or your --drafter (user_provided): --method is for an acceptance figure"), argv
    code, out = figure(capsys, log, "--drafter", "d.py:D", "--sweep")
    assert code == 2 and out.err.strip().endswith("--sweep tries NGram settings; it cannot be combined with --drafter")


@pytest.mark.parametrize("argv", [["--sweep", "--draft-lens", "1,9", "--batch-size", "4"],
                                  ["--max-draft-len", "9", "--batch-size", "4"]])
def test_draft_lengths_are_priced_before_the_log_is_read(tmp_path, capsys, argv):
    code, out = figure(capsys, str(tmp_path / "log.jsonl"), "--tokenizer", str(tmp_path / "none"), *argv)
    assert code == 2 and "max_draft_len + 1 = 10 is outside the measured 1-9" in out.err


ECHO = [{"prompt": "abcabc abcabc", "output": "abcabc abc"}, {"prompt": "xyz xyz", "output": " xyz xyz xy"}]


def test_a_replay_prints_its_settings_and_costs(tiny_models, tmp_path, capsys):
    target, _ = tiny_models
    log = _write(tmp_path / "log.jsonl", *ECHO)
    code, out = figure(capsys, str(log), "--tokenizer", str(target), "--max-draft-len", "3", "--no-verify-cost")
    lines = out.out.split("\n")
    assert lines[0] == (f"2 requests from {log}; NGram max_draft_len=3, max_matching_ngram_size=2, is_keep_all=True, "
                        "is_use_oldest=True, is_public_pool=True")
    assert lines[1:5] == ["costs in plain target steps, counted:",
                          "  draft 0.000 per draft token (NGram drafts from a pool on the host, no GPU pass: its lookup "
                          "is taken as free)",
                          "  verification 1.000 (not counted: checking k + 1 tokens taken to cost one plain step)",
                          "  overlap scheduler off for NGram (the release turns it off): each step 1.03-1.10x as long "
                          "(TensorRT-LLM's one figure to SGLang's, the same at every batch size: "
                          "src/specdec_guide/schemas/overlap_cost.yaml)"]
    assert lines[5].split() == list(HEAD) and lines[6].startswith(f"{log}:1 ") and lines[8].startswith("all 2 requests")


def test_a_replayed_drafter_class_is_taken_as_free_and_priced_as_user_provided(tiny_models, tmp_path, capsys):
    target, _ = tiny_models
    log = _write(tmp_path / "log.jsonl", *ECHO)
    code, out = figure(capsys, str(log), "--tokenizer", str(target), "--drafter", f"{DRAFTER}:PromptLookupDrafter",
                       "--json", "--no-verify-cost")
    got = json.loads(out.out)
    assert got["draft_cost"] == 0.0
    assert got["counted"][0] == ("draft 0.000 per draft token (assumed 0, a drafter on the host: give --draft-cost for "
                                 "one that runs a model)")
    assert got["counted"][2].startswith(f"overlap scheduler off for {payoff.form('user_provided').label} ")
    code, out = figure(capsys, str(log), "--tokenizer", str(target), "--drafter", f"{DRAFTER}:PromptLookupDrafter",
                       "--json", "--no-verify-cost", "--draft-cost", "0.5")
    assert json.loads(out.out)["counted"][0] == "draft 0.500 per draft token (given)"


def test_a_sweep_prints_its_grid_word_for_word(tiny_models, tmp_path, capsys):
    target, _ = tiny_models
    log = _write(tmp_path / "log.jsonl", *ECHO)
    base = [str(log), "--tokenizer", str(target), "--sweep", "--draft-lens", "2", "--ngram-sizes", "1,2"]
    code, out = figure(capsys, *base, "--batch-size", "4", "--is-keep-all", "false")
    lines = out.out.split("\n")
    assert lines[0] == f"2 requests from {log}; NGram is_keep_all=False, is_use_oldest=True, is_public_pool=True"
    assert lines[1:4] == ["costs in plain target steps, counted:",
                          "  draft 0.000 per draft token (NGram drafts from a pool on the host, no GPU pass: its lookup "
                          "is taken as free)",
                          "  verification per row, column verify (at batch 4, k + 1 tokens checked)"]
    assert lines[5].startswith("verification measured on benchmarks/results/verify_cost.json: NVIDIA H200")
    assert lines[6] == "k = max_draft_len, n = max_matching_ngram_size"
    assert lines[7].split() == ["k", "n", *HEAD[1:-1], "verify", "speed-up"]
    assert lines[8].split()[:2] == ["2", "1"] and lines[9].split()[:2] == ["2", "2"]
    assert lines[10].startswith("best: max_draft_len=2, max_matching_ngram_size=")
    given = figure(capsys, *base, "--verify-cost", "1.5")[1].out.split("\n")
    assert "  verification 1.500 (given)" in given and given[6].split()[-1] == "speed-up"  # no verify column
    # the overlap tax divides every row's range: 1.10 at the low end, 1.03 at the high end
    untaxed = figure(capsys, *base, "--verify-cost", "1.5", "--no-overlap-cost")[1].out.split("\n")
    for taxed_row, plain_row in zip(given[7:9], untaxed[7:9]):
        (lo, hi), (plo, phi) = ((float(x) for x in row.split()[-1].rstrip("x").split("-"))
                                for row in (taxed_row, plain_row))
        assert lo == pytest.approx(plo / 1.10, abs=0.011) and hi == pytest.approx(phi / 1.03, abs=0.011)


def test_counts_add_up_across_requests_and_defaults_of_a_replay():
    both = E.combine([stats_of(([1], 1, 0)), stats_of(([2], 2, 0), ([3], 1, 0))])
    assert (both.target_steps, both.drafted_tokens, both.rejections, both.acceptance_lengths) == (3, 4, 3, [1, 1, 1])
    est = E.replay([logged([5, 6, 7])], ListDrafter([6]), 1, "lbl")
    assert (est.draft_cost, est.verify_cost, est.tax) == (0.0, 1.0, (0.0, 0.0))
    # one draft token per step is still a draft
    assert steps(est.total) == (2, 1, 1, 0, [1, 2])


def test_settings_accept_the_smallest_sizes_and_name_a_reader_error(tmp_path):
    path = tmp_path / "model.yaml"
    path.write_text("speculative_config:\n  decoding_type: NGram\n  max_draft_len: 1\n  max_matching_ngram_size: 1\n")
    assert E.settings_from_yaml(path) == E.NGramSettings(1, 1)
    path.write_text("a: \x07\n")
    with pytest.raises(UserError) as err:
        E.settings_from_yaml(path)
    assert str(err.value).startswith(f"{path}:1:1: invalid YAML: unacceptable character #x0007")


END_DRAFTER = ("class EndDrafter:\n"
               "    def prepare_draft_tokens(self, scheduled_requests, resource_manager=None):\n"
               "        for r in scheduled_requests.generation_requests:\n"
               "            r.py_draft_tokens = [] if r.py_end_id is None else [r.py_end_id]\n")


def test_a_drafter_class_gets_the_tokenizers_end_id(tiny_models, tmp_path, capsys):
    target, _ = tiny_models
    src = tmp_path / "end.py"
    src.write_text(END_DRAFTER)
    assert E.user_drafter(f"{src}:EndDrafter", 2, 7).end_id == 7
    log = _write(tmp_path / "log.jsonl", *ECHO)
    code, out = figure(capsys, str(log), "--tokenizer", str(target), "--drafter", f"{src}:EndDrafter", "--json")
    assert json.loads(out.out)["overall"]["drafted"] > 0  # the end id, offered as a draft on every step


def test_a_replay_as_json_and_its_options(tiny_models, tmp_path, capsys):
    target, _ = tiny_models
    counted = [{**r, "total_draft_tokens": 1, "total_accepted_draft_tokens": 0} for r in ECHO]
    log = _write(tmp_path / "log.jsonl", *counted)
    spec = f"{DRAFTER}:PromptLookupDrafter"
    code, out = figure(capsys, str(log), "--tokenizer", str(target), "--drafter", spec, "--method", "user_provided",
                       "--json", "--batch-size", "1")
    assert code == 0 and out.out.startswith('{\n  "drafter": ')
    got = json.loads(out.out)
    assert got["drafter"] == f"{spec}, max_draft_len=4"
    assert set(got) == {"drafter", "draft_cost", "verify_cost", "requests", "overall", "verify_cost_source",
                        "overlap_tax", "counted", "verify_cost_measured_on"}
    assert got["overlap_tax"] == [0.03, 0.1] and got["verify_cost_measured_on"].startswith(
        "benchmarks/results/verify_cost.json: NVIDIA H200")
    code, out = figure(capsys, str(log), "--tokenizer", str(target), "--json", "--verify-cost", "1.2", "--method", "ngram")
    assert code == 0 and "verify_cost_measured_on" not in json.loads(out.out)
    # the text report: the logged counters are compared for NGram only; --summary keeps the overall row
    code, out = figure(capsys, str(log), "--tokenizer", str(target), "--drafter", spec)
    assert "logged by the server" not in out.out and out.out.split("\n")[0] == f"2 requests from {log}; {spec}, max_draft_len=4"
    code, out = figure(capsys, str(log), "--tokenizer", str(target), "--summary")
    lines = out.out.rstrip("\n").split("\n")
    assert lines[-3].split()[0] == "record" and lines[-2].startswith("all 2 requests")
    assert lines[-1].startswith("logged by the server: drafted 2, accepted 0; the replay differs on 2 request(s)")
    png = tmp_path / "replay.png"
    assert figure(capsys, str(log), "--tokenizer", str(target), "--plot", str(png))[0] == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_sweep_at_the_default_batch_says_batch_1(tiny_models, tmp_path, capsys):
    target, _ = tiny_models
    log = _write(tmp_path / "log.jsonl", *ECHO)
    code, out = figure(capsys, str(log), "--tokenizer", str(target), "--sweep", "--draft-lens", "2", "--ngram-sizes", "1")
    assert "  verification per row, column verify (at batch 1, k + 1 tokens checked)" in out.out.split("\n")
