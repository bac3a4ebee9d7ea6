"""The migration map: legacy engine flags and template keys -> LLM API / model.yaml, per track.

The data lives in ``snippets/migration/map.yaml``; the migration page's blocks (one per legacy
item) and its request-inputs table are rendered from it at build time (site hook). :func:`check`
verifies both sides of every row with the existing validators, so the page cannot show a row the
snapshots contradict, and :func:`check_inputs` that every recorded legacy request input is mapped
to an input the llmapi model of each track has (or to none, saying why):

* the legacy side is a command line checked by :func:`specdec_guide.validate.shell.check` against
  the legacy track (1.1.0): trtllm-build and convert_checkpoint.py flags, fill_template.py keys of
  the model whose config.pbtxt it fills (a row is a fragment that shows its keys: it is not held to
  filling every structural placeholder of the template, as a whole script is). A row whose legacy input no recorded CLI carries says why
  with ``unchecked:``; a row that names a CLI must pass.
* each track's side is an LLM API YAML fragment checked by
  :func:`specdec_guide.validate.llm_yaml.check` (``model_yaml: true`` checks it as a Triton
  ``model.yaml``), or ``none:`` with ``instead:`` (a checked fragment) and, to back the "none",
  ``engine_only:`` (a class the snapshot records as TensorRT-engine only) or
  ``absent_decoding_type:`` (a spelling the track's union must not have) or ``absent_field:``
  (``Class.field`` that the recorded class does not have) or ``fact:`` (a fact of the track's
  behaviour record whose ``does_not_work`` list shows the fields that exist do nothing useful).
* whether the counterpart does what the legacy item did, per track: the behaviour record
  (``schemas/<track>/behaviour/*.yaml``) lists under a fact's ``does_not_work`` the llmapi inputs,
  SamplingParams fields and config fields that the release accepts and ignores, overwrites or
  fails on. Every counterpart the map offers on a track (a row's fragment, a request input's
  ``llmapi`` name or ``sampling_params`` field) that such a fact names must say so on that track
  with ``works: false``, ``why:`` and ``fact:`` (that fact's id); a ``works: false`` must cite a
  fact of the track that names one of the entry's counterparts (:func:`check_works`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from specdec_guide import markers
from specdec_guide.diagnostics import Diagnostic
from specdec_guide.validate import llm_yaml, shell
from specdec_guide.releases.tracks import Registry

MAP_PATH = "snippets/migration/map.yaml"
# The legacy side is checked against the engine-workflow records of the Triton 25.12 container (1.1.0);
# 1.2.1 still ships the engine backend, but its Triton templates were not read (unconfirmed).
LEGACY_TRACK = "1.1.0"
#: The map's track columns: every track of the package's tracks.yaml (not SPECDEC_GUIDE_SCHEMA_DIR's:
#: map.yaml is written for the pinned tracks), in its order.
_TRACK_REGISTRY = Registry(Path(__file__).resolve().parent / "schemas")
TRACKS = tuple(t.id for t in _TRACK_REGISTRY.tracks)
#: The page markers :func:`markdown_table` and :func:`markdown_inputs` replace (specdec_guide.markers).
TABLE_MARKER = markers.html_marker("migration-table")
INPUTS_MARKER = markers.html_marker("migration-request-inputs")
#: The legacy request models whose inputs a client sends (their config.pbtxt inputs are recorded in
#: the legacy track's triton.yaml under legacy_inflight_batcher_llm.models.<name>.request_inputs).
REQUEST_MODELS = ("ensemble", "tensorrt_llm_bls")


@dataclass
class Row:
    line: int
    show: str
    legacy: str
    what: str
    unchecked: str = ""
    tracks: dict = field(default_factory=dict)


def _read_map(root: Path):
    """The map's node tree (for lines) and its data, from one read and one parse."""
    loader = yaml.SafeLoader((root / MAP_PATH).read_text(encoding="utf-8"))
    try:
        node = loader.get_single_node()
        return node, (loader.construct_document(node) if node is not None else None) or {}
    finally:
        loader.dispose()


def load(root: Path) -> tuple[list[Row], list[Diagnostic]]:
    try:
        node, data = _read_map(root)
    except (OSError, yaml.YAMLError) as err:
        return [], [Diagnostic(MAP_PATH, 1, 1, f"cannot read the migration map: {err}")]
    items = node.value[[k.value for k, _ in node.value].index("rows")][1].value if node else []
    rows, diags = [], []
    for item, raw in zip(items, data.get("rows") or []):
        line = item.start_mark.line + 1
        missing = [k for k in ("show", "legacy", "what", "tracks") if not raw.get(k)]
        if missing:
            diags.append(Diagnostic(MAP_PATH, line, 1, f"row lacks {', '.join(missing)}"))
            continue
        rows.append(Row(line, str(raw["show"]), str(raw["legacy"]), str(raw["what"]),
                        str(raw.get("unchecked") or ""), dict(raw["tracks"])))
    return rows, diags


