"""``load_tokenizer``'s shortcut for the guide's own checkpoint: AutoTokenizer's tokenizer, no torch.

``specdec-guide estimate`` replays token ids, so a command on the guide's checkpoint needs neither a
model nor torch. AutoTokenizer imports torch and reads the model's config before it picks a class;
for the guide's checkpoint ``load_tokenizer`` loads the class AutoTokenizer picks straight away.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from specdec_guide.traffic_log import chat_prompt_ids, load_tokenizer

ROOT = Path(__file__).resolve().parents[1]
PROMPTS = ROOT / "snippets" / "tools" / "prompts.jsonl"  # the estimate page's prompts


def _texts() -> list[str]:
    """Every text the estimate page's prompts hold, plus some that exercise special tokens."""
    texts = [m["content"] for line in PROMPTS.read_text().splitlines() for m in json.loads(line)["messages"]]
    return texts + ["<|im_start|>user\nHi<|im_end|>\n", "  indented\n\tcode  ", "émigré naïve 東京", ""]


def test_the_guides_checkpoint_gets_the_tokenizer_autotokenizer_gives(smollm2_dir):
    from transformers import AutoTokenizer

    auto = AutoTokenizer.from_pretrained(smollm2_dir, local_files_only=True)
    ours = load_tokenizer(smollm2_dir)
    assert type(ours) is type(auto)
    assert ours.get_vocab() == auto.get_vocab()
    assert ours.all_special_tokens == auto.all_special_tokens
    assert (ours.eos_token_id, ours.bos_token_id, ours.pad_token_id) == (auto.eos_token_id, auto.bos_token_id,
                                                                          auto.pad_token_id)
    assert ours.chat_template == auto.chat_template
    for text in _texts():
        for special in (True, False):
            assert ours(text, add_special_tokens=special)["input_ids"] == \
                auto(text, add_special_tokens=special)["input_ids"], (text, special)
    for line in PROMPTS.read_text().splitlines():
        messages = json.loads(line)["messages"]
        assert chat_prompt_ids(ours, messages) == chat_prompt_ids(auto, messages)


def test_an_edited_copy_of_the_checkpoint_goes_through_autotokenizer(smollm2_dir, tmp_path):
    """The stamp says where a folder came from, not what it holds: a copy whose tokenizer config
    names another class is loaded as AutoTokenizer loads it."""
    from transformers import AutoTokenizer

    copy = tmp_path / "copy"
    copy.mkdir()
    for path in smollm2_dir.iterdir():
        if path.suffix != ".safetensors":
            shutil.copy2(path, copy / path.name)
    config = json.loads((copy / "tokenizer_config.json").read_text())
    (copy / "tokenizer_config.json").write_text(json.dumps({**config, "tokenizer_class": "Qwen2Tokenizer"}))
    auto, ours = AutoTokenizer.from_pretrained(copy, local_files_only=True), load_tokenizer(copy)
    assert type(auto).__name__ == "Qwen2Tokenizer" and type(ours) is type(auto)
    text = "def f(x):\n    return x + 1\n"
    assert ours(text)["input_ids"] == auto(text)["input_ids"]


def test_estimate_on_the_guides_checkpoint_does_not_import_torch(smollm2_dir, tmp_path):
    """Replaying NGram, and a drafter class of the reader's (the user-provided path), needs no torch."""
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps({"prompt": "def f(x):\n    return x + 1\n\ndef g(x):\n",
                               "output": "    return x + 1\n", "finish_reason": "length"}) + "\n")
    drafter = f"{ROOT / 'snippets/drafters/prompt_lookup_drafter.py'}:PromptLookupDrafter"
    runs = [["--summary"], ["--summary", "--max-draft-len", "4", "--drafter", drafter]]
    code = ("import sys\nfrom specdec_guide import cli\n"
            f"codes = [cli.main(['estimate', {str(log)!r}, '--tokenizer', {str(smollm2_dir)!r}, *args]) for args in {runs!r}]\n"
            "print('exit', codes, 'torch imported:', 'torch' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "exit [0, 0] torch imported: False", done.stdout[-2000:]


@pytest.mark.parametrize("stamp", ["[]", "null", "{}", "not json"])
def test_a_folder_with_an_odd_stamp_is_a_one_line_error(tmp_path, stamp):
    from specdec_guide.diagnostics import UserError
    from specdec_guide.models.smollm2 import STAMP

    (tmp_path / STAMP).write_text(stamp)
    with pytest.raises(UserError, match=f"tokenizer '{tmp_path}' not found or not loadable"):
        load_tokenizer(tmp_path)
