"""The migration map: legacy engine flags and template keys -> LLM API / model.yaml, per track.

The data lives in ``snippets/migration/map.yaml``; the migration page's table is rendered from
it at build time (site hook), and :func:`check` verifies both sides of every row with the
existing validators, so the page cannot show a row the snapshots contradict:

* the legacy side is a command line checked by :func:`specdec_guide.validate.shell.check` against
  the legacy track (1.1.0): trtllm-build and convert_checkpoint.py flags, fill_template.py keys of
  the model whose config.pbtxt it fills. A row whose legacy input no recorded CLI carries says why
  with ``unchecked:``; a row that names a CLI must pass.
* each track's side is an LLM API YAML fragment checked by
  :func:`specdec_guide.validate.llm_yaml.check` (``model_yaml: true`` checks it as a Triton
  ``model.yaml``), or ``none:`` with ``instead:`` (a checked fragment) and, to back the "none",
  ``engine_only:`` (a class the snapshot records as TensorRT-engine only) or
  ``absent_decoding_type:`` (a spelling the track's union must not have) or ``absent_field:``
  (``Class.field`` that the recorded class does not have).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from specdec_guide.diagnostics import Diagnostic
from specdec_guide.validate import llm_yaml, shell
from specdec_guide.validate.schema import Registry

MAP_PATH = "snippets/migration/map.yaml"
LEGACY_TRACK = "1.1.0"  # the Triton 25.12 container: the last pairing we pin that ships the engine workflow
TRACKS = ("1.1.0", "1.2.1")
TABLE_MARKER = "<!-- specdec-guide: migration-table -->"


@dataclass
class Row:
    line: int
    show: str
    legacy: str
    what: str
    unchecked: str = ""
    tracks: dict = field(default_factory=dict)


def load(root: Path) -> tuple[list[Row], list[Diagnostic]]:
    path = root / MAP_PATH
    try:
        node = yaml.compose(path.read_text(encoding="utf-8"), Loader=yaml.SafeLoader)
    except (OSError, yaml.YAMLError) as err:
        return [], [Diagnostic(MAP_PATH, 1, 1, f"cannot read the migration map: {err}")]
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
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


def _engine_only(spec: dict) -> bool:
    return spec.get("backend") == "tensorrt" or "engine backend only" in str(spec.get("note", "")).lower()


def check(root: Path, registry: Registry | None = None) -> tuple[list[Row], list[Diagnostic]]:
    """Every row, and a diagnostic for each side the snapshots do not confirm."""
    registry = registry or Registry()
    rows, diags = load(root)
    legacy = registry.resolve(LEGACY_TRACK)
    for row in rows:
        where = f"row '{row.show}'"
        findings, count, _ = shell.check(row.legacy.replace(";", "\n"), legacy, registry)
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
                gone = entry.get("absent_field")
                if gone:
                    gcls, _, gfield = str(gone).partition(".")
                    if gcls not in track.classes() or gfield in ((track.classes()[gcls] or {}).get("fields") or {}):
                        diags.append(Diagnostic(MAP_PATH, row.line, 1, f"{where}: {tid}: {gone} is not an absent "
                                                "field of a recorded class"))
                if not (cls or absent or gone):
                    diags.append(Diagnostic(MAP_PATH, row.line, 1, f"{where}: {tid}: a 'none' needs evidence "
                                            "(engine_only: <class>, absent_decoding_type: <name> or "
                                            "absent_field: <class.field>)"))
            else:
                diags.append(Diagnostic(MAP_PATH, row.line, 1, f"{where}: {tid}: needs 'yaml' or 'none'"))
            for label, text, model_yaml in fragments:
                for _, _, msg in llm_yaml.check(text, track, registry, model_yaml=model_yaml):
                    diags.append(Diagnostic(MAP_PATH, row.line, 1, f"{where}: {tid} {label}: {msg}"))
    return rows, sorted(diags)


def _flat(value, prefix: str = "") -> list[str]:
    if isinstance(value, dict):
        return [x for k, v in value.items() for x in _flat(v, f"{prefix}{k}.")]
    return [f"{prefix[:-1]}: {json.dumps(value) if isinstance(value, list) else value}"]


def _code(lines: list[str]) -> str:
    return "<br>".join(f"`{ln.replace('|', '&#124;')}`" for ln in lines)


def _cell(entry: dict) -> str:
    if entry.get("yaml"):
        text = _code(_flat(yaml.safe_load(entry["yaml"])))
        where = "model.yaml " if entry.get("model_yaml") else ""
        return f"{where}{text}" + (f"<br>{entry['note']}" if entry.get("note") else "")
    instead = _code(_flat(yaml.safe_load(entry["instead"])))
    return f"**none**: {entry['none']}.<br>Instead: {instead}"


def markdown_table(root: Path) -> str:
    rows, _ = load(root)
    head = ("| Legacy (TRT-LLM 1.1.0 engine, Triton 25.12) | What it did | LLM API 1.1.0 (Triton 25.12) "
            "| LLM API 1.2.1 |\n| --- | --- | --- | --- |\n")
    body = []
    for r in rows:
        legacy = " ".join(f"`{part.strip()}`" for part in r.show.split(";"))
        body.append(f"| {legacy} | {r.what} | {_cell(r.tracks['1.1.0'])} | {_cell(r.tracks['1.2.1'])} |")
    return head + "\n".join(body) + "\n"
