"""Deterministic tiny target and draft models, made here, with no download.

They are test fixtures: small random Llama-architecture networks in Hugging Face format that
load with ``AutoModelForCausalLM`` / ``AutoTokenizer`` exactly like a real checkpoint. Their
text is gibberish; what matters is that they are byte-for-byte reproducible, fast on a CPU,
and that the draft is a *cheaper approximation of the target* so acceptance is neither 0 nor 1.

How the draft relates to the target: the draft is the target truncated to ``DRAFT_LAYERS`` of
its ``TARGET_LAYERS`` decoder layers, with the same embeddings, final norm and LM head, and the
same byte-level tokenizer (a draft must share the target's vocabulary). ``EMBED_STD`` sets how
much the first layer dominates, and so the acceptance rate (about 0.4-0.95 on short prompts).
Only printable ASCII and newline rows of the LM head are non-zero, so greedy output is readable
characters (and the models never emit end-of-sequence: runs end by length or stop strings).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from specdec_guide.diagnostics import UserError

SEED = 1234
HIDDEN = 64
HEADS = 4
TARGET_LAYERS = 4
DRAFT_LAYERS = 1
EMBED_STD = 0.08
MAX_POSITIONS = 1024

SPECIALS = ["<s>", "</s>", "<pad>"]  # ids 256, 257, 258 after the 256 byte tokens
VOCAB_SIZE = 256 + len(SPECIALS)
BOS_ID, EOS_ID, PAD_ID = 256, 257, 258


def build_tokenizer():
    """A byte-level tokenizer: every byte is one token, so any text round-trips."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    chars = _byte_level_chars()
    assert set(chars.values()) == set(pre_tokenizers.ByteLevel.alphabet())
    vocab = {chars[b]: b for b in range(256)}
    for i, tok in enumerate(SPECIALS):
        vocab[tok] = 256 + i
    core = Tokenizer(models.BPE(vocab=vocab, merges=[], unk_token=None))
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    core.decoder = decoders.ByteLevel()
    core.add_special_tokens(SPECIALS)
    return PreTrainedTokenizerFast(
        tokenizer_object=core,
        bos_token="<s>",
        eos_token="</s>",
        pad_token="<pad>",
        model_max_length=MAX_POSITIONS,
    )


def _byte_level_chars() -> dict[int, str]:
    """The byte -> stand-in character table that byte-level BPE tokenizers use.

    Printable Latin-1 bytes stand for themselves; the other 68 bytes are shifted past 255 so
    that every byte has a visible, whitespace-free character.
    """
    keep = [*range(ord("!"), ord("~") + 1), *range(ord("\u00a1"), ord("\u00ac") + 1), *range(ord("\u00ae"), 256)]
    table, shift = {}, 0
    for b in range(256):
        if b in keep:
            table[b] = chr(b)
        else:
            table[b] = chr(256 + shift)
            shift += 1
    return table


def _config(layers: int):
    from transformers import LlamaConfig

    return LlamaConfig(
        vocab_size=VOCAB_SIZE,
        hidden_size=HIDDEN,
        intermediate_size=HIDDEN * 2,
        num_hidden_layers=layers,
        num_attention_heads=HEADS,
        num_key_value_heads=HEADS,
        max_position_embeddings=MAX_POSITIONS,
        bos_token_id=BOS_ID,
        eos_token_id=EOS_ID,
        pad_token_id=PAD_ID,
        tie_word_embeddings=False,
        torch_dtype="float32",
    )


def build_models():
    """Return (target, draft) ``LlamaForCausalLM`` instances, identical on every machine."""
    import torch
    from transformers import LlamaForCausalLM

    torch.manual_seed(SEED)
    target = LlamaForCausalLM(_config(TARGET_LAYERS)).eval()
    with torch.no_grad():
        # Embeddings larger than the default init make the first layer dominate, so the
        # truncated draft agrees with the target often, but not always.
        target.model.embed_tokens.weight.normal_(0.0, EMBED_STD)
        printable = torch.zeros(VOCAB_SIZE, dtype=torch.bool)
        printable[32:127] = True
        printable[10] = True
        target.lm_head.weight[~printable] = 0.0  # zero logit: never beats a printable token
    draft = LlamaForCausalLM(_config(DRAFT_LAYERS)).eval()
    state = {k: v for k, v in target.state_dict().items() if not _is_deep(k)}
    draft.load_state_dict(state, strict=True)
    return target, draft


def _is_deep(key: str) -> bool:
    parts = key.split(".")
    return "layers" in parts and int(parts[parts.index("layers") + 1]) >= DRAFT_LAYERS


def write_tiny_models(out_dir: str | Path, force: bool = False) -> tuple[Path, Path]:
    """Write ``out_dir/target`` and ``out_dir/draft``; return their paths.

    Existing models written by this function are reused (the files are deterministic), unless
    ``force``. A folder that holds something else is refused rather than overwritten.
    """
    out = Path(out_dir)
    target_dir, draft_dir = out / "target", out / "draft"
    stamp = out / "tiny_models.json"
    meta = {"generator": "specdec_guide.models.tiny", "seed": SEED, "target_layers": TARGET_LAYERS,
            "draft_layers": DRAFT_LAYERS, "embed_std": EMBED_STD, "vocab_size": VOCAB_SIZE}
    if stamp.is_file() and not force:
        try:
            if json.loads(stamp.read_text()) == meta:
                return target_dir, draft_dir
        except ValueError:
            pass
    if out.exists() and any(out.iterdir()) and not stamp.is_file():
        raise UserError(f"{out}: folder is not empty and was not written by tiny-model; choose another --out")
    from transformers.utils import logging as hf_logging

    tokenizer = build_tokenizer()
    target, draft = build_models()
    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # fixtures: no progress bars in test or notebook output
    try:
        for model, path in ((target, target_dir), (draft, draft_dir)):
            path.mkdir(parents=True, exist_ok=True)
            model.save_pretrained(path)
            tokenizer.save_pretrained(path)
    finally:
        if bars:
            hf_logging.enable_progress_bar()
    stamp.write_text(json.dumps(meta, indent=2) + "\n")
    return target_dir, draft_dir


def _run(args: argparse.Namespace) -> int:
    target_dir, draft_dir = write_tiny_models(args.out, force=args.force)
    print(f"target: {target_dir}\ndraft:  {draft_dir}")
    print("These are deterministic test fixtures (random weights): fine for plumbing, not for text quality.")
    return 0


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "tiny-model",
        help="write a deterministic tiny target + draft model (test fixtures, no download)",
        description="Write DIR/target and DIR/draft: tiny random Llama models in Hugging Face format "
        "sharing a byte-level tokenizer. Deterministic test fixtures; their text is gibberish.",
    )
    p.add_argument("--out", required=True, help="output folder (created)")
    p.add_argument("--force", action="store_true", help="rewrite even if the models are already there")
    p.set_defaults(func=_run)
