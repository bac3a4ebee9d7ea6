"""The CPU engine on the real model (SmolLM2-135M-Instruct): speculation never changes the text.

Few prompts and few tokens (a 135M model on 2 shared cores): one lane job (tests/prefetch.py)
builds each engine in turn and runs every prompt once; the tests compare the methods' tokens with
the baseline's.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from specdec_guide.engine.core import Engine
from prefetch import LANE, prepare_smollm2, smollm2_checkpoint

SNIPPET = Path(__file__).resolve().parents[1] / "snippets" / "drafters" / "prompt_lookup_drafter.py"
MAX_TOKENS = 20
CODE = ("def area(width, height):\n    result = width * height\n    return result\n")
QUESTIONS = {
    "code": f"Rename the variable result to value in this function and show the whole function.\n\n{CODE}",
    "context": "Read the passage and answer.\n\nPassage: The museum opens at ten in the morning and closes at "
               "six. Entry is free on Wednesdays.\n\nQuestion: When does the museum close?",
    "chat": "Give me one tip for sleeping better.",
}
SPECS = {
    "ngram": "speculative_config: {decoding_type: NGram, max_draft_len: 4, max_matching_ngram_size: 2}\n",
    "draft_target": "speculative_config: {decoding_type: DraftTarget, max_draft_len: 2, speculative_model_dir: DRAFT}\n",
    "user_provided": "speculative_config: {decoding_type: UserProvided, max_draft_len: 4}\n"
                     f"triton_config: {{cpu_drafter: '{SNIPPET}:PromptLookupDrafter'}}\n",
}


#: Run late in the main thread (tests/conftest.py): by then the lane has usually computed the
#: outputs below, which take ~25 s of one core.
RUNS_LATE = True


def _prompts(smollm2_dir):
    """The questions as the chat template formats them (what a client sends as text_input)."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(smollm2_dir)
    return {kind: tokenizer.apply_chat_template([{"role": "user", "content": text}], add_generation_prompt=True,
                                                tokenize=False) for kind, text in QUESTIONS.items()}


def _run(engine, prompt):
    return engine.complete({"text_input": prompt, "sampling_param_max_tokens": MAX_TOKENS,
                            "sampling_param_exclude_input_from_output": True})


def _engine_yaml(method, smollm2_dir, folder):
    if method == "draft_target" and "error" in _DRAFT:
        raise _DRAFT["error"]
    draft = _DRAFT["dir"] if method == "draft_target" else ""
    path = folder / f"{method}.yaml"
    spec = SPECS[method].replace("DRAFT", str(draft)) if method in SPECS else ""
    path.write_text(f"model: {smollm2_dir}\nbackend: pytorch\n" + spec)
    return path


def _outputs(tmp_path_factory):
    """A lane job: {engine: {prompt kind: final chunk} or the exception it raised}, for the baseline and
    every method in SPECS (each engine built, run and dropped in turn)."""
    smollm2_dir = smollm2_checkpoint()
    if not _DRAFT:  # the lane is off: the job runs in the main thread
        _prepare(tmp_path_factory)
    folder = tmp_path_factory.mktemp("real_yaml")
    prompts = _prompts(smollm2_dir)
    got = {"prompts": prompts}
    for method in ("baseline", *SPECS):
        try:
            engine = Engine.from_yaml(_engine_yaml(method, smollm2_dir, folder))
            got[method] = {kind: _run(engine, p) for kind, p in prompts.items()}
        except Exception as err:  # noqa: BLE001 - raised again in that method's test
            got[method] = err
        finally:
            engine = None  # free the model before the next one loads
    return got


_DRAFT: dict = {}


def _prepare(tmp_path_factory):
    """The checkpoints, made in the main thread (a prepare step: tests/prefetch.py), so that the job
    never looks up the cache folder while a test changes its environment."""
    from specdec_guide.models.smollm2 import ensure_draft_checkpoint

    prepare_smollm2()
    if not _DRAFT:
        try:
            _DRAFT["dir"] = ensure_draft_checkpoint()
        except Exception as err:  # noqa: BLE001 - raised again in the draft_target test
            _DRAFT["error"] = err


LANE.add("real:outputs", _outputs, lambda item: "real_outputs" in getattr(item, "fixturenames", ()), prepare=_prepare)


@pytest.fixture(scope="module")
def real_outputs():
    return LANE.result("real:outputs")


def _of(real_outputs, method):
    got = real_outputs[method]
    if isinstance(got, Exception):
        raise got
    return got


def test_baseline_answers_in_english(real_outputs):
    outputs = _of(real_outputs, "baseline")
    assert "museum" in outputs["context"].text.lower() or "six" in outputs["context"].text.lower()
    assert "def area" in outputs["code"].text


@pytest.mark.parametrize("method", list(SPECS))
def test_greedy_output_is_the_baselines_token_for_token(method, real_outputs):
    baseline, outputs = _of(real_outputs, "baseline"), _of(real_outputs, method)
    assert set(outputs) == set(real_outputs["prompts"])
    for kind in real_outputs["prompts"]:
        got, want = outputs[kind], baseline[kind]
        assert got.token_ids == want.token_ids, (method, kind, got.text, want.text)
        assert got.stats.target_steps == len(got.token_ids) - got.stats.accepted_tokens
        if method != "draft_target" and kind == "code":
            # speculation really active: the rewritten function repeats the prompt's code
            assert got.stats.accepted_tokens > 0 and got.stats.target_steps < MAX_TOKENS, got.stats
