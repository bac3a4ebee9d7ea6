"""Checks that follow from what a release *does* (its behaviour record), not from its key snapshot.

The key snapshot says that ``speculative_model_dir`` is a string; the behaviour record says whether
the release downloads a Hugging Face hub id given there (fact ``hub_id_as_speculative_model``) or
reads it as a local folder only. Every rule here reads its fact by id from the track's record
(:attr:`~specdec_guide.releases.tracks.Track.behaviour`), so a new track needs new facts, not new
code. The same function serves a model.yaml key, an ``LLM(...)`` keyword and a
``*DecodingConfig(...)`` keyword, because all of them reach :class:`~fields.FieldChecker`.
"""

from __future__ import annotations

import contextlib
import re
from contextvars import ContextVar
from pathlib import Path

from specdec_guide.validate.values import PVal

#: ``org/name`` as the Hugging Face hub writes a repository id: one slash, no path prefix.
HUB_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$")

#: field (canonical name) -> the behaviour fact that says whether a hub id works there.
SPECULATIVE_MODEL_FIELDS = ("speculative_model_dir", "speculative_model")
LLM_ARGS_CLASSES = ("TorchLlmArgs", "TrtLlmArgs", "BaseLlmArgs")

# Folders a relative value is looked up in, besides the working directory: the checked file's own
# folder and the repository root (set by the runner for the file it checks).
_LOCAL_BASES: ContextVar[tuple] = ContextVar("local_bases", default=())


@contextlib.contextmanager
def local_bases(*folders):
    token = _LOCAL_BASES.set(tuple(Path(f) for f in folders if f))
    try:
        yield
    finally:
        _LOCAL_BASES.reset(token)


def looks_like_hub_id(value: str) -> bool:
    """``org/name`` that is not a path here: no ``./``, ``/``, ``~`` or ``$`` prefix, one slash, and no
    folder of that name next to the checked file, in the repository root or the working directory."""
    if not HUB_ID_RE.match(value):
        return False
    for base in (*_LOCAL_BASES.get(), Path.cwd()):
        try:
            if (base / value).exists():
                return False
        except OSError:
            continue
    return True


def _fact_for(cls_name: str, field: str) -> str | None:
    if field in SPECULATIVE_MODEL_FIELDS:
        return "hub_id_as_speculative_model"
    if field == "model" and cls_name in LLM_ARGS_CLASSES:
        return "hub_id_as_target"
    return None


def _tracks_that_download(checker, fact_id: str) -> list[str]:
    if not checker.registry:
        return []
    out = []
    for t in checker.registry.others(checker.track):
        try:
            if t.behaviour.value(fact_id) is True:
                out.append(t.id)
        except Exception:  # a neighbour's broken record is reported when that track is checked
            continue
    return out


def hub_id_findings(checker, cls_name: str, key: str, canonical: str, val: PVal, where: str) -> list:
    """An error for a hub id where the track's record says the release will not download one."""
    fact_id = _fact_for(cls_name, canonical)
    if fact_id is None or val.kind != "scalar" or val.tag != "str":
        return []
    value = str(val.value)
    if not looks_like_hub_id(value):
        return []
    track = checker.track
    fact = track.behaviour.facts.get(fact_id)
    if fact is None or fact.value is not False:
        return []  # the release downloads it, or the record does not say: nothing to report
    what = "draft models or EAGLE-3 heads" if fact_id == "hub_id_as_speculative_model" else "target models"
    later = _tracks_that_download(checker, fact_id)
    later = f"; {', '.join(later)} does" if later else ""
    return [(val.line, val.col,
             f"'{where}' is '{value}', a Hugging Face hub id, but TRT-LLM {track.id} does not download {what} "
             f"(behaviour {fact_id}: false, {fact.confidence}{later}): download it first, e.g. "
             f"huggingface_hub.snapshot_download('{value}', local_dir=...), and pass that directory "
             f"(a local folder named like org/name: write ./{value} or an absolute path)")]


#: The per-request speculative counters of return_perf_metrics (LLM API and the llmapi model's outputs).
DRAFT_COUNTERS = ("acceptance_rate", "total_accepted_draft_tokens", "total_draft_tokens")


def _counter_in(node) -> str | None:
    import ast

    for sub in ast.walk(node):
        if isinstance(sub, ast.Attribute) and sub.attr in DRAFT_COUNTERS:
            return sub.attr
        if isinstance(sub, ast.Name) and sub.id in DRAFT_COUNTERS:
            return sub.id
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str) and sub.value in DRAFT_COUNTERS:
            return sub.value
    return None


def _counters_filled(value, sampler: str) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, dict):
        got = value.get(sampler)
        return got if isinstance(got, bool) else None
    return None


def counter_assert_findings(tree, track, source: str) -> list:
    """An error for ``assert`` on a per-request draft counter where the record says it reads zero.

    Only an assertion is reported (printing the counters is fine): it fails on the release even when
    speculation works. The sampler is TorchSampler unless the file names TRTLLMSampler.
    """
    import ast

    try:
        fact = track.behaviour.facts.get("per_request_draft_counters_filled")
    except Exception:
        return []
    if fact is None:
        return []
    sampler = "TRTLLMSampler" if "TRTLLMSampler" in source else "TorchSampler"
    # EAGLE-3 and MTP pick their own TorchSampler-based sampler whatever sampler_type says
    # (fact sampler_set_by_spec_mode): naming TRTLLMSampler next to them changes nothing.
    own = track.behaviour.value("sampler_set_by_spec_mode", []) or []
    if sampler == "TRTLLMSampler" and any(re.search(rf"\b{re.escape(m)}(DecodingConfig\b|\b)", source) for m in own):
        sampler = "TorchSampler"
    if _counters_filled(fact.value, sampler) is not False:
        return []
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Assert):
            continue
        name = _counter_in(node.test)
        if name is None:
            continue
        out.append((node.lineno, node.col_offset + 1,
                    f"asserts on the per-request draft counter '{name}', but on TRT-LLM {track.id} with {sampler} "
                    f"those counters read zero even when drafts are accepted (behaviour per_request_draft_counters_filled,"
                    f" {fact.confidence}): measure acceptance from tokens per decoding step or iteration stats "
                    f"(acceptance_measures_available) and say which measure was used"))
    return out
