"""Read the Triton llmapi ``model.yaml`` the way the TensorRT-LLM release it names would, for the CPU engine.

The track is the one the file names in a ``# specdec-guide: trtllm=<id or alias>`` comment (what
``specdec-guide repo render`` writes above the file and ``specdec-guide validate`` reads), else the
default track. In the container, every key of ``model.yaml`` except ``triton_config`` becomes
``LLM(**kwargs)`` and ``speculative_config`` is dispatched on ``decoding_type``. The file is first
checked exactly as ``specdec-guide validate`` checks it against that track's snapshot (one checker,
one set of facts: :mod:`specdec_guide.validate.llm_yaml`), so a 1.2.1 file with
``speculative_model`` loads on the 1.2.1 track and is refused on 1.1.0; this module then refuses what
the CPU engine cannot run and keeps the few keys it honours. Every mistake is one line
``path:line:col: reason`` (from the YAML node marks), because that line is what the Triton log
shows when the model fails to load.

Honoured: ``model``, ``tokenizer``, ``backend`` (must be pytorch), ``max_seq_len``,
``return_perf_metrics``, ``sampler_type`` (which counters the release fills), ``speculative_config``
(NGram, DraftTarget, UserProvided; the draft as ``speculative_model_dir`` or, from 1.2, its alias
``speculative_model``) and ``triton_config`` (``max_batch_size``, ``decoupled``,
``cancellation_check_period_ms``, and ours: ``cpu_drafter`` and ``cpu_behaviour``). Every other
TorchLlmArgs field is accepted and ignored (GPU-only knobs); a key TorchLlmArgs does not have is an
error, as in TensorRT-LLM (``extra: forbid``).

``triton_config`` keys are not defaulted here the way the release does not default them: which of
``decoupled`` / ``max_batch_size`` the file has is kept (:attr:`TritonSettings.present`), and
``model.py`` fails the load where the release's model.py would (a KeyError).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from specdec_guide.diagnostics import Diagnostic
from specdec_guide.releases import methods as _methods

# Departures from the release the stand-in makes only when model.yaml asks for them
# (triton_config.cpu_behaviour), to show what a later release or TensorRT-LLM's own runtime does.
TEACHING_BEHAVIOURS = {
    "stream_per_step": "one streamed event per decoding step, as the llmapi model.py streams after "
    "TensorRT-LLM PR #14079 (the pinned releases send one event)",
    "filled_draft_counters": "per-request draft counters filled with TorchSampler, as after TensorRT-LLM "
    "PR #17082 (the pinned releases return zeros)",
}

# Used while a fact is missing from a track's behaviour record (the stand-in logs each as
# unconfirmed); the values are the leads the record's sources point to.
RELEASE_FALLBACKS = {
    "llmapi_model_streams_per_step": False,
    "llmapi_perf_outputs": [
        "kv_cache_reused_block", "kv_cache_hit_rate", "kv_cache_alloc_new_blocks", "kv_cache_alloc_total_blocks",
        "kv_cache_missed_block", "arrival_time_ns", "first_scheduled_time_ns", "first_token_time_ns",
        "last_token_time_ns", "acceptance_rate", "total_accepted_draft_tokens", "total_draft_tokens",
    ],
    # TensorRT-LLM PR #17082: zero per-request draft counters with TorchSampler on 1.1.0 and 1.2.1.
    "per_request_draft_counters_filled": {"TorchSampler": False, "TRTLLMSampler": True},
    # TensorRT-LLM PR #16485 (after 1.2.1): TorchSampler ignored frequency/presence penalties until then.
    "penalties_applied_by_sampler": {"TorchSampler": False, "TRTLLMSampler": True},
    # The llmapi model never asks SamplingParams for log probs, so it sends str(None).
    "llmapi_cumulative_logprob_value": "None",
    # The helpers hand sampling_param_stop over as the tensor's bytes; tokenizing bytes fails the request.
    "llmapi_stop_strings_as_bytes": {"stop_elements": "bytes", "outcome": "request_error"},
    # The executor's worker clamps max_tokens to the room after the prompt, with a warning.
    "llmapi_max_tokens_clamped": {"over_room": "clamped", "warning_logged": True},
    # The executor's SamplingConfig accepts only 0 < top_p <= 1.
    "llmapi_top_p_zero_refused": {"top_p_zero": "request_error", "accepted": "0 < top_p <= 1"},
    # Not settled: the stand-in sends its own count and says so.
    "llmapi_kv_cache_counter_values": None,
}


def release_sampler(config: "EngineConfig") -> str:
    """The sampler the release runs for this model.yaml: sampler_type, except that ``auto`` is
    TorchSampler (default_sampler) and EAGLE-3 / MTP always get TorchSampler (sampler_set_by_spec_mode)."""
    spec_modes, _ = release_fact(config.track, "sampler_set_by_spec_mode")
    spec = config.speculative.decoding_type if config.speculative else None
    if spec is not None and spec in (spec_modes or ["Eagle", "Eagle3", "MTP"]):
        return "TorchSampler"
    return "TorchSampler" if config.sampler_type in ("auto", "", None) else config.sampler_type


def penalties_applied(config: "EngineConfig") -> tuple[bool, str]:
    """(whether the release applies frequency/presence penalties for this model.yaml, a log line)."""
    value, confidence = release_fact(config.track, "penalties_applied_by_sampler")
    sampler = release_sampler(config)
    applied = bool(value.get(sampler, False)) if isinstance(value, dict) else bool(value)
    how = "applied" if applied else "accepted and ignored"
    return applied, (f"frequency/presence penalties: {how}, as {sampler} does on {config.track or 'the default track'} "
                     f"(penalties_applied_by_sampler, {confidence})")


FALLBACK_CONFIDENCE = "unconfirmed (not in the record: the lead is followed)"


def release_fact(track: str, fact_id: str) -> tuple[Any, str | None]:
    """(value, confidence) of a fact in the track's behaviour record; while the record lacks it,
    its :data:`RELEASE_FALLBACKS` lead with :data:`FALLBACK_CONFIDENCE`, else (None, None).
    An empty track (an EngineConfig built in code, not read from a model.yaml) is the default track."""
    from specdec_guide.releases.tracks import Registry

    return fact_or_lead(Registry().resolve(track or None).behaviour, fact_id)


def fact_or_lead(record, fact_id: str) -> tuple[Any, str | None]:
    """:func:`release_fact` on a loaded behaviour record."""
    fact = record.facts.get(fact_id)
    if fact is not None:
        return fact.value, fact.confidence
    return (RELEASE_FALLBACKS[fact_id], FALLBACK_CONFIDENCE) if fact_id in RELEASE_FALLBACKS else (None, None)


# The decoding_type values the CPU engine runs on a track are the spellings of the methods registry's
# cpu_engine methods on that track (schemas/methods.yaml, _methods.cpu_decoding_types); the snapshot
# decides which spellings are valid at all.

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
_HONOURED_KEYS = ("model", "tokenizer", "backend", "max_seq_len", "return_perf_metrics", "sampler_type",
                  "speculative_config")


class ConfigError(ValueError):
    """A model.yaml mistake, located. ``str()`` is the one line the Triton log shows."""

    def __init__(self, path: str, line: int, col: int, reason: str):
        self.diagnostic = Diagnostic(str(path), line, col, reason)
        super().__init__(str(self.diagnostic))

    def __reduce__(self):  # pickled whole: the engine host sends it to the model's stub
        d = self.diagnostic
        return type(self), (d.path, d.line, d.col, d.message)


@dataclass(frozen=True)
class SpeculativeConfig:
    decoding_type: str  # one of _methods.cpu_decoding_types(track)
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
    cpu_behaviour: tuple[str, ...] = ()  # ours: TEACHING_BEHAVIOURS asked for; () = as the release
    present: tuple[str, ...] = ()  # which of the keys the release reads without a default are in the file
    section: bool = False  # whether model.yaml has a triton_config mapping at all


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
    track: str = ""  # the TensorRT-LLM track the file was read for (its trtllm= comment, else the default)
    sampler_type: str = "auto"

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


def track_of(doc: _Doc) -> str:
    """The track id the file names (``# specdec-guide: trtllm=...``), else the default track's."""
    from specdec_guide.validate.kinds import declared_track
    from specdec_guide.releases.tracks import Registry

    registry = Registry()
    name = declared_track(doc.text)
    if name is None:
        return registry.resolve(None).id
    found = registry.find(name)
    if found is None or not found.exists:
        line = next((i for i, text in enumerate(doc.text.split("\n"), 1) if "trtllm" in text and name in text), 1)
        raise ConfigError(doc.path, line, 1, f"unknown TRT-LLM track '{name}' in the trtllm= comment "
                          f"(known: {', '.join(registry.names())})")
    return found.id


def _schema_check(doc: _Doc, text: str, track: str) -> None:
    """The shared checks of the file's own track; the first finding becomes the ConfigError."""
    from specdec_guide.validate import llm_yaml
    from specdec_guide.releases.tracks import Registry

    registry = Registry()
    findings = llm_yaml.check(text, registry.resolve(track), registry, model_yaml=True, cpu_engine=True)
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
    track = track_of(doc)
    _schema_check(doc, doc.text, track)  # unknown keys, types, spellings, required fields: as that release

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
    sampler = data.get("sampler_type", "auto")
    _want(doc, sampler, str, "TorchSampler, TRTLLMSampler or auto", "sampler_type")

    triton = _triton_settings(doc, data.get("triton_config"))
    spec = _speculative(doc, data.get("speculative_config"), track)
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
        speculative=spec, triton=triton, ignored_keys=ignored, track=track, sampler_type=sampler,
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
    present = tuple(k for k in ("decoupled", "max_batch_size") if k in raw)
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
    shows = raw.get("cpu_behaviour", [])
    _want(doc, shows, list, f"a list of: {', '.join(TEACHING_BEHAVIOURS)}", "triton_config", "cpu_behaviour")
    for item in shows:
        if item not in TEACHING_BEHAVIOURS:
            raise doc.error(f"triton_config.cpu_behaviour: unknown behaviour {item!r}; the stand-in answers as the "
                            f"release unless asked for one of: {', '.join(TEACHING_BEHAVIOURS)}",
                            "triton_config", "cpu_behaviour")
    return TritonSettings(max_batch_size=mbs, decoupled=decoupled, cancellation_check_period_ms=period,
                          cpu_drafter=drafter, cpu_behaviour=tuple(dict.fromkeys(shows)), present=present,
                          section=True)


def _speculative(doc: _Doc, raw: Any, track: str) -> SpeculativeConfig | None:
    if raw is None:
        return None
    where = ("speculative_config",)
    _want(doc, raw, dict, "a mapping with decoding_type", *where)
    kind = raw.get("decoding_type")
    at = where + ("decoding_type",)
    runnable = _methods.cpu_decoding_types(track)
    if kind not in runnable:
        raise doc.error(f"decoding_type '{kind}': on TensorRT-LLM {track} the CPU reference engine runs only "
                        f"{', '.join(runnable)} (methods.yaml)", *at)
    max_draft_len = _positive_int(doc, raw.get("max_draft_len"), *where, "max_draft_len")
    # 1.2 renamed the key to speculative_model and kept the old name as an alias; the track's
    # snapshot (checked above) has already refused the spelling its release does not know.
    draft_key = "speculative_model" if raw.get("speculative_model") is not None else "speculative_model_dir"
    draft_model = raw.get(draft_key)
    if draft_model is not None:
        _want(doc, draft_model, str, "a checkpoint directory", *where, draft_key)
    if kind == "DraftTarget" and not draft_model:
        raise doc.error("DraftTarget needs speculative_config.speculative_model_dir (the draft checkpoint)", *at)

    ngram = {}
    if kind == "NGram":
        ngram["max_matching_ngram_size"] = _positive_int(doc, raw["max_matching_ngram_size"], *where,
                                                         "max_matching_ngram_size")
        for flag in ("is_keep_all", "is_use_oldest", "is_public_pool"):
            ngram[flag] = _want(doc, raw.get(flag, True), bool, "true or false", *where, flag)
    return SpeculativeConfig(decoding_type=kind, max_draft_len=max_draft_len, draft_model=draft_model, **ngram)
