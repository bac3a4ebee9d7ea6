"""``specdec-guide doctor`` on checkpoints our code writes: tokenizer pairs, EAGLE-3 heads, ranks."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from specdec_guide import cli
from specdec_guide.models.tiny import HIDDEN, TARGET_LAYERS, VOCAB_SIZE


def doctor(capsys, *args) -> tuple[int, str]:
    code = cli.main(["doctor", *map(str, args)])
    return code, capsys.readouterr().out


def write_yaml(folder: Path, body: str, name: str = "model.yaml") -> Path:
    path = folder / name
    path.write_text("# specdec-guide: trtllm=1.1.0\n" + body)
    return path


def draft_target_yaml(folder: Path, target: Path, draft: Path) -> Path:
    return write_yaml(folder, f"model: {target}\nbackend: pytorch\nspeculative_config:\n"
                              f"  decoding_type: DraftTarget\n  max_draft_len: 4\n  speculative_model_dir: {draft}\n")


def test_matching_draft_and_target_pass(tiny_models, tmp_path, capsys):
    target, draft = tiny_models
    code, out = doctor(capsys, draft_target_yaml(tmp_path, target, draft))
    assert code == 0, out
    assert "0 errors" in out and "note: weights: target" in out and "+ draft" in out


@pytest.fixture
def other_draft(tiny_models, tmp_path):
    """A copy of the tiny draft whose tokenizer the test then changes."""
    _, draft = tiny_models
    copy = tmp_path / "other_draft"
    shutil.copytree(draft, copy)
    return copy


def test_a_draft_with_another_eos_is_refused_at_the_draft_line(tiny_models, tmp_path, capsys, other_draft):
    target, _ = tiny_models
    cfg_path = other_draft / "tokenizer_config.json"
    cfg = json.loads(cfg_path.read_text())
    cfg["eos_token"] = "<pad>"
    cfg_path.write_text(json.dumps(cfg))
    yml = draft_target_yaml(tmp_path, target, other_draft)
    code, out = doctor(capsys, yml)
    assert code == 1
    assert f"{yml}:7:1: error: tokenizers differ: eos_token is id 258 ('<pad>') in the draft, id 257" in out
    assert "Fix: use a draft trained with the target's tokenizer" in out


def test_a_draft_whose_vocabulary_differs_in_two_tokens_is_refused_and_names_them(tiny_models, tmp_path, capsys,
                                                                                  other_draft):
    """'^' and '~' swap ids: the same size, the same special tokens, and none of the sample strings
    uses either, so only a comparison of the whole vocabulary sees it."""
    from specdec_guide.doctor import TOKENIZER_SAMPLES

    assert not any(c in sample for sample in TOKENIZER_SAMPLES for c in "^~")
    target, _ = tiny_models
    tok_path = other_draft / "tokenizer.json"
    tok = json.loads(tok_path.read_text())
    vocab = tok["model"]["vocab"]
    vocab["^"], vocab["~"] = vocab["~"], vocab["^"]
    tok_path.write_text(json.dumps(tok))
    yml = draft_target_yaml(tmp_path, target, other_draft)
    code, out = doctor(capsys, yml)
    assert code == 1, out
    assert (f"{yml}:7:1: error: tokenizers differ in 2 tokens of the vocabulary (token -> id): "
            f"'^' is id {ord('~')} in the draft, id {ord('^')} in the target; "
            f"'~' is id {ord('^')} in the draft, id {ord('~')} in the target Fix: use a draft") in out


def test_an_added_token_special_in_the_target_only_is_refused(tiny_models, tmp_path, capsys, other_draft):
    """Both add '<tool>' as id 259; only the target marks it special (so it never splits in a prompt)."""
    from transformers import AutoTokenizer

    target, _ = tiny_models
    own_target = tmp_path / "target"
    shutil.copytree(target, own_target)
    tok = AutoTokenizer.from_pretrained(own_target)
    tok.add_special_tokens({"additional_special_tokens": ["<tool>"]})
    tok.save_pretrained(own_target)
    tok = AutoTokenizer.from_pretrained(other_draft)
    tok.add_tokens(["<tool>"])
    tok.save_pretrained(other_draft)
    code, out = doctor(capsys, draft_target_yaml(tmp_path, own_target, other_draft))
    assert code == 1, out
    assert (f"tokenizers differ in their added tokens: id {VOCAB_SIZE} is '<tool>' in the draft, '<tool>' (special) "
            "in the target") in out


def test_a_draft_with_an_extra_token_is_refused(tiny_models, tmp_path, capsys, other_draft):
    from transformers import AutoTokenizer

    target, _ = tiny_models
    tok = AutoTokenizer.from_pretrained(other_draft)
    tok.add_special_tokens({"additional_special_tokens": ["<tool>"]})
    tok.save_pretrained(other_draft)
    code, out = doctor(capsys, draft_target_yaml(tmp_path, target, other_draft))
    assert code == 1 and (f"the draft's has {VOCAB_SIZE + 1} tokens, the target's {VOCAB_SIZE} "
                          f"('<tool>' is id {VOCAB_SIZE} in the draft, absent in the target)") in out


def test_a_draft_with_another_vocab_size_points_at_its_config(tiny_models, tmp_path, capsys, other_draft):
    target, _ = tiny_models
    cfg_path = other_draft / "config.json"
    cfg = json.loads(cfg_path.read_text())
    cfg["vocab_size"] = 300
    cfg_path.write_text(json.dumps(cfg, indent=2))
    code, out = doctor(capsys, draft_target_yaml(tmp_path, target, other_draft))
    line = next(i for i, t in enumerate(cfg_path.read_text().splitlines(), 1) if '"vocab_size"' in t)
    assert code == 1 and f"{cfg_path}:{line}:1: error: the draft's vocab_size is 300, the target's {VOCAB_SIZE}" in out


def write_head(folder: Path, hidden: int, draft_vocab: int = VOCAB_SIZE, d2t: bool = True, layers: int = 3) -> Path:
    """An EAGLE-3 head checkpoint shaped like published ones (config.json + safetensors; zeros)."""
    import numpy as np
    from safetensors.numpy import save_file

    folder.mkdir(parents=True, exist_ok=True)
    cfg = {"architectures": ["LlamaForCausalLMEagle3"], "hidden_size": hidden, "num_hidden_layers": 1,
           "num_attention_heads": 4, "num_key_value_heads": 4, "intermediate_size": 2 * hidden,
           "vocab_size": VOCAB_SIZE, "draft_vocab_size": draft_vocab, "rms_norm_eps": 1e-6}
    (folder / "config.json").write_text(json.dumps(cfg, indent=2))
    tensors = {"fc.weight": np.zeros((hidden, hidden * layers), np.float16),
               "norm.weight": np.zeros((hidden,), np.float16),
               "lm_head.weight": np.zeros((draft_vocab, hidden), np.float16)}
    if d2t and draft_vocab != VOCAB_SIZE:
        tensors["d2t"] = np.zeros((draft_vocab,), np.int64)
    save_file(tensors, str(folder / "model.safetensors"))
    return folder


def eagle_yaml(folder: Path, target: Path, head: Path, extra: str = "") -> Path:
    return write_yaml(folder, f"model: {target}\nbackend: pytorch\nspeculative_config:\n  decoding_type: Eagle\n"
                              f"  max_draft_len: 3\n  speculative_model_dir: {head}\n{extra}")


def test_an_eagle3_head_that_fits_passes(tiny_models, tmp_path, capsys):
    target, _ = tiny_models
    code, out = doctor(capsys, eagle_yaml(tmp_path, target, write_head(tmp_path / "head", HIDDEN)))
    assert code == 0, out


def test_an_eagle3_head_of_the_wrong_hidden_size_is_refused(tiny_models, tmp_path, capsys):
    target, _ = tiny_models
    head = write_head(tmp_path / "head", HIDDEN // 2)
    code, out = doctor(capsys, eagle_yaml(tmp_path, target, head))
    assert code == 1
    assert (f"{head / 'config.json'}:5:1: error: the head reads hidden states of size {HIDDEN // 2} (hidden_size), "
            f"the target's hidden_size is {HIDDEN}") in out


def test_an_eagle3_head_without_d2t_and_layers_the_target_lacks(tiny_models, tmp_path, capsys):
    target, _ = tiny_models
    head = write_head(tmp_path / "head", HIDDEN, draft_vocab=128, d2t=False, layers=2)
    yml = eagle_yaml(tmp_path, target, head, f"  eagle3_layers_to_capture: [0, {TARGET_LAYERS}]\n")
    code, out = doctor(capsys, yml)
    assert code == 1
    assert "draft_vocab_size 128 differs from vocab_size 259, but the weights have no d2t tensor" in out
    assert f"{yml}:8:1: error: eagle3_layers_to_capture [{TARGET_LAYERS}]: the target has {TARGET_LAYERS} layers" in out


def test_ranks_against_named_gpus_and_heads(tiny_models, tmp_path, capsys):
    target, _ = tiny_models
    yml = write_yaml(tmp_path, f"model: {target}\nbackend: pytorch\ntensor_parallel_size: 3\ngpus_per_node: 2\n")
    code, out = doctor(capsys, yml, "--gpus", "2")
    assert code == 1
    assert f"{yml}:5:1: error: tensor_parallel_size x pipeline_parallel_size = 3 ranks, but the configuration names 2" in out
    assert "but --gpus says this machine has 2" in out
    assert "the target has 4 attention heads, which 3 ranks cannot split evenly" in out


def test_validator_findings_and_an_extra_options_file_with_any_name(tiny_models, tmp_path, capsys):
    target, _ = tiny_models
    yml = write_yaml(tmp_path, "speculative_config:\n  decoding_type: NGram\n  max_draft_len: 0\n"
                               "  max_matching_ngram_size: 2\n", name="my-options.yml")
    code, out = doctor(capsys, yml, "--model", target)
    assert code == 1 and f"{yml}:4:" in out and "max_draft_len" in out


def test_a_repository_and_a_missing_path(tmp_path, capsys):
    repo = Path(__file__).resolve().parents[1] / "model_repo_templates" / "llmapi" / "ngram"
    code, out = doctor(capsys, repo)
    assert code == 0 and "1 config checked, 0 errors" in out
    assert cli.main(["doctor", str(tmp_path / "nothing")]) == 2
    assert "no such file or directory" in capsys.readouterr().err


def test_memory_budget_against_a_small_gpu_and_the_mtp_draft_length(tiny_models, tmp_path, capsys):
    target, draft = tiny_models
    code, out = doctor(capsys, draft_target_yaml(tmp_path, target, draft), "--gpu-memory", "0.0001")
    assert code == 1 and "error: weights: target" in out and "leaves almost nothing of 0.0001 GiB" in out
    yml = write_yaml(tmp_path, "speculative_config:\n  decoding_type: MTP\n  max_draft_len: 3\n"
                               "  num_nextn_predict_layers: 1\n", name="mtp_llm_api.yaml")
    code, out = doctor(capsys, yml)
    assert code == 0, out
    assert f"{yml}:4:1: warning: max_draft_len 3 differs from num_nextn_predict_layers 1" in out
