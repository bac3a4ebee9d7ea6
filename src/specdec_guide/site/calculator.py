"""The calculator page's data and its table of published figures, written in at site build time.

Its markers (:mod:`specdec_guide.markers`):

- ``calculator-data`` becomes :func:`data_script`, a ``<script type="application/json">`` holding :func:`data`: the cost
  model's inputs from :func:`specdec_guide.payoff.calculator_data`, the examples and the published
  figures (docs/assets/calculator.js reads it);
- ``published-figures`` becomes :func:`figures_table`, every row of
  ``schemas/upstream_batch_figures.yaml`` with its conditions and source.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path

from specdec_guide import payoff
from specdec_guide.diagnostics import UserError, load_yaml_file

FIGURES_PATH = Path(__file__).resolve().parents[1] / "schemas" / "upstream_batch_figures.yaml"
ESTIMATE_OUT = payoff.ROOT / "snippets" / "tools" / "output" / "estimate.out"
METRICS = {"speedup": "speed-up", "acceptance_length": "acceptance length", "acceptance_rate": "acceptance rate",
           "tokens_per_s_per_user": "tokens/s per user", "throughput_tokens_per_s": "throughput, tokens/s",
           "latency_ms": "latency, ms"}
# The methods of the published rows that the calculator's forms price (EAGLE-1/2 rows, "eagle", are not EAGLE-3).
FORM_OF = {"ngram": "ngram", "draft_target": "draft_target", "eagle3": "eagle3", "mtp": "mtp"}


@lru_cache(maxsize=1)
def published() -> dict:
    """The upstream figures file, checked: every row names a source of the file and a known metric."""
    data = load_yaml_file(FIGURES_PATH, "the published figures") or {}
    sources, rows = data.get("sources") or {}, data.get("figures") or []
    for i, row in enumerate(rows):
        if row.get("source") not in sources or row.get("metric") not in METRICS:
            raise UserError(f"{FIGURES_PATH}: figures[{i}]: needs a source of 'sources' and a metric of "
                            f"{', '.join(METRICS)}")
        if not isinstance(row.get("value"), (int, float)) or (row.get("batch") is None and row.get("concurrency") is None
                                                               and row.get("draft_len") is None):
            raise UserError(f"{FIGURES_PATH}: figures[{i}]: needs a numeric value and a batch size, concurrency "
                            "or draft length")
    return {"sources": sources, "figures": rows}


def _load(row: dict) -> str:
    if row.get("batch") is not None:
        return f"batch {row['batch']}"
    if row.get("concurrency") is not None:
        return f"concurrency {row['concurrency']}"
    return "-"


def _value(row: dict) -> str:
    v = row["value"]
    if row.get("unit") == "percent":
        return f"+{v:g} %"
    text = f"{v:g}x" if row["metric"] == "speedup" else f"{v:g}"
    if row.get("baseline_value") is not None:
        text += f" (without: {row['baseline_value']:g})"
    return text


def _estimate_example() -> dict | None:
    """The estimate page's NGram replay (its stored output): acceptance length and max_draft_len."""
    if not ESTIMATE_OUT.is_file():
        return None
    text = ESTIMATE_OUT.read_text(encoding="utf-8")
    k = re.search(r"max_draft_len=(\d+)", text)
    row = re.search(r"^all \d+ requests\s+(.*)$", text, re.M)
    if not (k and row):
        return None
    cells = row.group(1).split()
    length = float(cells[6])  # steps tokens drafted accepted accept_rate tok_accept accept_len speed-up
    return {"label": f"NGram on this guide's logged requests: acceptance length {length:g}, max_draft_len {k.group(1)}",
            "source": "specdec-guide estimate on the log of the 'Estimate on your traffic' page: SmolLM2-135M-Instruct "
                      "on a CPU, stored in snippets/tools/output/estimate.out; your traffic differs",
            "inputs": {"form": "ngram", "k": k.group(1), "kind": "length", "acceptance": f"{length:g}", "batch": "1",
                       "draft_cost": "", "verify_cost": "", "count_verify": True, "count_overlap": True}}


def examples() -> list[dict]:
    """The guide's own replay, then every published acceptance length with a draft length and a load."""
    out = [e for e in [_estimate_example()] if e]
    fig = published()
    for row in fig["figures"]:
        form = FORM_OF.get(row["method"])
        load = row.get("batch") or row.get("concurrency")
        if row["metric"] != "acceptance_length" or not form or not row.get("draft_len") or not load or load > 128:
            continue
        if not 1 <= row["value"] <= row["draft_len"] + 1:
            continue
        title = fig["sources"][row["source"]]["title"]
        out.append({
            "label": f"{row['framework']}: {row['drafter'] or form}, {row['target']}, {_load(row)}: acceptance length "
                     f"{row['value']:g}",
            "source": f"{title} ({fig['sources'][row['source']]['url']}), {row['where']}; hardware "
                      f"{row.get('hardware') or 'not stated'}. The draft cost is set to 0, the best case, not a "
                      "measurement: enter yours.",
            "inputs": {"form": form, "k": str(row["draft_len"]), "kind": "length", "acceptance": f"{row['value']:g}",
                       "batch": str(load), "draft_cost": "0", "verify_cost": "", "count_verify": True,
                       "count_overlap": True}})
    return out


def data() -> dict:
    fig = published()
    figures = [{"method": r["method"], "metric": r["metric"], "value": r["value"]} for r in fig["figures"]]
    return {**payoff.calculator_data(), "examples": examples(), "figures": figures}


def data_script() -> str:
    # "</" inside a script element would end it: JSON allows the escaped form.
    text = json.dumps(data(), separators=(",", ":")).replace("</", "<\\/")
    return f'<script type="application/json" id="specdec-calc-data">{text}</script>'


def figures_table() -> str:
    """One Markdown row per published figure, grouped by framework and method."""
    fig = published()
    order = {"TensorRT-LLM": 0, "vLLM": 1, "SGLang": 2}
    # Within a framework, the methods this guide teaches first; "other" (a method after the pinned releases) last.
    rows = sorted(fig["figures"], key=lambda r: (order.get(r["framework"], 9), r["method"] == "other", r["method"],
                                                 r["source"]))
    lines = ["| Framework, method | Model and drafter | Hardware, data | Load | Figure | Source |",
             "| --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        src = fig["sources"][r["source"]]
        version = f" {r['framework_version']}" if r.get("framework_version") else ""
        drafter = f"; {r['drafter']}" if r.get("drafter") else ""
        k = f", k = {r['draft_len']}" if r.get("draft_len") else ""
        where = "; ".join(x for x in (r.get("hardware"), r.get("dataset")) if x) or "-"
        note = f" ({r['note']})" if r.get("note") else ""
        cells = [f"{r['framework']}{version}, {r['method']}", f"{r['target']}{drafter}{k}", where,
                 _load(r), f"{METRICS[r['metric']]} {_value(r)}{note}",
                 f"[{src.get('publisher') or 'source'}{', ' + str(src['date']) if src.get('date') else ''}]({src['url']})"]
        lines.append("| " + " | ".join(str(c).replace("|", "/") for c in cells) + " |")
    return "\n".join(lines)