@dataclass
class RequestInput:
    line: int
    legacy: list
    aliases: list
    llmapi: str | None
    sampling_params: str = ""
    note: str = ""
    #: track id -> {works: false, why, fact} where the llmapi input (or the SamplingParams field)
    #: does not do what the legacy input did on that track; absent: it does.
    tracks: dict = field(default_factory=dict)


def load_inputs(root: Path) -> tuple[list[RequestInput], list[Diagnostic]]:
    """The ``request_inputs:`` entries of the map, with their lines."""
    try:
        node, data = _read_map(root)
    except (OSError, yaml.YAMLError) as err:
        return [], [Diagnostic(MAP_PATH, 1, 1, f"cannot read the migration map: {err}")]
    keys = [k.value for k, _ in node.value] if node else []
    if "request_inputs" not in keys:
        return [], [Diagnostic(MAP_PATH, 1, 1, "the migration map has no 'request_inputs:' list")]
    items = node.value[keys.index("request_inputs")][1].value
    out, diags = [], []
    for item, raw in zip(items, data.get("request_inputs") or []):
        line = item.start_mark.line + 1
        if not isinstance(raw, dict) or not raw.get("legacy") or "llmapi" not in raw:
            diags.append(Diagnostic(MAP_PATH, line, 1, "a request input needs 'legacy' (a list) and 'llmapi' "
                                    "(a name, or null)"))
            continue
        out.append(RequestInput(line, [str(x) for x in raw["legacy"]], [str(x) for x in raw.get("aliases") or []],
                                raw["llmapi"] and str(raw["llmapi"]), str(raw.get("sampling_params") or ""),
                                str(raw.get("note") or ""), dict(raw.get("tracks") or {})))
    return out, diags


def legacy_request_inputs(registry: Registry | None = None) -> dict[str, list[str]]:
    """model -> its recorded request input names, for the legacy request models."""
    track = (registry or Registry()).resolve(LEGACY_TRACK)
    models = (track.triton.get("legacy_inflight_batcher_llm") or {}).get("models") or {}
    return {m: [str(n) for n in ((models.get(m) or {}).get("request_inputs") or {}).get("names") or []]
            for m in REQUEST_MODELS}


def check_inputs(root: Path, registry: Registry | None = None) -> tuple[list[RequestInput], list[Diagnostic]]:
    """Every legacy request input is mapped once; every llmapi name and SamplingParams field exists."""
    registry = registry or Registry()
    entries, diags = load_inputs(root)
    seen: dict[str, int] = {}
    for e in entries:
        for name in e.legacy + e.aliases:
            if name in seen:
                diags.append(Diagnostic(MAP_PATH, e.line, 1, f"request input '{name}' is mapped twice "
                                        f"(also on line {seen[name]})"))
            seen[name] = e.line
        for tid in TRACKS:
            track = registry.resolve(tid)
            inputs = {str(t.get("name")) for t in (track.triton.get("llmapi_model") or {}).get("inputs") or []}
            if e.llmapi and e.llmapi not in inputs:
                diags.append(Diagnostic(MAP_PATH, e.line, 1, f"'{e.llmapi}' is not an input of the llmapi model "
                                        f"in the TRT-LLM {tid} snapshot"))
            fields = ((track.classes().get("SamplingParams") or {}).get("fields") or {})
            if e.sampling_params and e.sampling_params not in fields:
                diags.append(Diagnostic(MAP_PATH, e.line, 1, f"SamplingParams in TRT-LLM {tid} has no field "
                                        f"'{e.sampling_params}'"))
            targets = ({f"input:{e.llmapi}"} if e.llmapi else set()) | \
                ({f"sampling_params:{e.sampling_params}"} if e.sampling_params else set())
            spec = e.tracks.get(tid) or {}
            diags += [Diagnostic(MAP_PATH, e.line, 1, f"{', '.join(e.legacy)}: {tid}: {msg}")
                      for msg in check_works(targets, spec, track)]
        for tid in set(e.tracks) - set(TRACKS):
            diags.append(Diagnostic(MAP_PATH, e.line, 1, f"{', '.join(e.legacy)}: 'tracks' names {tid!r}, "
                                    "which is not a track"))
        if not e.llmapi and not (e.note or e.sampling_params):
            diags.append(Diagnostic(MAP_PATH, e.line, 1, f"{', '.join(e.legacy)}: say why there is no llmapi "
                                    "input ('note:') or name the SamplingParams field ('sampling_params:')"))
    diags += check_record_names(registry)
    recorded = legacy_request_inputs(registry)
    for model, names in recorded.items():
        if not names:
            diags.append(Diagnostic(MAP_PATH, 1, 1, f"the {LEGACY_TRACK} snapshot records no request inputs of "
                                    f"'{model}'"))
        for name in names:
            if name not in {n for e in entries for n in e.legacy}:
                diags.append(Diagnostic(MAP_PATH, 1, 1, f"request input '{name}' of '{model}' is not mapped"))
    return entries, sorted(diags)


