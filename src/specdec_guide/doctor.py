"""``specdec-guide doctor``: will this repository / config load, before a GPU is spent on it?

Given a Triton model repository (ours, or one copied from upstream: ``<model>/config.pbtxt`` and
``<model>/1/model.yaml``), a ``model.yaml``, or an extra-options YAML (with ``--model`` for the
target, which the command line supplies there), it:

1. runs ``specdec-guide validate`` for the file's track (:func:`validate.runner.validate_paths`);
   a ``decoding_type`` of a method that methods.yaml does not list for that track is an error;
2. Draft/Target: the models' ``vocab_size``, then both tokenizers whole: the vocabulary (token ->
   id), the added and special tokens, and the ids of a sample of strings; names the first
   differing tokens;
3. EAGLE-3: checks the head's ``config.json`` and weight shapes against the target's config
   (:data:`EAGLE3_SOURCE` says where the rules come from);
4. ``max_draft_len`` where the release states a rule (MTP: ``num_nextn_predict_layers``);
5. ``tensor_parallel_size * pipeline_parallel_size`` against the GPUs the configuration names
   (``gpus_per_node``, ``instance_group.gpus`` in config.pbtxt) or ``--gpus``, and the attention
   heads the target splits across ranks;
6. a rough memory budget: the draft's weights on top of the target's, from the checkpoint files.

Checks that need a model's files run only when the directory is on disk; otherwise a note says
what was skipped. Each finding is ``path:line:col: severity: message`` with a fix; exit 1 when
there is an error.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import struct
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from specdec_guide.releases import methods as _methods
from specdec_guide.diagnostics import UserError, read_json

#: Where the EAGLE-3 head rules come from. Read 2026-11-30; the stored copy is a later main-branch
#: commit, not the 1.1.0 tag, so each rule is marked as not confirmed for 1.1.0 on the doctor page.
EAGLE3_SOURCE = ("NVIDIA/TensorRT-LLM tensorrt_llm/_torch/models/modeling_speculative.py "
                 "(Eagle3DraftModel, Eagle3ForCausalLM; main at 00679c66c3e3)")
#: Strings tokenized after the vocabularies agree (code, prose, digits, unicode, chat markup): a different
#: pre-tokenizer, normalizer or merge table shows here.
TOKENIZER_SAMPLES = (
    "Hello, world!", "def add(a, b):\n    return a + b", "The year 2026 has 365 days.",
    "naïve café – 東京 🚀", "  leading spaces\tand tabs", '{"key": [1, 2.5, null]}',
    "<|im_start|>user\nhi<|im_end|>", "SELECT * FROM t WHERE x > 3;",
)
SPECIAL_TOKENS = ("bos_token", "eos_token", "pad_token", "unk_token")
# The methods registry's spellings (every track each method is on), plus the ones Triton's 1.2.1 guide writes (Eagle3,
# Draft_Target; see the versions page): the validator reports those, doctor still checks what they name.
EAGLE_TYPES = (*_methods.spellings("eagle3"), "Eagle3")
DRAFT_TARGET_TYPES = (*_methods.spellings("draft_target"), "Draft_Target")
DEFAULT_CAPTURE_LAYERS = 3  # EAGLE-3 reads three target layers unless eagle3_layers_to_capture says otherwise


@dataclass(frozen=True, order=True)
class Finding:
    path: str
    line: int
    col: int
    severity: str  # "error", "warning" or "note"
    message: str
    fix: str = ""

    def __str__(self) -> str:
        fix = f" Fix: {self.fix}" if self.fix else ""
        return f"{shown(self.path)}:{self.line}:{self.col}: {self.severity}: {self.message}{fix}"


def shown(path: str | Path) -> str:
    """A path as the reader typed it: relative to the current folder when it is below it."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


