"""What the walks of the estimate and doctor pages cannot check by shape: estimate's exactness.

tests/test_page_walk.py follows both pages on the real model (their commands in order, in a fresh
shell) and compares what they print with what the pages show, by shape. The walk runs once per
session (the ``walked_page`` fixture); here the estimate page's walk is reused, not repeated:

- the proof: the CPU engine served the page's prompts with NGram and logged its own drafted and
  accepted counts; replaying that log with no model gives the same counts, request by request,
  with TensorRT-LLM's default public pool (order matters), and again with another setting;
- the values behind the shapes: the doctor page's first repository has no error, the second
  stops with exit status 1 at the draft's vocabulary.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ESTIMATE_PAGE = "speculative_decoding/estimate.md"
DOCTOR_PAGE = "speculative_decoding/doctor.md"


def _output(result, snippet: str) -> str:
    return next(out for step, out in zip(result.steps, result.outputs) if step.snippet == f"snippets/tools/{snippet}")


@pytest.fixture(scope="module")
def estimate_walk(walked_page):
    """(WalkResult, scratch folder) of the estimate page: its log.jsonl and repo_ngram are there."""
    result, clone = walked_page(ESTIMATE_PAGE)
    return result, clone / "scratch"


@pytest.mark.timeout(1800)
def test_replay_of_the_walked_log_equals_the_engine_exactly(estimate_walk, smollm2_dir):
    """The proof: replayed counts equal the engine's own, request by request (public pool, log order)."""
    from specdec_guide.estimate import replay, settings_from_yaml
    from specdec_guide.traffic_log import load_tokenizer, read_log

    result, scratch = estimate_walk
    logged = [json.loads(line) for line in (scratch / "log.jsonl").read_text().splitlines()]
    assert len(logged) == len((ROOT / "snippets/tools/prompts.jsonl").read_text().splitlines())
    assert all(r["text_output"] for r in logged)
    assert sum(r["total_accepted_draft_tokens"] for r in logged) > 0  # speculation was really active
    settings = settings_from_yaml(scratch / "repo_ngram/tensorrt_llm/1/model.yaml")
    assert settings.is_public_pool  # the template keeps TensorRT-LLM's default
    est = replay(read_log(scratch / "log.jsonl", load_tokenizer(smollm2_dir)), settings.drafter(),
                 settings.max_draft_len, "page log")
    assert [(r.stats.drafted_tokens, r.stats.accepted_tokens) for r in est.requests] == [
        (r["total_draft_tokens"], r["total_accepted_draft_tokens"]) for r in logged]
    # ...and the page's own command says so.
    assert "the replay equals them on every request" in _output(result, "estimate.sh")


def test_the_walked_sweep_and_drafter_replays_say_what_the_page_explains(estimate_walk):
    result, _ = estimate_walk
    assert "best: max_draft_len=" in _output(result, "estimate_sweep.sh")
    drafter = _output(result, "estimate_drafter.sh")
    assert "PromptLookupDrafter" in drafter and "all 4 requests" in drafter


def test_estimate_equals_the_engine_with_a_private_pool(smollm2_dir, estimate_walk, tmp_path):
    """A second NGram setting on the real model: private pools, one match per pattern, newest first."""
    from specdec_guide.engine.config import EngineConfig, SpeculativeConfig
    from specdec_guide.engine.core import Engine
    from specdec_guide.estimate import NGramSettings, replay
    from specdec_guide.traffic_log import load_tokenizer, read_log

    settings = NGramSettings(3, 3, is_keep_all=False, is_use_oldest=False, is_public_pool=False)
    spec = SpeculativeConfig("NGram", 3, max_matching_ngram_size=3, is_keep_all=False, is_use_oldest=False,
                             is_public_pool=False)
    engine = Engine.from_config(EngineConfig(path=str(tmp_path / "model.yaml"), model=str(smollm2_dir),
                                             speculative=spec))
    _, scratch = estimate_walk
    log = tmp_path / "log.jsonl"
    measured = []
    with log.open("w") as fh:
        for line in (scratch / "log.jsonl").read_text().splitlines()[:3]:  # the same prompts, fewer tokens
            request = {"text_input": json.loads(line)["text_input"], "sampling_param_max_tokens": 32,
                       "sampling_param_exclude_input_from_output": True}
            done = engine.complete(request)
            measured.append((done.total_draft_tokens, done.total_accepted_draft_tokens, done.stats.target_steps))
            record = {**request, "text_output": done.text, "finish_reason": done.finish_reason}
            if done.finish_reason == "stop":  # also replay the "budget not logged" rule
                del record["sampling_param_max_tokens"]
            fh.write(json.dumps(record) + "\n")
    est = replay(read_log(log, load_tokenizer(smollm2_dir)), settings.drafter(), 3, "private")
    assert [(r.stats.drafted_tokens, r.stats.accepted_tokens, r.stats.target_steps) for r in est.requests] == measured
    assert sum(m[1] for m in measured) > 0


def test_openai_chat_records_replay_like_the_triton_log(smollm2_dir, estimate_walk, tmp_path):
    """The chat path on the real model: the template rendered as a server renders a chat request
    gives the prompt tokens the engine served, so the OpenAI-shaped log replays to the same counts."""
    from specdec_guide.estimate import NGramSettings, replay
    from specdec_guide.traffic_log import load_tokenizer, read_log

    _, scratch = estimate_walk
    triton = [json.loads(line) for line in (scratch / "log.jsonl").read_text().splitlines()]
    chats = [json.loads(line) for line in (ROOT / "snippets/tools/prompts.jsonl").read_text().splitlines()]
    log = tmp_path / "openai.jsonl"
    log.write_text("".join(json.dumps({
        "request": {"model": "smollm2", "messages": chat["messages"], "max_tokens": t["sampling_param_max_tokens"]},
        "response": {"choices": [{"index": 0, "message": {"role": "assistant", "content": t["text_output"]},
                                  "finish_reason": t["finish_reason"]}]},
    }) + "\n" for chat, t in zip(chats, triton)))
    tok = load_tokenizer(smollm2_dir)
    a, b = read_log(log, tok), read_log(scratch / "log.jsonl", tok)
    assert [r.prompt_ids for r in a] == [r.prompt_ids for r in b]
    got = replay(a, NGramSettings().drafter(), 4, "openai")
    assert [(r.stats.drafted_tokens, r.stats.accepted_tokens) for r in got.requests] == [
        (t["total_draft_tokens"], t["total_accepted_draft_tokens"]) for t in triton]


@pytest.mark.timeout(1800)
def test_the_walked_doctor_page_finds_no_error_then_the_foreign_draft(walked_page):
    result, _ = walked_page(DOCTOR_PAGE)
    assert _output(result, "doctor_ngram.sh").rstrip().endswith("0 errors")
    found = _output(result, "doctor_draft_target.sh")
    assert "models/draft/config.json" in found and "error: the draft's vocab_size is 259, the target's 49152" in found
    assert found.rstrip().endswith("exit status 1")
