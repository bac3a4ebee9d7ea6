"""The CPU engine on the real model (SmolLM2-135M-Instruct): speculation never changes the text.

Few prompts and few tokens (a 135M model on 2 shared cores): module-scoped engines, one
baseline run per prompt, compared token for token with every method. Draft/Target answers the code
prompt alone, and must there both accept a whole draft and cut a draft at a mismatch:
each of its generation steps runs the 27-layer draft up to max_draft_len times before the target's
pass, so the code prompt costs it about twice what it costs NGram (one measurement of the 20-token
answer, engines already loaded, torch at the engine's default of one thread, this guide's 2-core
machine: 4.1 CPU s against 1.9). The two prompts it skips are where its draft is shortened by the
token budget (chat) and where its answer ends at the end-of-sequence token (context);
tests/test_speculation.py covers both paths in speculation's loop (``generate``) with test
drafters, NGram and UserProvided end at that token here on the context prompt, and
tests/test_engine_generate.py runs Draft/Target over several prompts on one engine (tiny models).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from specdec_guide.engine.core import Engine

SNIPPET = Path(__file__).resolve().parents[1] / "snippets" / "drafters" / "prompt_lookup_drafter.py"
MAX_TOKENS = 20
CODE = ("def area(width, height):\n    result = width * height\n    return result\n")
QUESTIONS = {
    "code": f"Rename the variable result to value in this function and show the whole function.\n\n{CODE}",
    "context": "Read the passage and answer.\n\nPassage: The museum opens at ten in the morning and closes at "
               "six. Entry is free on Wednesdays.\n\nQuestion: When does the museum close?",
    "chat": "Give me one tip for sleeping better.",
}
#: The prompts each method answers (all of QUESTIONS unless named here).
KINDS = {"draft_target": ("code",)}
SPECS = {
    "ngram": "speculative_config: {decoding_type: NGram, max_draft_len: 4, max_matching_ngram_size: 2}\n",
    "draft_target": "speculative_config: {decoding_type: DraftTarget, max_draft_len: 2, speculative_model_dir: DRAFT}\n",
    "user_provided": "speculative_config: {decoding_type: UserProvided, max_draft_len: 4}\n"
                     f"triton_config: {{cpu_drafter: '{SNIPPET}:PromptLookupDrafter'}}\n",
}


@pytest.fixture(scope="module")
def prompts(smollm2_dir):
    """The questions as the chat template formats them (what a client sends as text_input)."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(smollm2_dir)
    return {kind: tokenizer.apply_chat_template([{"role": "user", "content": text}], add_generation_prompt=True,
                                                tokenize=False) for kind, text in QUESTIONS.items()}


@pytest.fixture(scope="module")
def baseline(smollm2_dir, prompts, tmp_path_factory):
    path = tmp_path_factory.mktemp("real_yaml") / "baseline.yaml"
    path.write_text(f"model: {smollm2_dir}\nbackend: pytorch\n")
    engine = Engine.from_yaml(path)
    return engine, {kind: _run(engine, p) for kind, p in prompts.items()}


def _run(engine, prompt):
    return engine.complete({"text_input": prompt, "sampling_param_max_tokens": MAX_TOKENS,
                            "sampling_param_exclude_input_from_output": True})


def _engine(method, smollm2_dir, folder):
    from specdec_guide.models.smollm2 import ensure_draft_checkpoint

    draft = ensure_draft_checkpoint() if method == "draft_target" else ""
    path = folder / f"{method}.yaml"
    path.write_text(f"model: {smollm2_dir}\nbackend: pytorch\n" + SPECS[method].replace("DRAFT", str(draft)))
    return Engine.from_yaml(path)


def test_baseline_answers_in_english(baseline):
    _, outputs = baseline
    assert "museum" in outputs["context"].text.lower() or "six" in outputs["context"].text.lower()
    assert "def area" in outputs["code"].text


@pytest.mark.parametrize("method", list(SPECS))
def test_greedy_output_is_the_baselines_token_for_token(method, baseline, prompts, smollm2_dir, tmp_path):
    engine = _engine(method, smollm2_dir, tmp_path)
    for kind in KINDS.get(method, QUESTIONS):
        got, want = _run(engine, prompts[kind]), baseline[1][kind]
        assert got.token_ids == want.token_ids, (method, kind, got.text, want.text)
        assert got.stats.target_steps == len(got.token_ids) - got.stats.accepted_tokens
        if method != "draft_target" and kind == "code":
            # speculation really active: the rewritten function repeats the prompt's code
            assert got.stats.accepted_tokens > 0 and got.stats.target_steps < MAX_TOKENS, got.stats
        if method == "draft_target":
            # the one prompt keeps a whole draft (max_draft_len 2, plus the target's own token, in
            # one step) and cuts a draft at a mismatch: it runs to the token limit, so no rejection
            # is an end-of-sequence cut
            assert got.finish_reason == "length", (got.finish_reason, got.stats)
            assert max(got.stats.acceptance_lengths) == 2 + 1, got.stats
            assert got.stats.accepted_tokens > 0 and got.stats.rejections > 0, got.stats