@dataclass
class Config:
    """One LLM-API YAML and what it names."""

    path: Path
    text: str
    data: dict
    pbtxt: Path | None = None
    findings: list = field(default_factory=list)
    track: str | None = None  # the track id the validator read the file as

    def line_of(self, *keys: str) -> int:
        """1-based line of the innermost key in ``keys`` that the file holds (1 when none)."""
        from specdec_guide.diagnostics import yaml_key_position

        return yaml_key_position(self.text, *keys)[0]

    def add(self, severity: str, message: str, fix: str, *keys: str) -> None:
        self.findings.append(Finding(str(self.path), self.line_of(*keys) if keys else 1, 1, severity, message, fix))

    @property
    def spec(self) -> dict:
        spec = self.data.get("speculative_config")
        return spec if isinstance(spec, dict) else {}


# -- helpers that read checkpoints without loading them -------------------------------------------
def json_line(path: Path, key: str) -> int:
    """Line of ``"key":`` in a JSON file (1 when absent): where a config.json finding points."""
    try:
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if f'"{key}"' in line:
                return n
    except (OSError, UnicodeDecodeError):
        pass
    return 1


def safetensors_shapes(folder: Path) -> dict[str, list[int]]:
    """Tensor name -> shape from the headers of every ``*.safetensors`` file (no weights read)."""
    shapes: dict[str, list[int]] = {}
    for f in sorted(folder.glob("*.safetensors")):
        try:
            with open(f, "rb") as fh:
                (size,) = struct.unpack("<Q", fh.read(8))
                header = json.loads(fh.read(size))
        except (OSError, ValueError, struct.error):
            continue
        shapes.update({k: v.get("shape", []) for k, v in header.items() if k != "__metadata__"})
    return shapes


def weight_bytes(folder: Path) -> int:
    """Bytes of weight files (safetensors, else PyTorch .bin/.pt, else GGUF) in a checkpoint dir."""
    for pattern in ("*.safetensors", "*.bin", "*.pt", "*.gguf"):
        files = [p for p in folder.glob(pattern) if p.is_file()]
        if files:
            return sum(p.stat().st_size for p in files)
    return 0


def text_config(cfg: dict) -> dict:
    """Multimodal configs nest the language model's fields under text_config."""
    inner = cfg.get("text_config")
    return inner if isinstance(inner, dict) else cfg


# -- loading what doctor is pointed at -------------------------------------------------------------
def _load_yaml(path: Path, pbtxt: Path | None = None) -> Config:
    import yaml

    try:
        raw = path.read_bytes()
    except OSError as err:
        raise UserError(f"{path}:0:0: cannot read: {err.strerror or err}") from None
    # Not UTF-8 or not YAML: the validator reports where; doctor reads what it can.
    text = raw.decode("utf-8", errors="replace")
    try:
        data = yaml.safe_load(text)
    except (yaml.YAMLError, RecursionError):
        data = None
    return Config(path, text, data if isinstance(data, dict) else {}, pbtxt)


def find_configs(target: Path) -> list[Config]:
    """The LLM-API YAML files of a repository, or the one file given."""
    if target.is_file():
        return [_load_yaml(target)]
    if not target.is_dir():
        raise UserError(f"{target}: no such file or directory")
    found = []
    for pbtxt in sorted(target.rglob("config.pbtxt")):
        for yml in sorted(pbtxt.parent.glob("*/model.yaml")):
            found.append(_load_yaml(yml, pbtxt))
    if not found:
        found = [_load_yaml(p) for p in sorted(target.rglob("model.yaml"))]
    if not found:
        raise UserError(f"{target}: no model.yaml found (expected <model>/config.pbtxt and <model>/1/model.yaml, "
                        "or give a model.yaml / extra-options YAML)")
    return found


def resolve_dir(value: Any, cfg: Config) -> Path | None:
    """A local directory a config names (relative: next to the YAML, then the current folder)."""
    if not isinstance(value, str) or not value or "${" in value:
        return None
    p = Path(value)
    for cand in ([p] if p.is_absolute() else [cfg.path.parent / p, Path.cwd() / p]):
        if cand.is_dir():
            return cand.resolve()
    return None


