"""Read the Triton llmapi ``model.yaml`` the way TensorRT-LLM 1.1.0 would, for the CPU engine.

In the container, every key of ``model.yaml`` except ``triton_config`` becomes ``LLM(**kwargs)``
and ``speculative_config`` is dispatched on ``decoding_type``. The file is first checked exactly
as ``specdec-guide validate`` checks it against the 1.1.0 snapshot (one checker, one set of
facts: :mod:`specdec_guide.validate.llm_yaml`); this module then refuses what the CPU engine
cannot run and keeps the few keys it honours. Every mistake is one line
``path:line:col: reason`` (from the YAML node marks), because that line is what the Triton log
shows when the model fails to load.

Honoured: ``model``, ``tokenizer``, ``backend`` (must be pytorch), ``max_seq_len``,
``return_perf_metrics``, ``speculative_config`` (NGram, DraftTarget, UserProvided) and
``triton_config`` (``max_batch_size``, ``decoupled``, ``cancellation_check_period_ms`` and our
``cpu_drafter``). Every other TorchLlmArgs field is accepted and ignored (GPU-only knobs);
a key TorchLlmArgs does not have is an error, as in TensorRT-LLM (``extra: forbid``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from specdec_guide.diagnostics import Diagnostic

SNAPSHOT_VERSION = "1.1.0"

# decoding_type values the CPU engine runs; the snapshot decides which spellings are valid at all.
RUNNABLE_DECODING_TYPES = ("NGram", "DraftTarget", "UserProvided")

EAGLE_REFUSAL = "EAGLE-3 needs TensorRT-LLM on a GPU: the CPU reference engine cannot run it"
# Methods that exist in TensorRT-LLM but need its kernels or weights: one line each, no stack.
REFUSALS = {
    "Eagle": EAGLE_REFUSAL,
    "MTP": "MTP needs TensorRT-LLM on a GPU and a checkpoint with MTP layers: the CPU reference engine cannot run it",
    "Medusa": "Medusa runs only on TensorRT-LLM's TensorRT-engine backend, not the PyTorch backend model.yaml "
    "configures: the CPU reference engine cannot run it",
    "Lookahead": "Lookahead runs only on TensorRT-LLM's TensorRT-engine backend, not the PyTorch backend model.yaml "
    "configures: the CPU reference engine cannot run it",
    "AUTO": "AUTO lets TensorRT-LLM choose a method on the GPU: the CPU reference engine cannot run it (use NGram)",
}

# The keys this module itself interprets; every other valid TorchLlmArgs key is ignored on CPU.
_HONOURED_KEYS = ("model", "tokenizer", "backend", "max_seq_len", "return_perf_metrics", "speculative_config")


class ConfigError(ValueError):
    """A model.yaml mistake, located. ``str()`` is the one line the Triton log shows."""

    def __init__(self, path: str, line: int, col: int, reason: str):
        self.diagnostic = Diagnostic(str(path), line, col, reason)
        super().__init__(str(self.diagnostic))


@dataclass(frozen=True)
class SpeculativeConfig:
    decoding_type: str  # one of RUNNABLE_DECODING_TYPES
    max_draft_len: int
    draft_model: str | None = None  # DraftTarget: the draft checkpoint directory
    max_matching_ngram_size: int = 0
    is_keep_all: bool = True
    is_use_oldest: bool = True
    is_public_pool: bool = True


@dataclass(frozen=True)
class TritonSettings:
    max_batch_size: int = 0
    decoupled: bool = False
    cancellation_check_period_ms: int = 100  # accepted; requests run to completion on CPU
    cpu_drafter: str | None = None  # ours: "module:Class" or "file.py:Class" (UserProvided only)


@dataclass(frozen=True)
class EngineConfig:
    path: str
    model: str
    tokenizer: str | None = None
    max_seq_len: int | None = None
    return_perf_metrics: bool = False
    speculative: SpeculativeConfig | None = None
    triton: TritonSettings = TritonSettings()
    ignored_keys: tuple[str, ...] = field(default=())  # valid TorchLlmArgs keys the CPU engine skips

    @property
    def base_dir(self) -> Path:
        return Path(self.path).parent


class _Doc:
    """A parsed YAML document that remembers where each value came from."""

    def __init__(self, path: str, text: str):
        self.path = path
        self.text = text
        loader = yaml.SafeLoader(text)
        try:
            self.root = loader.get_single_node()
            self.data = loader.construct_document(self.root) if self.root is not None else None
        except yaml.MarkedYAMLError as err:
            mark = err.problem_mark or err.context_mark
            line, col = (mark.line + 1, mark.column + 1) if mark else (0, 0)
            raise ConfigError(path, line, col, f"invalid YAML: {err.problem or err.context}") from None
        finally:
            loader.dispose()

    def node(self, *keys: str, key_node: bool = False):
        """The node of the value at ``keys`` (or of its key), or the closest existing parent."""
        node = self.root
        for i, key in enumerate(keys):
            if not isinstance(node, yaml.MappingNode):
                return node
            for k, v in node.value:
                if isinstance(k, yaml.ScalarNode) and k.value == key:
                    node = k if key_node and i == len(keys) - 1 else v
                    break
            else:
                return node
        return node

    def error(self, reason: str, *keys: str, key_node: bool = False) -> ConfigError:
        node = self.node(*keys, key_node=key_node) if self.root is not None else None
        if node is None:
            return ConfigError(self.path, 1, 1, reason)
        return ConfigError(self.path, node.start_mark.line + 1, node.start_mark.column + 1, reason)


def _want(doc: _Doc, value: Any, kind: type | tuple[type, ...], what: str, *keys: str) -> Any:
    # bool is an int in Python; YAML `true` must not pass for a number (nor 1 for a bool).
    ok = isinstance(value, kind) and not (isinstance(value, bool) and bool not in _as_tuple(kind))
    if not ok:
        raise doc.error(f"{'.'.join(keys)}: expected {what}, got {_show(value)}", *keys)
    return value


def _as_tuple(kind) -> tuple:
    return kind if isinstance(kind, tuple) else (kind,)


def _show(value: Any) -> str:
    return "nothing" if value is None else f"{type(value).__name__} {value!r}"


def _positive_int(doc: _Doc, value: Any, *keys: str, hint: str = "") -> int:
    _want(doc, value, int, "a positive integer", *keys)
    if value <= 0:
        raise doc.error(f"{'.'.join(keys)} must be > 0, got {value}{hint}", *keys)
    return value


def _schema_check(doc: _Doc, text: str) -> None:
    """The shared TRT-LLM 1.1.0 checks; the first finding becomes the ConfigError."""
    from specdec_guide.validate import llm_yaml
    from specdec_guide.validate.schema import Registry

    registry = Registry()
    findings = llm_yaml.check(text, registry.resolve(SNAPSHOT_VERSION), registry, model_yaml=True, cpu_engine=True)
    if findings:
        line, col, reason = findings[0]
        raise ConfigError(doc.path, line, col, reason)


def _read_doc(path: str | os.PathLike) -> _Doc:
    path = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as err:
        raise ConfigError(path, 0, 0, f"cannot read the engine config: {err.strerror or err}") from None
    return _Doc(path, text)


def load_config(path: str | os.PathLike) -> EngineConfig:
    """Parse and check ``model.yaml``; raise :class:`ConfigError` (path:line:col: reason)."""
    doc = _read_doc(path)
    path = doc.path
    data = doc.data
    if not isinstance(data, dict):
        raise doc.error("model.yaml must be a mapping of LLM() arguments (model: ..., speculative_config: ...)")

    # What the CPU cannot run at all is said first: no point listing the fields it would need.
    spec_raw = data.get("speculative_config")
    if isinstance(spec_raw, dict) and spec_raw.get("decoding_type") in REFUSALS:
        raise doc.error(REFUSALS[spec_raw["decoding_type"]], "speculative_config", "decoding_type")
    _schema_check(doc, doc.text)  # unknown keys, types, spellings, required fields: as TRT-LLM 1.1.0

    if "model" not in data:
        raise doc.error("missing required key 'model' (a local Hugging Face checkpoint directory)")
    model = _want(doc, data["model"], str, "a checkpoint directory", "model")
    tokenizer = data.get("tokenizer")
    if tokenizer is not None:
        _want(doc, tokenizer, str, "a tokenizer directory", "tokenizer")
    backend = data.get("backend")
    if backend not in (None, "pytorch"):
        raise doc.error(f"backend: '{backend}' is not emulated; the CPU reference engine stands in for the "
                        "PyTorch backend (backend: pytorch)", "backend")
    max_seq_len = data.get("max_seq_len")
    if max_seq_len is not None:
        _positive_int(doc, max_seq_len, "max_seq_len")
    perf = data.get("return_perf_metrics", False)
    _want(doc, perf, bool, "true or false", "return_perf_metrics")

    triton = _triton_settings(doc, data.get("triton_config"))
    spec = _speculative(doc, data.get("speculative_config"))
    if triton.cpu_drafter and (spec is None or spec.decoding_type != "UserProvided"):
        raise doc.error("triton_config.cpu_drafter is only used with speculative_config.decoding_type: UserProvided",
                        "triton_config", "cpu_drafter")
    if spec is not None and spec.decoding_type == "UserProvided" and not triton.cpu_drafter:
        raise doc.error(
            "UserProvided needs triton_config.cpu_drafter: module:Class; TensorRT-LLM takes the drafter as a "
            "Python object (UserProvidedDecodingConfig(drafter=...)), which YAML cannot hold",
            "speculative_config", "decoding_type")

    ignored = tuple(k for k in data if k not in _HONOURED_KEYS and k != "triton_config")
    return EngineConfig(
        path=path, model=model, tokenizer=tokenizer, max_seq_len=max_seq_len, return_perf_metrics=perf,
        speculative=spec, triton=triton, ignored_keys=ignored,
    )


def load_triton_settings(path: str | os.PathLike) -> TritonSettings:
    """Only ``triton_config`` (what auto_complete_config needs before the model loads)."""
    doc = _read_doc(path)
    data = doc.data if isinstance(doc.data, dict) else {}
    return _triton_settings(doc, data.get("triton_config"))


def _triton_settings(doc: _Doc, raw: Any) -> TritonSettings:
    if raw is None:
        return TritonSettings()
    _want(doc, raw, dict, "a mapping (max_batch_size, decoupled)", "triton_config")
    mbs = raw.get("max_batch_size", 0)
    _want(doc, mbs, int, "an integer >= 0", "triton_config", "max_batch_size")
    if mbs < 0:
        raise doc.error(f"triton_config.max_batch_size must be >= 0, got {mbs}", "triton_config", "max_batch_size")
    decoupled = _want(doc, raw.get("decoupled", False), bool, "true or false", "triton_config", "decoupled")
    period = raw.get("cancellation_check_period_ms", 100)
    _positive_int(doc, period, "triton_config", "cancellation_check_period_ms")
    drafter = raw.get("cpu_drafter")
    if drafter is not None:
        _want(doc, drafter, str, "module:Class", "triton_config", "cpu_drafter")
        if drafter.count(":") != 1 or not all(drafter.split(":")):
            raise doc.error(f"triton_config.cpu_drafter: expected module:Class (or file.py:Class), got '{drafter}'",
                            "triton_config", "cpu_drafter")
    return TritonSettings(max_batch_size=mbs, decoupled=decoupled, cancellation_check_period_ms=period,
                          cpu_drafter=drafter)


def _speculative(doc: _Doc, raw: Any) -> SpeculativeConfig | None:
    if raw is None:
        return None
    where = ("speculative_config",)
    _want(doc, raw, dict, "a mapping with decoding_type", *where)
    kind = raw.get("decoding_type")
    at = where + ("decoding_type",)
    if kind not in RUNNABLE_DECODING_TYPES:
        raise doc.error(f"decoding_type '{kind}': the CPU reference engine runs only "
                        f"{', '.join(RUNNABLE_DECODING_TYPES)}", *at)
    max_draft_len = _positive_int(doc, raw.get("max_draft_len"), *where, "max_draft_len")
    draft_model = raw.get("speculative_model_dir")
    if draft_model is not None:
        _want(doc, draft_model, str, "a checkpoint directory", *where, "speculative_model_dir")
    if kind == "DraftTarget" and not draft_model:
        raise doc.error("DraftTarget needs speculative_config.speculative_model_dir (the draft checkpoint)", *at)

    ngram = {}
    if kind == "NGram":
        ngram["max_matching_ngram_size"] = _positive_int(doc, raw["max_matching_ngram_size"], *where,
                                                         "max_matching_ngram_size")
        for flag in ("is_keep_all", "is_use_oldest", "is_public_pool"):
            ngram[flag] = _want(doc, raw.get(flag, True), bool, "true or false", *where, flag)
    return SpeculativeConfig(decoding_type=kind, max_draft_len=max_draft_len, draft_model=draft_model, **ngram)
