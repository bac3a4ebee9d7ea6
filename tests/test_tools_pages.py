"""The estimate and doctor pages, executed on the real model, and estimate's exactness proof.

The page snippets run in a scratch folder (with ``snippets/`` linked in), in a fresh ``bash``,
as a reader runs them. What each prints is what the page shows: it is stored under
``snippets/tools/outputs/`` and must equal a fresh run (deterministic: greedy decoding,
one thread). ``SPECDEC_UPDATE_OUTPUTS=1`` rewrites the stored files from this run.

The exactness proof: the CPU engine serves the prompts with NGram and counts drafted and accepted
tokens itself; ``estimate`` replays the log it wrote with no model and must give the same counts,
request by request, with TensorRT-LLM's default public pool (order matters) and with another setting.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SNIPPETS = ROOT / "snippets" / "tools"
OUTPUTS = SNIPPETS / "outputs"
PLOT = ROOT / "docs" / "speculative_decoding" / "img" / "estimate_sweep.png"
UPDATE = os.environ.get("SPECDEC_UPDATE_OUTPUTS") == "1"


def check_output(name: str, text: str) -> None:
    path = OUTPUTS / name
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return
    assert path.is_file(), f"{path} is missing: run this test with SPECDEC_UPDATE_OUTPUTS=1"
    assert path.read_text() == text, (f"{path} differs from this run: the page would show stale output "
                                      "(rerun with SPECDEC_UPDATE_OUTPUTS=1 and review the diff)")


def bash(snippet: str, cwd: Path, env: dict, expect: int = 0) -> str:
    run = subprocess.run(["bash", "-e", str(SNIPPETS / snippet)], cwd=cwd, env=env, capture_output=True,
                         text=True, timeout=1200)
    assert run.returncode == expect, f"{snippet}: exit {run.returncode}\n{run.stdout}\n{run.stderr}"
    return run.stdout


@pytest.fixture(scope="module")
def page(smollm2_dir, tmp_path_factory):
    """A scratch folder after the page's first snippet (make_log.sh): the log, repo_ngram, the env."""
    cwd = tmp_path_factory.mktemp("tools_page")
    (cwd / "snippets").symlink_to(ROOT / "snippets")
    env = {**os.environ, "MODEL": str(smollm2_dir), "PYTHONPATH": str(ROOT / "src"),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    start = time.monotonic()
    out = bash("make_log.sh", cwd, env)
    print(f"make_log.sh on the real model: {time.monotonic() - start:.0f} s")
    return cwd, env, out


def test_make_log_snippet_logs_every_prompt(page):
    cwd, _, out = page
    check_output("make_log.txt", out)
    lines = (cwd / "log.jsonl").read_text().splitlines()
    assert len(lines) == len((SNIPPETS / "prompts.jsonl").read_text().splitlines())
    assert all(json.loads(line)["text_output"] for line in lines)


def test_estimate_snippet_equals_the_engine_exactly(page):
    """The proof: replayed counts equal the engine's own, request by request (public pool, log order)."""
    cwd, env, _ = page
    out = bash("estimate.sh", cwd, env)
    check_output("estimate.txt", out)
    assert "the replay equals them on every request" in out
    logged = [json.loads(line) for line in (cwd / "log.jsonl").read_text().splitlines()]
    assert sum(r["total_accepted_draft_tokens"] for r in logged) > 0  # speculation was really active


def test_estimate_sweep_and_drafter_snippets(page):
    cwd, env, _ = page
    out = bash("estimate_sweep.sh", cwd, env)
    check_output("estimate_sweep.txt", out)
    assert "best: max_draft_len=" in out
    png = cwd / "sweep.png"
    assert png.read_bytes()[:4] == b"\x89PNG"
    if UPDATE:
        PLOT.write_bytes(png.read_bytes())
    out = bash("estimate_drafter.sh", cwd, env)
    check_output("estimate_drafter.txt", out)
    assert "PromptLookupDrafter" in out and "all 4 requests" in out


def test_doctor_snippets(page):
    cwd, env, _ = page
    out = bash("doctor_ngram.sh", cwd, env)
    check_output("doctor_ngram.txt", out)
    assert "0 errors" in out
    out = bash("doctor_draft_target.sh", cwd, env, expect=1)
    check_output("doctor_draft_target.txt", out)
    assert "models/draft/config.json" in out and "error: the draft's vocab_size is 259, the target's 49152" in out


def test_estimate_equals_the_engine_with_a_private_pool(smollm2_dir, page, tmp_path):
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
    cwd, _, _ = page
    log = tmp_path / "log.jsonl"
    measured = []
    with log.open("w") as fh:
        for line in (cwd / "log.jsonl").read_text().splitlines()[:3]:  # the same prompts, fewer tokens
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


def test_openai_chat_records_replay_like_the_triton_log(smollm2_dir, page, tmp_path):
    """The chat path on the real model: the template rendered as a server renders a chat request
    gives the prompt tokens the engine served, so the OpenAI-shaped log replays to the same counts."""
    from specdec_guide.estimate import NGramSettings, replay
    from specdec_guide.traffic_log import load_tokenizer, read_log

    cwd, _, _ = page
    triton = [json.loads(line) for line in (cwd / "log.jsonl").read_text().splitlines()]
    chats = [json.loads(line) for line in (SNIPPETS / "prompts.jsonl").read_text().splitlines()]
    log = tmp_path / "openai.jsonl"
    log.write_text("".join(json.dumps({
        "request": {"model": "smollm2", "messages": chat["messages"], "max_tokens": t["sampling_param_max_tokens"]},
        "response": {"choices": [{"index": 0, "message": {"role": "assistant", "content": t["text_output"]},
                                  "finish_reason": t["finish_reason"]}]},
    }) + "\n" for chat, t in zip(chats, triton)))
    tok = load_tokenizer(smollm2_dir)
    a, b = read_log(log, tok), read_log(cwd / "log.jsonl", tok)
    assert [r.prompt_ids for r in a] == [r.prompt_ids for r in b]
    got = replay(a, NGramSettings().drafter(), 4, "openai")
    assert [(r.stats.drafted_tokens, r.stats.accepted_tokens) for r in got.requests] == [
        (t["total_draft_tokens"], t["total_accepted_draft_tokens"]) for t in triton]
