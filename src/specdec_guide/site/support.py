"""The support matrices page: what works with what on each pinned release (``schemas/<track>/support.yaml``).

The page's ``support-matrices`` marker (:mod:`specdec_guide.markers`) becomes :func:`markdown`: one content tab per track (the tracks of ``schemas/tracks.yaml``), each with
three tables (target architectures, features and knobs, against the methods) whose every cell leads
to a numbered note naming its sources and confidence. :func:`load` checks a track's file: every
value from the vocabulary, every cell other than ``unknown`` with a source of the file.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

from specdec_guide.diagnostics import UserError, load_yaml_file
from specdec_guide.releases import methods as _methods

SCHEMAS = Path(__file__).resolve().parents[1] / "schemas"
METHOD_LABELS = {"eagle3_one_model": "EAGLE-3 one-model", "eagle3_two_model": "EAGLE-3 two-model", "mtp": "MTP",
                 "draft_target": "Draft/Target", "ngram": "NGram", "user_provided": "User-provided"}
# The method of methods.yaml each column belongs to (the others are named as the method): a track's file
# has the columns of the methods that exist on it (their ``tracks``).
METHOD_OF = {"eagle3_one_model": "eagle3", "eagle3_two_model": "eagle3"}
# What a cell may say, per table, and how the page shows it.
VALUES = {
    "targets": {"supported": "yes", "two_model_only": "two-model", "not_supported": "no", "unknown": "unknown"},
    "features": {"supported": "yes", "two_model_only": "two-model", "not_supported": "no", "unknown": "unknown"},
    "knobs": {"honoured": "honoured", "ignored": "ignored", "refused": "refused", "n/a": "n/a", "unknown": "unknown"},
}
# A cell resting on code read near the release, a pull request or reports (not the release's own page or
# source) is marked, so that a likely yes does not read like a confirmed one.
LIKELY = "†"
ROW_KEY = {"targets": "target", "features": "feature", "knobs": "knob"}
TITLES = {"targets": "Target architectures", "features": "Features", "knobs": "Knobs of `speculative_config` and around it"}


def path_for(track: str) -> Path:
    return SCHEMAS / track / "support.yaml"


def columns(track: str) -> list[str]:
    """The method columns a track's matrices have: those of :data:`METHOD_LABELS` whose method is on it."""
    return [c for c in METHOD_LABELS if _methods.get(METHOD_OF.get(c, c)).exists_on(track)]


def load(track: str) -> dict:
    """A track's support matrices, checked (a UserError names the file and the cell)."""
    path = path_for(track)
    data = load_yaml_file(path, "the support matrices") or {}
    sources, methods = data.get("sources") or {}, data.get("methods") or []
    if sorted(methods) != sorted(columns(track)):
        raise UserError(f"{path}:1:1: 'methods' must be {', '.join(columns(track))} "
                        f"(the methods on track {track}, methods.yaml)")
    for section, allowed in VALUES.items():
        rows = data.get(section)
        if not isinstance(rows, list) or not rows:
            raise UserError(f"{path}:1:1: needs a non-empty list '{section}'")
        for row in rows:
            name = row.get(ROW_KEY[section])
            cells = row.get("cells") or {}
            for method in methods:
                cell = cells.get(method)
                where = f"{path}: {section} {name!r} x {method}"
                if not isinstance(cell, dict) or cell.get("value") not in allowed:
                    raise UserError(f"{where}: value must be one of {', '.join(allowed)}")
                keys = cell.get("source") or []
                if cell["value"] != "unknown" and not keys:
                    raise UserError(f"{where}: a cell other than unknown names its source")
                missing = [k for k in keys if k not in sources]
                if missing:
                    raise UserError(f"{where}: sources {', '.join(missing)} are not in the file's 'sources'")
    return data


def _source_link(key: str, src: dict) -> str:
    url = src.get("url")
    if isinstance(url, list):
        url = url[0] if url else None
    return f"[{key}]({url})" if url else f"`{key}`"


def _table(data: dict, section: str, prefix: str, notes: list[str]) -> list[str]:
    methods = data["methods"]
    lines = ["| " + ("Target" if section == "targets" else section[:-1].capitalize()) + " | "
             + " | ".join(METHOD_LABELS[m] for m in methods) + " |",
             "| --- |" + " --- |" * len(methods)]
    for row in data[section]:
        cells = []
        for m in methods:
            cell = row["cells"][m]
            notes.append(cell)
            n = len(notes)
            mark = LIKELY if cell.get("confidence") == "likely" else ""
            cells.append(f"{VALUES[section][cell['value']]}{mark} [<sup>{n}</sup>](#{prefix}-{n})")
        # Long identifiers in a label (SamplingParams.logprobs) may break after . _ / rather than widen the table.
        label = re.sub(r"([._/])(?=\w)", r"\1<wbr>", html.escape(str(row[ROW_KEY[section]]), quote=False))
        label = label.replace("|", "&#124;")
        if section == "knobs" and row.get("where"):
            label = f"`{row['knob']}`"
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return lines


def _note_line(n: int, prefix: str, cell: dict, row: str, method: str, sources: dict) -> str:
    keys = cell.get("source") or []
    text = cell.get("note") or ""
    src = "; ".join(_source_link(k, sources[k]) for k in keys) or "no source settles it"
    conf = f", {cell['confidence']}" if cell.get("confidence") else ""
    if text and not text.rstrip().endswith((".", "!", "?")):
        text = text.rstrip() + "."
    # A list item each (the number is text: an ordered list would restart at 1 in every box).
    return (f'- <span id="{prefix}-{n}"></span>**{n}. {row} × {METHOD_LABELS[method]}: '
            f"{cell['value'].replace('_', ' ')}**{conf}. {text} Sources: {src}.")


def track_markdown(track: str) -> str:
    data = load(track)
    prefix = "s" + track.replace(".", "")
    out = []
    notes: list = []
    for section in ("targets", "features", "knobs"):
        out += [f"**{TITLES[section]}**", ""]
        start = len(notes)
        out += _table(data, section, prefix, notes)
        out.append("")
        rows = [(row[ROW_KEY[section]], m) for row in data[section] for m in data["methods"]]
        out.append(f"???+ note \"Notes and sources for the {TITLES[section].split(' of ')[0].lower()} ({track})\"")
        for i, ((row, m), cell) in enumerate(zip(rows, notes[start:]), start + 1):
            out.append("    " + _note_line(i, prefix, cell, html.escape(str(row), quote=False), m, data["sources"]))
        out.append("")
        if section == "targets":
            pairs = [(row["target"], p) for row in data["targets"] for p in row.get("pairs") or []]
            if pairs:
                out += ["Published heads and checkpoints known to pair with a target:", ""]
                out += [f"- `{p['id']}` ({p.get('method')}) for {t}: " + "; ".join(
                    _source_link(k, data["sources"][k]) for k in p.get("source") or [] if k in data["sources"])
                    + (f". {p['note']}" if p.get("note") else "") for t, p in pairs]
                out.append("")
    return "\n".join(out)


def markdown() -> str:
    """One content tab per pinned track."""
    from specdec_guide.releases.tracks import Registry

    out = []
    for t in Registry().tracks:
        out.append(f'=== "TensorRT-LLM {t.id}"')
        out.append("")
        out.extend(("    " + line) if line else "" for line in track_markdown(t.id).splitlines())
        out.append("")
    return "\n".join(out)
