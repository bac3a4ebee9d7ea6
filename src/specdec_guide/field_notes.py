"""Field notes: real reports of speculative decoding going wrong, as data (``schemas/field_notes/*.yaml``).

One file per area; each note has the symptom (and the exact error text, so that the site's search
finds it), the releases it was reported on, the cause, what to do on each pinned track, its source
threads and a confidence. :func:`load` checks every note against the format (schemas/README.md,
"field_notes/") and the track registry; :func:`markdown` renders the symptom index, the error index
and the notes for ``docs/speculative_decoding/field_notes.md`` at site build time.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from specdec_guide import markers
from specdec_guide.diagnostics import UserError, load_yaml_file

NOTES_DIR = Path(__file__).resolve().parent / "schemas" / "field_notes"
MARKER = markers.html_marker("field-notes")  # the page marker :func:`markdown` replaces
PAGE = "speculative_decoding/field_notes.md"
NO_FIX = "no fix known"
# The symptom vocabulary, in the order the index lists it, with the index's wording.
SYMPTOMS = {
    "divergent_output": "Wrong, gibberish or different output with speculation on",
    "loops": "Repetition, or output that never stops",
    "lost_tool_calls": "Tool calls, reasoning or structured output lost",
    "crash": "A crash: exception, assertion, segfault, CUDA error",
    "hang": "A hang: requests never return",
    "oom": "Out of memory, or a KV cache much smaller than expected",
    "no_speedup": "No speed-up, or slower than without speculation",
    "acceptance_falls": "Acceptance that falls with load, batch size or cache reuse",
    "one_streamed_event": "A stream that arrives as one event",
    "key_refused": "A key or value refused",
    "load_failure": "A model or server that does not load",
    "metrics_missing": "Acceptance counters that read zero or are missing",
    "build_failure": "Engine build errors (convert_checkpoint, trtllm-build)",
}
STATUSES = ("affected", "not_affected", "fixed", "unknown")
CONFIDENCES = ("confirmed", "likely", "unconfirmed")
METHODS = ("ngram", "draft_target", "eagle3", "mtp", "user_provided", "all", "legacy_engine")
WHERE = ("llm_api", "trtllm_serve", "triton_llmapi", "triton_legacy_engine", "trtllm_bench")
TRIAGE_SYMPTOMS = {"crash", "divergent_output", "hang"}


@dataclass(frozen=True)
class Note:
    id: str
    area: str
    title: str
    symptoms: tuple[str, ...]
    errors: tuple[str, ...]
    methods: tuple[str, ...]
    where: tuple[str, ...]
    reported_on: str
    fixed_in: str | None
    cause: str
    on_track: dict  # track id -> {"status": ..., "fix": ...}
    sources: tuple[dict, ...]  # the source entries themselves (url, title, kind, ...)
    confidence: str
    triage: bool


def _track_ids() -> tuple[str, ...]:
    """The pinned tracks, from the one registry of them (``schemas/tracks.yaml``)."""
    from specdec_guide.releases.tracks import Registry

    return tuple(t.id for t in Registry().tracks)


def _strings(value, where: str, key: str, allowed=None, empty_ok: bool = False) -> tuple[str, ...]:
    if not isinstance(value, list) or (not value and not empty_ok) or not all(isinstance(v, str) and v for v in value):
        raise UserError(f"{where}: '{key}' must be a {'' if empty_ok else 'non-empty '}list of strings")
    if allowed is not None:
        bad = [v for v in value if v not in allowed]
        if bad:
            raise UserError(f"{where}: '{key}' has {', '.join(bad)}; allowed: {', '.join(allowed)}")
    return tuple(value)


def _text(entry: dict, key: str, where: str) -> str:
    value = entry.get(key)
    if not isinstance(value, str) or not value.strip():
        raise UserError(f"{where}: '{key}' must be a non-empty string")
    return value


def _note(entry, sources: dict, area: str, where: str, tracks: tuple[str, ...]) -> Note:
    if not isinstance(entry, dict):
        raise UserError(f"{where}: must be a mapping")
    nid = _text(entry, "id", where)
    where = f"{where.rsplit(':', 1)[0]}: note {nid}"
    keys = _strings(entry.get("sources"), where, "sources")
    missing = [k for k in keys if k not in sources]
    if missing:
        raise UserError(f"{where}: sources {', '.join(missing)} are not in the file's 'sources' table")
    for k in keys:
        if not (isinstance(sources[k], dict) and str(sources[k].get("url", "")).startswith("https://")):
            raise UserError(f"{where}: source {k} needs an https url")
    on_track = entry.get("on_track")
    if not isinstance(on_track, dict) or sorted(map(str, on_track)) != sorted(tracks):
        raise UserError(f"{where}: 'on_track' must have exactly the tracks {', '.join(tracks)}")
    scope = {}
    for track, verdict in on_track.items():
        status = verdict.get("status") if isinstance(verdict, dict) else None
        fix = verdict.get("fix") if isinstance(verdict, dict) else None
        if status not in STATUSES:
            raise UserError(f"{where}: on_track {track}: status must be one of {', '.join(STATUSES)}")
        if not isinstance(fix, str) or not fix.strip():
            raise UserError(f"{where}: on_track {track}: 'fix' must say what to do, or '{NO_FIX}'")
        scope[str(track)] = {"status": status, "fix": fix}
    confidence = entry.get("confidence")
    if confidence not in CONFIDENCES:
        raise UserError(f"{where}: confidence must be one of {', '.join(CONFIDENCES)}")
    symptoms = _strings(entry.get("symptoms"), where, "symptoms", SYMPTOMS)
    fixed_in = entry.get("fixed_in")
    if fixed_in is not None and not (isinstance(fixed_in, str) and fixed_in.strip()):
        raise UserError(f"{where}: 'fixed_in' must be a release (string) or null")
    return Note(
        id=nid, area=area, title=_text(entry, "title", where), symptoms=symptoms,
        errors=_strings(entry.get("errors", []), where, "errors", empty_ok=True),
        methods=_strings(entry.get("methods"), where, "methods", METHODS),
        where=_strings(entry.get("where"), where, "where", WHERE),
        reported_on=_text(entry, "reported_on", where), fixed_in=fixed_in, cause=_text(entry, "cause", where),
        on_track=scope, sources=tuple({"key": k, **sources[k]} for k in keys), confidence=confidence,
        triage=bool(entry.get("triage")),
    )


def load(directory: Path | None = None) -> tuple[Note, ...]:
    """Every note of every area file, checked; ids are unique across files."""
    directory = Path(directory) if directory else NOTES_DIR
    stamp = tuple((p.name, p.stat().st_mtime_ns, p.stat().st_size) for p in sorted(directory.glob("*.yaml")))
    return _load(str(directory), stamp)


@lru_cache(maxsize=4)
def _load(directory: str, stamp) -> tuple[Note, ...]:
    tracks = _track_ids()
    notes: list[Note] = []
    for name, _, _ in stamp:
        path = Path(directory) / name
        data = load_yaml_file(path, "a field-notes file") or {}
        area = data.get("area") if isinstance(data, dict) else None
        if not isinstance(area, str) or area != path.stem:
            raise UserError(f"{path}:1:1: 'area' must be the file's name, {path.stem}")
        sources, entries = data.get("sources"), data.get("notes")
        if not isinstance(sources, dict) or not isinstance(entries, list) or not entries:
            raise UserError(f"{path}:1:1: needs a 'sources' mapping and a non-empty 'notes' list")
        notes.extend(_note(e, sources, area, f"{path}: notes[{i}]", tracks) for i, e in enumerate(entries))
    ids = [n.id for n in notes]
    twice = sorted({i for i in ids if ids.count(i) > 1})
    if twice:
        raise UserError(f"{directory}: a note id appears twice: {', '.join(twice)}")
    return tuple(notes)


# -- the page ----------------------------------------------------------------------------------
def _code(text: str) -> str:
    """Inline code that survives any backtick or pipe inside it."""
    return f"<code>{html.escape(text)}</code>".replace("|", "&#124;")


def _cell(text: str) -> str:
    """Link text inside a table cell: a title's ``<|channel|>`` survives as text, and its pipes do not
    split the cell."""
    return html.escape(text, quote=False).replace("|", "&#124;")


def _status(track: str, verdict: dict) -> str:
    label = {"affected": "affected", "not_affected": "not affected", "fixed": "fixed",
             "unknown": "unknown"}[verdict["status"]]
    return f"**{track}: {label}.** {verdict['fix']}"


def _source(src: dict) -> str:
    title = src.get("title") or src["url"]
    bits = [b for b in (src.get("kind"), src.get("state"), src.get("date")) if b]
    return f"[{title}]({src['url']})" + (f" ({', '.join(map(str, bits))})" if bits else "")


def markdown(notes: tuple[Note, ...] | None = None) -> str:
    notes = notes if notes is not None else load()
    out = ["## By symptom", ""]
    for symptom, label in SYMPTOMS.items():
        these = [n for n in notes if symptom in n.symptoms]
        if not these:
            continue
        out.append(f"**{label}** ({len(these)})")
        out.append("")
        out.extend(f"- [{n.title}](#{n.id})" for n in these)
        out.append("")
    errored = sorted(((e, n) for n in notes for e in n.errors), key=lambda p: p[0].lower())
    out += ["## By error message", "",
            "The text each report printed. Paths, ids and numbers in a message differ between runs: look for a "
            "distinctive phrase of yours here, or in the site's search.", "",
            "| Error text | Note |", "| --- | --- |"]
    out += [f"| {_code(e)} | [{_cell(n.title)}](#{n.id}) |" for e, n in errored]
    out += ["", "## The notes", ""]
    for n in notes:
        out.append(f"### {n.title} {{ #{n.id} }}")
        out.append("")
        facts = [f"*Symptom:* {', '.join(SYMPTOMS[s].lower() for s in n.symptoms)}.",
                 f"*Methods:* {', '.join(n.methods)}; *where:* {', '.join(n.where)}.",
                 f"*Reported on:* {n.reported_on}.", f"*Fixed in:* {n.fixed_in or 'no fix confirmed'}.",
                 f"*Confidence:* {n.confidence}."]
        out.append(" ".join(facts))
        out.append("")
        if n.errors:
            out.extend(f"- {_code(e)}" for e in n.errors)
            out.append("")
        out.append(f"*Cause.* {n.cause}")
        out.append("")
        out.extend(f"- {_status(track, verdict)}" for track, verdict in n.on_track.items())
        out.append("")
        if n.triage:
            out.append("If this is what you see and the fix above does not help: "
                       "[the triage order](#triage-order).")
            out.append("")
        out.append("*Sources:* " + "; ".join(_source(s) for s in n.sources) + ".")
        out.append("")
    return "\n".join(out)