def does_not_work(track) -> dict[str, list[str]]:
    """``kind:name`` -> the ids of the track's behaviour facts that say it does not work there."""
    out: dict[str, list[str]] = {}
    for fact in track.behaviour.facts.values():
        for target in fact.does_not_work:
            out.setdefault(target, []).append(fact.id)
    return out


def _facts_of(spec: dict) -> list[str]:
    cited = spec.get("fact")
    return [str(cited)] if isinstance(cited, str) else [str(x) for x in cited or []]


def check_works(targets: set[str], spec: dict, track) -> list[str]:
    """What is wrong with one entry's claim to work on one track, against the behaviour record.

    ``targets`` are the ``kind:name`` counterparts the entry offers there; ``spec`` is the entry's
    track mapping (``works``, ``why``, ``fact``)."""
    msgs = []
    broken = does_not_work(track)
    hit = {t: broken[t] for t in sorted(targets) if t in broken}
    cited = _facts_of(spec)
    works = spec.get("works", True)
    if works not in (True, False):
        return [f"works must be true or false, not {works!r}"]
    if hit and works is not False:
        for target, facts in hit.items():
            msgs.append(f"maps to {target.partition(':')[2]}, which the TRT-LLM {track.id} behaviour record "
                        f"says does not work (fact {', '.join(facts)}): say so with works: false, why: and "
                        f"fact: {facts[0]}")
        return msgs
    if works is False:
        if not str(spec.get("why") or "").strip():
            msgs.append("works: false needs why: (what the release does instead)")
        if not cited:
            msgs.append("works: false needs fact: (the behaviour fact id that shows it)")
        for fid in cited:
            fact = track.behaviour.facts.get(fid)
            if fact is None:
                msgs.append(f"fact {fid!r} is not in the TRT-LLM {track.id} behaviour record")
            elif not set(fact.does_not_work) & targets:
                msgs.append(f"fact {fid!r} names none of this entry's counterparts "
                            f"({', '.join(sorted(targets)) or 'none'}) under does_not_work")
    return msgs


def _yaml_targets(text: str, track) -> set[str]:
    """The ``field:Class.field`` counterparts an LLM API fragment sets: speculative_config keys as
    fields of the class its decoding_type selects, other keys as TorchLlmArgs fields (and the keys of
    a nested mapping as fields of the class that field's type names)."""
    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError:
        return set()  # the fragment checker reports it
    if not isinstance(data, dict):
        return set()
    classes = track.classes()
    args = ((classes.get("TorchLlmArgs") or {}).get("fields") or {})
    out = set()
    for key, value in data.items():
        if key == "triton_config":
            continue
        if key == "speculative_config" and isinstance(value, dict):
            cls = track.decoding_spellings().get(str(value.get("decoding_type")))
            out |= {f"field:{cls}.{k}" for k in value if cls and k != "decoding_type"}
            continue
        out.add(f"field:TorchLlmArgs.{key}")
        type_name = str((args.get(key) or {}).get("type", "")).split("|")[0].strip()
        if isinstance(value, dict) and type_name in classes:
            out |= {f"field:{type_name}.{k}" for k in value}
    return out


def check_record_names(registry: Registry) -> list[Diagnostic]:
    """Every does_not_work name of every track's behaviour record exists in that track's snapshot."""
    diags = []
    for tid in TRACKS:
        track = registry.resolve(tid)
        inputs = {str(t.get("name")) for t in (track.triton.get("llmapi_model") or {}).get("inputs") or []}
        classes = track.classes()
        for fact in track.behaviour.facts.values():
            where = f"src/specdec_guide/schemas/{tid}/behaviour/{fact.file}"
            for target in fact.does_not_work:
                kind, _, name = target.partition(":")
                cls, _, fname = name.partition(".")
                ok = (kind == "input" and name in inputs) or \
                     (kind == "sampling_params" and name in ((classes.get("SamplingParams") or {}).get("fields") or {})) or \
                     (kind == "field" and fname in ((classes.get(cls) or {}).get("fields") or {}))
                if not ok:
                    diags.append(Diagnostic(where, 1, 1, f"fact {fact.id}: does_not_work names {target}, which the "
                                            f"TRT-LLM {tid} snapshot does not have"))
    return diags


