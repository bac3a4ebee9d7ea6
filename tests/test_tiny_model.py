"""The tiny fixture models are deterministic, load like real checkpoints, and make a usable draft."""

from __future__ import annotations

import hashlib

import pytest
from specdec_guide import speculation
from specdec_guide.drafters.draft_model import DraftModelDrafter
from specdec_guide.diagnostics import UserError
from specdec_guide.models.tiny import EOS_ID, VOCAB_SIZE, write_tiny_models


def _digest(folder):
    h = hashlib.sha256()
    for path in sorted(folder.rglob("*.safetensors")):
        h.update(path.read_bytes())
    return h.hexdigest()


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    return write_tiny_models(tmp_path_factory.mktemp("tiny"))


def test_models_are_byte_for_byte_reproducible(models, tmp_path):
    again = write_tiny_models(tmp_path / "again")
    assert _digest(models[0]) == _digest(again[0])
    assert _digest(models[1]) == _digest(again[1])


def test_models_load_with_auto_classes_and_share_a_round_tripping_tokenizer(models):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    target_dir, draft_dir = models
    tok_t, tok_d = AutoTokenizer.from_pretrained(target_dir), AutoTokenizer.from_pretrained(draft_dir)
    text = "Grüße, Triton! 123\n"
    ids = tok_t(text, add_special_tokens=False)["input_ids"]
    assert ids == list(text.encode("utf-8")) == tok_d(text, add_special_tokens=False)["input_ids"]
    assert tok_t.decode(ids) == text
    assert tok_t.eos_token_id == EOS_ID
    target = AutoModelForCausalLM.from_pretrained(target_dir)
    draft = AutoModelForCausalLM.from_pretrained(draft_dir)
    assert target.config.vocab_size == draft.config.vocab_size == VOCAB_SIZE
    assert draft.config.num_hidden_layers < target.config.num_hidden_layers


def test_the_draft_is_accepted_sometimes_but_not_always(models):
    from transformers import AutoModelForCausalLM

    target = speculation.hf_logits_fn(AutoModelForCausalLM.from_pretrained(models[0]).eval())
    drafter = DraftModelDrafter.from_pretrained(str(models[1]), max_draft_len=4)

    prompt = list(b"The quick brown fox")
    plain = speculation.generate(target, prompt, 32)
    spec = speculation.generate(target, prompt, 32, drafter=drafter, max_draft_len=4)
    assert spec.tokens == plain.tokens
    assert 0.1 < spec.stats.acceptance_rate < 0.99
    assert all(32 <= t < 127 or t == 10 for t in plain.tokens), "greedy output should be printable"


def test_refuses_a_folder_it_did_not_write(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(UserError, match="not empty"):
        write_tiny_models(tmp_path)


def test_cli_writes_both_models(tmp_path, capsys):
    # `specdec-guide tiny-model` through cli.main, in this process: a new interpreter would import
    # torch again (the `python -m specdec_guide` entry is run by test_repository.py, test_coverage.py).
    from specdec_guide import cli

    assert cli.main(["tiny-model", "--out", str(tmp_path / "m")]) == 0
    assert (tmp_path / "m/target/config.json").is_file() and (tmp_path / "m/draft/tokenizer.json").is_file()
    assert "test fixtures" in capsys.readouterr().out