# -- the checks -----------------------------------------------------------------------------------
def run_validator(cfg: Config, trtllm: str | None) -> list[Finding]:
    """``specdec-guide validate`` on the YAML (and its config.pbtxt) for the file's track."""
    from specdec_guide.validate import kinds
    from specdec_guide.validate.runner import validate_paths

    paths = [cfg.path] + ([cfg.pbtxt] if cfg.pbtxt else [])
    copy_dir = None
    if kinds.kind_of(cfg.path) is None:
        # An extra-options file with a name the validator does not recognise: validate a copy under a
        # name it does (the lines are the same), and report under the reader's file name.
        copy_dir = Path(tempfile.mkdtemp(prefix="specdec-doctor-"))
        shutil.copyfile(cfg.path, copy_dir / "extra_llm_api_options.yaml")
        paths[0] = copy_dir / "extra_llm_api_options.yaml"
    try:
        report = validate_paths(paths, trtllm=trtllm, root=Path.cwd(), is_verified=lambda _p: True)
    finally:
        if copy_dir:
            shutil.rmtree(copy_dir, ignore_errors=True)
    cfg.track = next((r.track.id for r in report.results if r.track is not None), None)
    out = []
    for d in report.diagnostics:
        where = str(cfg.path) if copy_dir and d.path.endswith("extra_llm_api_options.yaml") else d.path
        fix = ("correct the YAML at that position" if "syntax" in d.message.lower() else
               "use a key and value this TensorRT-LLM release accepts (the Versions and keys page lists them)")
        out.append(Finding(where, d.line, d.col, "error", d.message, fix))
    return out


#: How many differing tokens a finding names before it says how many more there are.
SHOWN_DIFFERENCES = 3


def _more(diffs: list, what: str) -> str:
    rest = len(diffs) - SHOWN_DIFFERENCES
    return f"; and {rest} more {what}" if rest > 0 else ""


def vocabulary_differences(t_tok, d_tok) -> list[tuple[str, int | None, int | None]]:
    """``(token, target id, draft id)`` for every token whose id differs (None: absent), by id."""
    tv, dv = t_tok.get_vocab(), d_tok.get_vocab()
    diffs = [(tok, tv.get(tok), dv.get(tok)) for tok in set(tv) | set(dv) if tv.get(tok) != dv.get(tok)]
    return sorted(diffs, key=lambda d: (min(i for i in d[1:] if i is not None), d[0]))


def added_token_differences(t_tok, d_tok) -> list[tuple[int, str, str]]:
    """``(id, target's, draft's)`` for added tokens that differ in text or in being special."""
    def table(tok) -> dict:
        decoder = getattr(tok, "added_tokens_decoder", None) or {}
        return {int(i): (str(getattr(a, "content", a)), bool(getattr(a, "special", False))) for i, a in decoder.items()}

    def shown(entry) -> str:
        return "none" if entry is None else f"{entry[0]!r}{' (special)' if entry[1] else ''}"

    ta, da = table(t_tok), table(d_tok)
    return [(i, shown(ta.get(i)), shown(da.get(i))) for i in sorted(set(ta) | set(da)) if ta.get(i) != da.get(i)]


def _id_text(i: int | None) -> str:
    return "absent" if i is None else f"id {i}"