def _engine_only(spec: dict) -> bool:
    return spec.get("backend") == "tensorrt" or "engine backend only" in str(spec.get("note", "")).lower()


def check(root: Path, registry: Registry | None = None) -> tuple[list[Row], list[Diagnostic]]:
    """Every row, and a diagnostic for each side the snapshots do not confirm."""
    registry = registry or Registry()
    rows, diags = load(root)
    legacy = registry.resolve(LEGACY_TRACK)
    for row in rows:
        where = f"row '{row.show}'"
        # A row shows the keys it maps, not a whole repository: no structural-placeholder check (whole_fills).
        findings, count, _ = shell.check(row.legacy.replace(";", "\n"), legacy, registry, whole_fills=False)
        diags += [Diagnostic(MAP_PATH, row.line, 1, f"{where}: legacy side: {msg}") for _, _, msg in findings]
        if count == 0 and not row.unchecked:
            diags.append(Diagnostic(MAP_PATH, row.line, 1, f"{where}: the legacy side names no CLI the "
                                    f"{legacy.id} snapshot records; say why with 'unchecked:'"))
        for tid in TRACKS:
            entry = row.tracks.get(tid)
            if not isinstance(entry, dict):
                diags.append(Diagnostic(MAP_PATH, row.line, 1, f"{where}: no entry for track {tid}"))
                continue
            track = registry.resolve(tid)
            fragments = []
            if entry.get("yaml"):
                fragments.append(("yaml", entry["yaml"], bool(entry.get("model_yaml"))))
            elif entry.get("none"):
                if not entry.get("instead"):
                    diags.append(Diagnostic(MAP_PATH, row.line, 1, f"{where}: {tid}: 'none' needs 'instead'"))
                else:
                    fragments.append(("instead", entry["instead"], False))
                cls = entry.get("engine_only")
                if cls and not _engine_only(track.classes().get(cls) or {}):
                    diags.append(Diagnostic(MAP_PATH, row.line, 1, f"{where}: {tid}: the snapshot does not "
                                            f"record {cls} as TensorRT-engine only"))
                absent = entry.get("absent_decoding_type")
                if absent and any(absent.lower() in s.lower() for s in track.decoding_spellings()):
                    diags.append(Diagnostic(MAP_PATH, row.line, 1, f"{where}: {tid}: decoding_type {absent} "
                                            "exists in this track"))
                fact_ev = entry.get("fact")
                for fid in _facts_of(entry):
                    fact = track.behaviour.facts.get(fid)
                    if fact is None or not fact.does_not_work:
                        diags.append(Diagnostic(MAP_PATH, row.line, 1, f"{where}: {tid}: fact {fid!r} is not a "
                                                "fact of this track's behaviour record with a does_not_work list"))
                gone = entry.get("absent_field")
                if gone:
                    gcls, _, gfield = str(gone).partition(".")
                    if gcls not in track.classes() or gfield in ((track.classes()[gcls] or {}).get("fields") or {}):
                        diags.append(Diagnostic(MAP_PATH, row.line, 1, f"{where}: {tid}: {gone} is not an absent "
                                                "field of a recorded class"))
                if not (cls or absent or gone or fact_ev):
                    diags.append(Diagnostic(MAP_PATH, row.line, 1, f"{where}: {tid}: a 'none' needs evidence "
                                            "(engine_only: <class>, absent_decoding_type: <name>, "
                                            "absent_field: <class.field> or fact: <behaviour fact id>)"))
            else:
                diags.append(Diagnostic(MAP_PATH, row.line, 1, f"{where}: {tid}: needs 'yaml' or 'none'"))
            for label, text, model_yaml in fragments:
                for _, _, msg in llm_yaml.check(text, track, registry, model_yaml=model_yaml):
                    diags.append(Diagnostic(MAP_PATH, row.line, 1, f"{where}: {tid} {label}: {msg}"))
            # Does the counterpart do what the legacy item did? A 'none' offers only its 'instead',
            # which must work outright (its works/why/fact are the evidence of the none, not a caveat).
            targets = set().union(*(_yaml_targets(text, track) for _, text, _ in fragments)) if fragments else set()
            spec = entry if entry.get("yaml") else {k: v for k, v in entry.items() if k != "fact"}
            diags += [Diagnostic(MAP_PATH, row.line, 1, f"{where}: {tid}: {msg}") for msg in check_works(targets, spec, track)]
    return rows, sorted(diags)


