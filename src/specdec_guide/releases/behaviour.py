"""The behaviour record of each pinned track: what the release *does*, not only which keys it has.

Key snapshots (``schemas/<track>/{llm_api,cli,triton}.yaml``) prove names and types. Readers fail
on behaviour: what a release does with a hub id, what Triton reads behind the container's launcher,
whether a counter is filled. Those facts live in ``schemas/<track>/behaviour/*.yaml``, one file per
topic, each fact with its source and a confidence (format: schemas/README.md, "behaviour/").

The validator, the CPU stand-in and the site read facts from here by id, so that a fact is written
once and every consumer follows it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from specdec_guide.diagnostics import UserError, load_yaml_file

CONFIDENCE = ("confirmed", "likely", "unconfirmed")
#: The kinds of names a fact's ``does_not_work`` list may hold: an input of the ``llmapi`` Triton model,
#: a ``SamplingParams`` field, or a ``Class.field`` of the LLM API snapshot. The migration map must mark
#: every counterpart it offers that such a fact names (specdec_guide.migration, ``works: false``).
DOES_NOT_WORK_KINDS = ("input", "sampling_params", "field")


@dataclass(frozen=True)
class Fact:
    id: str
    claim: str
    value: Any
    sources: tuple[str, ...]
    confidence: str
    note: str = ""
    file: str = ""
    #: ``kind:name`` entries (DOES_NOT_WORK_KINDS) that the release accepts but that, per this fact,
    #: do not do what their name says on this track: ignored, overwritten, failing the request, or
    #: disowned by the release itself (an experimental path it says not to use).
    does_not_work: tuple[str, ...] = ()

    @property
    def confirmed(self) -> bool:
        return self.confidence == "confirmed"


@dataclass
class Behaviour:
    track: str
    sources: dict[str, dict] = field(default_factory=dict)
    facts: dict[str, Fact] = field(default_factory=dict)

    def fact(self, fact_id: str) -> Fact:
        try:
            return self.facts[fact_id]
        except KeyError:
            raise UserError(f"track {self.track}: no behaviour fact {fact_id!r} in its record") from None

    def value(self, fact_id: str, default: Any = None) -> Any:
        fact = self.facts.get(fact_id)
        return default if fact is None else fact.value

    def source_of(self, fact_id: str) -> list[dict]:
        """The source entries (url, repo, path, commit or pr, shipped_in) a fact rests on."""
        return [self.sources[key] for key in self.fact(fact_id).sources]


def _read(path: Path) -> dict:
    data = load_yaml_file(path, "behaviour record")
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise UserError(f"{path}:1:1: a behaviour record must be a mapping at the top")
    return data


def load_folder(folder: Path, track: str) -> Behaviour:
    """Merge every ``*.yaml`` under ``folder`` (one topic a file); a fact id is defined once.

    A track's record is :attr:`specdec_guide.releases.tracks.Track.behaviour`, which calls this.
    Parsed once per set of files: the stand-in asks for several facts while a model loads, and
    the validator for one per file. A file that changes on disk (name, mtime, size) is read again.
    """
    folder = Path(folder)
    stamp = tuple((p.name, p.stat().st_mtime_ns, p.stat().st_size) for p in sorted(folder.glob("*.yaml"))) \
        if folder.is_dir() else ()
    return _load_folder(str(folder), track, stamp)


@lru_cache(maxsize=8)
def _load_folder(folder_str: str, track: str, _stamp: tuple) -> Behaviour:
    folder = Path(folder_str)
    out = Behaviour(track=track)
    files = sorted(folder.glob("*.yaml")) if folder.is_dir() else []
    raw_facts: list[tuple[Path, str, dict]] = []
    for path in files:
        data = _read(path)
        version = data.get("version")
        if version is not None and str(version) != track:
            raise UserError(f"{path}: says version {version!r}, but lies in track {track}'s folder")
        for key, src in (data.get("sources") or {}).items():
            if key in out.sources and out.sources[key] != src:
                raise UserError(f"{path}: source {key!r} is defined differently in another behaviour file")
            out.sources[str(key)] = dict(src or {})
        for fid, body in (data.get("facts") or {}).items():
            raw_facts.append((path, str(fid), body or {}))
    for path, fid, body in raw_facts:
        if fid in out.facts:
            raise UserError(f"{path}: behaviour fact {fid!r} is also defined in {out.facts[fid].file}")
        srcs = body.get("source")
        srcs = (srcs,) if isinstance(srcs, str) else tuple(srcs or ())
        if not srcs:
            raise UserError(f"{path}: behaviour fact {fid!r} names no source")
        for key in srcs:
            if key not in out.sources:
                raise UserError(f"{path}: behaviour fact {fid!r} cites unknown source {key!r}")
        confidence = str(body.get("confidence", ""))
        if confidence not in CONFIDENCE:
            raise UserError(f"{path}: behaviour fact {fid!r}: confidence must be one of {', '.join(CONFIDENCE)}")
        dnw = body.get("does_not_work") or ()
        dnw = (dnw,) if isinstance(dnw, str) else tuple(str(x) for x in dnw)
        for item in dnw:
            kind, _, name = item.partition(":")
            if kind not in DOES_NOT_WORK_KINDS or not name:
                raise UserError(f"{path}: behaviour fact {fid!r}: does_not_work entry {item!r} is not "
                                f"'<kind>:<name>' with kind one of {', '.join(DOES_NOT_WORK_KINDS)}")
        out.facts[fid] = Fact(
            id=fid,
            claim=str(body.get("claim", "")).strip(),
            value=body.get("value"),
            sources=srcs,
            confidence=confidence,
            note=str(body.get("note", "") or "").strip(),
            file=path.name,
            does_not_work=dnw,
        )
    return out