def check_tokenizers(cfg: Config, target: Path, draft: Path) -> None:
    """Draft/Target: the draft must speak the target's vocabulary, token for token.

    Compared whole: the vocabulary (token -> id, added tokens included), the added tokens (text and
    whether each is special), the special tokens, then a sample of strings (which also catches a
    different pre-tokenizer or merge table). The finding names the first differing tokens.
    """
    from specdec_guide.traffic_log import load_tokenizer

    fix = "use a draft trained with the target's tokenizer (the same family, e.g. a smaller size of it)"
    key = ("speculative_config", "speculative_model_dir" if "speculative_model_dir" in cfg.spec else "speculative_model")
    t_cfg, d_cfg = read_json(target / "config.json") or {}, read_json(draft / "config.json") or {}
    tv, dv = text_config(t_cfg).get("vocab_size"), text_config(d_cfg).get("vocab_size")
    if tv is not None and dv is not None and tv != dv:
        cfg.findings.append(Finding(str(draft / "config.json"), json_line(draft / "config.json", "vocab_size"), 1,
                                    "error", f"the draft's vocab_size is {dv}, the target's {tv}: draft token ids "
                                    "would index another vocabulary", fix))
        return
    try:
        t_tok, d_tok = load_tokenizer(target), load_tokenizer(draft)
    except UserError as err:
        cfg.add("warning", f"tokenizers not compared: {err}", "make both directories hold their tokenizer files",
                *key)
        return
    vocab = vocabulary_differences(t_tok, d_tok)
    named = "; ".join(f"{tok!r} is {_id_text(d)} in the draft, {_id_text(t)} in the target"
                      for tok, t, d in vocab[:SHOWN_DIFFERENCES]) + _more(vocab, "tokens")
    if len(t_tok) != len(d_tok):
        cfg.add("error", f"tokenizers differ: the draft's has {len(d_tok)} tokens, the target's {len(t_tok)}"
                + (f" ({named})" if vocab else ""), fix, *key)
        return
    for name in SPECIAL_TOKENS:
        t_id, d_id = getattr(t_tok, f"{name}_id", None), getattr(d_tok, f"{name}_id", None)
        if t_id != d_id:
            cfg.add("error", f"tokenizers differ: {name} is id {d_id} ({getattr(d_tok, name, None)!r}) in the draft, "
                    f"id {t_id} ({getattr(t_tok, name, None)!r}) in the target", fix, *key)
            return
    if vocab:
        cfg.add("error", f"tokenizers differ in {len(vocab)} token{'s' if len(vocab) != 1 else ''} of the vocabulary "
                f"(token -> id): {named}", fix, *key)
        return
    added = added_token_differences(t_tok, d_tok)
    if added:
        listed = "; ".join(f"id {i} is {d} in the draft, {t} in the target" for i, t, d in added[:SHOWN_DIFFERENCES])
        cfg.add("error", f"tokenizers differ in their added tokens: {listed}{_more(added, 'added tokens')}", fix, *key)
        return
    t_special, d_special = sorted(map(str, t_tok.all_special_tokens)), sorted(map(str, d_tok.all_special_tokens))
    if t_special != d_special:
        only_d = [x for x in d_special if x not in t_special]
        only_t = [x for x in t_special if x not in d_special]
        cfg.add("error", f"tokenizers differ in their special tokens: the draft's only {only_d}, the target's only "
                f"{only_t}", fix, *key)
        return
    for sample in TOKENIZER_SAMPLES:
        a = t_tok(sample, add_special_tokens=False)["input_ids"]
        b = d_tok(sample, add_special_tokens=False)["input_ids"]
        if a != b:
            i = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            cfg.add("error", f"tokenizers differ on {sample!r}: token {i} is {b[i] if i < len(b) else None} in the "
                    f"draft, {a[i] if i < len(a) else None} in the target (same vocabulary, so the pre-tokenizer, "
                    "normalizer or merges differ)", fix, *key)
            return