def _flat(value, prefix: str = "") -> list[str]:
    if isinstance(value, dict):
        return [x for k, v in value.items() for x in _flat(v, f"{prefix}{k}.")]
    return [f"{prefix[:-1]}: {json.dumps(value) if isinstance(value, list) else value}"]


TAB_LABELS = {t.id: t.tab_label for t in _TRACK_REGISTRY.tracks}


def _indent(text: str, by: str = "    ") -> str:
    return "\n".join(by + ln if ln.strip() else "" for ln in text.rstrip("\n").splitlines())


def _yaml_block(text: str) -> str:
    return "```yaml\n" + text.rstrip("\n") + "\n```"


def _sentence(text: str) -> str:
    """A note as written (it may start with an identifier, so no capital forced), ending in a stop."""
    text = text.strip()
    return text if text.endswith(".") else text + "."


def _cite(spec: dict) -> str:
    facts = _facts_of(spec)
    return f" (behaviour record: {', '.join(f'`{f}`' for f in facts)})" if facts else ""


def _entry(entry: dict) -> str:
    if entry.get("yaml"):
        where = "In `model.yaml`:\n\n" if entry.get("model_yaml") else ""
        body = where + _yaml_block(entry["yaml"])
        body += f"\n\n{_sentence(entry['note'])}" if entry.get("note") else ""
        if entry.get("works") is False:
            body += f"\n\n**Does not work as before**: {_sentence(entry['why']).rstrip('.')}{_cite(entry)}."
        return body
    return f"**No equivalent**: {entry['none']}{_cite(entry)}. Instead:\n\n{_yaml_block(entry['instead'])}"


def _not_working(e: RequestInput) -> str:
    """The request-inputs table's warning for an input that does not work as before, per track."""
    specs = {tid: e.tracks.get(tid) or {} for tid in TRACKS}
    off = {tid: s for tid, s in specs.items() if s.get("works") is False}
    if not off:
        return ""
    texts = {tid: f"{_sentence(s['why']).rstrip('.')}{_cite(s)}." for tid, s in off.items()}
    if len(off) == len(TRACKS) and len(set(texts.values())) == 1:
        return f"**Does not work as before** (every pinned release): {texts[TRACKS[0]]}"
    return " ".join(f"**Does not work as before on {tid}**: {text}" for tid, text in texts.items())


def markdown_table(root: Path) -> str:
    """The map as one block per legacy item: what it was, what it did, then one tab per track with
    the LLM API fragment that replaces it (a narrow column holds it; a wide matrix did not)."""
    rows, _ = load(root)
    out = []
    for r in rows:
        legacy = " and ".join(f"`{part.strip()}`" for part in r.show.split(";"))
        out.append(f"**{legacy}**: {r.what}.\n")
        bodies = {tid: _entry(r.tracks[tid]) for tid in TRACKS}
        if len(set(bodies.values())) == 1:  # the same in every track: one block, no tabs
            body = bodies[TRACKS[0]]
            lead = "Both releases, in `model.yaml`:" if body.startswith("In `model.yaml`:") else "Both releases:"
            out.append(f"{lead}\n\n{body.removeprefix('In `model.yaml`:').lstrip()}\n")
        else:
            for tid in TRACKS:
                out.append(f'=== "{TAB_LABELS[tid]}"\n\n{_indent(bodies[tid])}\n')
        out.append("---\n")
    return "\n".join(out)


def markdown_inputs(root: Path) -> str:
    """The request inputs table: legacy input(s) -> llmapi input, or none and what has it instead."""
    entries, _ = load_inputs(root)
    # Two columns: a third one for the notes next to a 40-character input name does not fit the
    # page's text column, so the notes go under the new name.
    head = "| Legacy input | llmapi input, and notes |\n| --- | --- |\n"
    body = []
    for e in entries:
        legacy = "<br>".join(f"`{n}`" for n in e.legacy)
        if e.aliases:
            legacy += "<br>(" + ", ".join(f"`{n}`" for n in e.aliases) + ")"
        notes = []
        if e.note:
            notes.append(_sentence(e.note))
        if not e.llmapi and e.sampling_params:
            notes.append(f"LLM API only: `SamplingParams.{e.sampling_params}`.")
        if _not_working(e):
            notes.append(_not_working(e))
        new = f"`{e.llmapi}`" if e.llmapi else "**none**"
        cell = new + (f"<br>{' '.join(notes)}" if notes else "")
        body.append(f"| {legacy} | {cell.replace('|', '&#124;')} |")
    return head + "\n".join(body) + "\n"