def check_eagle3_head(cfg: Config, target: Path, head: Path) -> None:
    """The head's config and weight shapes against the target's config (rules: :data:`EAGLE3_SOURCE`)."""
    key = ("speculative_config", "speculative_model_dir" if "speculative_model_dir" in cfg.spec else "speculative_model")
    head_json = head / "config.json"
    h_cfg, t_cfg = read_json(head_json), read_json(target / "config.json")
    if h_cfg is None:
        cfg.add("error", f"the EAGLE-3 head {head} has no readable config.json",
                "point speculative_model_dir at the head's checkpoint folder (config.json + weights)", *key)
        return
    if t_cfg is None:
        cfg.add("note", f"the target {target} has no readable config.json: the head was not compared with it", "", "model")
        return
    t_cfg = text_config(t_cfg)
    t_hidden, t_vocab, t_layers = t_cfg.get("hidden_size"), t_cfg.get("vocab_size"), t_cfg.get("num_hidden_layers")
    h_path = str(head_json)

    def err(field_name: str, message: str, fix: str) -> None:
        cfg.findings.append(Finding(h_path, json_line(head_json, field_name), 1, "error", message, fix))

    hidden_in_field = "target_hidden_size" if "target_hidden_size" in h_cfg else "hidden_size"
    hidden_in = h_cfg.get(hidden_in_field)
    if hidden_in is not None and t_hidden is not None and hidden_in != t_hidden:
        err(hidden_in_field, f"the head reads hidden states of size {hidden_in} ({hidden_in_field}), the target's "
            f"hidden_size is {t_hidden}", "use a head trained for this target model")
    vocab = h_cfg.get("vocab_size")
    if vocab is not None and t_vocab is not None and vocab != t_vocab:
        err("vocab_size", f"the head's vocab_size is {vocab}, the target's {t_vocab}",
            "use a head trained for this target model (the same tokenizer)")
    draft_vocab = h_cfg.get("draft_vocab_size") or vocab
    shapes = safetensors_shapes(head)
    if draft_vocab is not None and vocab is not None and draft_vocab != vocab:
        d2t = shapes.get("d2t")
        if shapes and d2t is None:
            err("draft_vocab_size", f"draft_vocab_size {draft_vocab} differs from vocab_size {vocab}, but the weights "
                "have no d2t tensor (the draft-to-target id mapping)", "use the head's full export, with d2t")
        elif d2t is not None and list(d2t) != [draft_vocab]:
            err("draft_vocab_size", f"d2t has shape {d2t}, expected [{draft_vocab}] (draft_vocab_size)",
                "use a consistent export of the head")
    if shapes and "lm_head.weight" not in shapes and draft_vocab is not None and t_vocab is not None \
            and draft_vocab != t_vocab:
        err("draft_vocab_size", f"the head has no lm_head, so the target's ({t_vocab} rows) is used, but "
            f"draft_vocab_size is {draft_vocab}", "use the head's export that includes lm_head.weight")
    layers = cfg.spec.get("eagle3_layers_to_capture")
    n_capture = len(layers) if isinstance(layers, list) and layers else DEFAULT_CAPTURE_LAYERS
    if isinstance(layers, list) and t_layers is not None:
        bad = [i for i in layers if isinstance(i, int) and not -t_layers <= i < t_layers]
        if bad:
            cfg.add("error", f"eagle3_layers_to_capture {bad}: the target has {t_layers} layers (0..{t_layers - 1})",
                    "pick layers the target has", "speculative_config", "eagle3_layers_to_capture")
    fc = shapes.get("fc.weight")
    if fc and hidden_in is not None and len(fc) == 2 and fc[1] != hidden_in * n_capture:
        err(hidden_in_field, f"fc.weight has {fc[1]} inputs; reading {n_capture} target layers of size {hidden_in} "
            f"needs {hidden_in * n_capture}",
            "set speculative_config.eagle3_layers_to_capture to the layers the head was trained on")


def check_draft_len(cfg: Config) -> None:
    spec = cfg.spec
    if spec.get("decoding_type") == "MTP":
        n, k = spec.get("num_nextn_predict_layers"), spec.get("max_draft_len")
        if isinstance(n, int) and isinstance(k, int) and n != k:
            cfg.add("warning", f"max_draft_len {k} differs from num_nextn_predict_layers {n}: on 1.1.0 the draft "
                    "length is num_nextn_predict_layers (the docs: 'Currently must match max_draft_len')",
                    "set both to the same value", "speculative_config", "max_draft_len")


def named_gpus(cfg: Config) -> tuple[int | None, str, int]:
    """(count, where, line) of the GPUs the configuration names, if it names any."""
    gpn = cfg.data.get("gpus_per_node")
    if isinstance(gpn, int) and not isinstance(gpn, bool):
        return gpn, str(cfg.path), cfg.line_of("gpus_per_node")
    if cfg.pbtxt is not None:
        try:
            text = cfg.pbtxt.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):  # the validator reports it
            text = ""
        for n, line in enumerate(text.splitlines(), 1):
            m = re.search(r"gpus\s*:\s*\[([^\]]*)\]", line)
            if m:
                ids = [x for x in m.group(1).split(",") if x.strip()]
                return len(ids), str(cfg.pbtxt), n
    return None, "", 0


def check_parallelism(cfg: Config, target: Path | None, gpus: int | None) -> None:
    tp = cfg.data.get("tensor_parallel_size", 1)
    pp = cfg.data.get("pipeline_parallel_size", 1)
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (tp, pp)):
        return  # the validator reports the type
    world = tp * pp
    count, where, line = named_gpus(cfg)
    if count is not None and world > count:
        cfg.findings.append(Finding(where, line, 1, "error", f"tensor_parallel_size x pipeline_parallel_size = {world} "
                                    f"ranks, but the configuration names {count} GPU(s)",
                                    "lower tensor_parallel_size or name more GPUs"))
    if gpus is not None and world > gpus:
        cfg.add("error", f"tensor_parallel_size x pipeline_parallel_size = {world} ranks, but --gpus says this "
                f"machine has {gpus}", "lower tensor_parallel_size", "tensor_parallel_size")
    if target is not None and tp > 1:
        t_cfg = text_config(read_json(target / "config.json") or {})
        heads, kv = t_cfg.get("num_attention_heads"), t_cfg.get("num_key_value_heads")
        if isinstance(heads, int) and heads % tp:
            cfg.add("error", f"the target has {heads} attention heads, which {tp} ranks cannot split evenly",
                    f"use a tensor_parallel_size that divides {heads}", "tensor_parallel_size")
        elif isinstance(kv, int) and kv % tp and tp % kv:
            cfg.add("warning", f"the target has {kv} key-value heads and tensor_parallel_size is {tp}: neither divides "
                    "the other", "use a tensor_parallel_size that divides the key-value heads", "tensor_parallel_size")


def _size(n: float) -> str:
    return f"{n / 1024 ** 3:.2f} GiB" if n >= 1024 ** 3 else f"{n / 1024 ** 2:.1f} MiB"


def memory_budget(cfg: Config, target: Path | None, draft: Path | None, gpu_gib: float | None) -> None:
    if target is None:
        return
    t_bytes = weight_bytes(target)
    d_bytes = weight_bytes(draft) if draft is not None else 0
    if not t_bytes:
        return
    tp = cfg.data.get("tensor_parallel_size", 1) if isinstance(cfg.data.get("tensor_parallel_size", 1), int) else 1
    gib = 1024 ** 3
    total = (t_bytes + d_bytes) / gib
    msg = (f"weights: target {_size(t_bytes)}" + (f" + draft {_size(d_bytes)}" if draft else "")
           + f" = {_size(t_bytes + d_bytes)} as stored (checkpoint files), about "
           f"{_size((t_bytes + d_bytes) / max(tp, 1))} per rank at tensor_parallel_size {tp}; the KV cache "
           "takes a share of what is left (free_gpu_memory_fraction)")
    severity, fix = "note", ""
    if gpu_gib is not None and total / max(tp, 1) > 0.9 * gpu_gib:
        severity, fix = "error", "use more ranks, a smaller draft, or a quantized checkpoint"
        msg += f"; that leaves almost nothing of {gpu_gib:g} GiB per GPU"
    cfg.add(severity, msg, fix, "model")


def check_method_on_track(cfg: Config) -> None:
    """A ``decoding_type`` of a method of methods.yaml that the file's track does not have (its ``tracks``)."""
    kind, tid = cfg.spec.get("decoding_type"), cfg.track
    if not kind or tid is None:
        return
    for m in _methods.load():
        if kind in _methods.spellings(m.id) and not m.exists_on(tid):
            cfg.add("error", f"method {m.id} is not available on track {tid} (methods.yaml)",
                    f"use a release that has it ({', '.join(m.tracks)}) or another method",
                    "speculative_config", "decoding_type")


def diagnose(cfg: Config, trtllm: str | None = None, target_override: str | None = None,
             gpus: int | None = None, gpu_gib: float | None = None) -> list[Finding]:
    cfg.findings = run_validator(cfg, trtllm)
    check_method_on_track(cfg)
    model_value = target_override or cfg.data.get("model")
    target = resolve_dir(model_value, cfg)
    if model_value and target is None:
        cfg.add("note", f"model '{model_value}' is not a local directory: checks that read the target's files were "
                "skipped", "give a local checkpoint (or --model DIR) to check it", "model")
    spec = cfg.spec
    kind = spec.get("decoding_type")
    draft_value = spec.get("speculative_model_dir", spec.get("speculative_model"))
    draft = resolve_dir(draft_value, cfg)
    if draft_value and draft is None:
        cfg.add("note", f"speculative model '{draft_value}' is not a local directory: its checks were skipped",
                "download it and name the local folder to check it", "speculative_config",
                "speculative_model_dir" if "speculative_model_dir" in spec else "speculative_model")
    if target is not None and draft is not None:
        if kind in DRAFT_TARGET_TYPES:
            check_tokenizers(cfg, target, draft)
        elif kind in EAGLE_TYPES:
            check_eagle3_head(cfg, target, draft)
    check_draft_len(cfg)
    check_parallelism(cfg, target, gpus)
    memory_budget(cfg, target, draft, gpu_gib)
    return sorted(set(cfg.findings))


def run(args: argparse.Namespace) -> int:
    configs = find_configs(args.path)
    errors = 0
    for cfg in configs:
        for f in diagnose(cfg, args.trtllm, args.model, args.gpus, args.gpu_memory):
            print(f)
            errors += f.severity == "error"
    n = len(configs)
    print(f"doctor: {n} config{'s' if n != 1 else ''} checked, {errors} error{'s' if errors != 1 else ''}")
    return 1 if errors else 0


def register(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "doctor",
        help="check a model repository or LLM-API YAML, and the checkpoints it names, before serving",
        description="Run the validator for the file's track, then check what the configuration names on disk: "
                    "Draft/Target tokenizers agree, an EAGLE-3 head fits its target, max_draft_len rules, "
                    "tensor_parallel_size against the GPUs named, and the weights' memory. Findings are "
                    "path:line:col: severity: message. Fix: ...; exit status 1 when there is an error.",
    )
    p.add_argument("path", type=Path, metavar="PATH",
                   help="a model repository, a model.yaml, or an extra-options YAML")
    p.add_argument("--model", metavar="DIR", help="the target checkpoint, for an extra-options YAML (trtllm-serve "
                   "takes it on the command line)")
    p.add_argument("--trtllm", metavar="TRACK", help="TensorRT-LLM track for the validator (default: the file's "
                   "'# specdec-guide: trtllm=' comment, else tracks.yaml's default)")
    p.add_argument("--gpus", type=int, metavar="N", help="GPUs on the machine that will serve it")
    p.add_argument("--gpu-memory", type=float, metavar="GIB", help="memory of one GPU, for the weights budget")
    p.set_defaults(func=run)
    return p
