"""Every output a page shows comes from a run in the mode of the release the page names.

On the pinned tracks the llmapi model sends one event per streamed request and zero per-request
draft counters with TorchSampler (behaviour record: ``llmapi_model_streams_per_step``,
``per_request_draft_counters_filled``), and the CPU stand-in answers the same unless a
``model.yaml`` asks for a departure (``triton_config.cpu_behaviour``). An output made that way
must say so: a stored output file a page includes, in its first line; a notebook's stored output,
in the same printed text. Both name the setting (``cpu_behaviour``).

Static and cheap: it reads the stored files only (the walks and notebook runs that write them
are tested elsewhere).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from registry import registry
from site_build import ROOT
from specdec_guide.releases.tracks import Registry

LABEL = "cpu_behaviour"  # what a labelled output names: the setting that made it
COUNTERS = ("total_draft_tokens", "total_accepted_draft_tokens", "acceptance_rate")
_COUNTER = re.compile(r'"?\b(' + "|".join(COUNTERS) + r')\b"?\s*[:=]\s*"?(-?[\d.]+)')
_INCLUDE = re.compile(r'^\s*--8<--\s+"([^"]+)"\s*$', re.M)
# Printed tables of notebooks that measure through Triton: these columns come from the llmapi
# model's events (ITL needs more than one) and counters.
_STREAMED_COLUMNS = ("ITL ms",)
_COUNTER_COLUMNS = ("drafted", "accepted")


def _tracks() -> tuple[list[str], str]:
    reg = registry()
    return [t.id for t in reg.tracks], reg.resolve(None).id


def tracks_named(text: str) -> list[str]:
    """The pinned tracks a page names (by id), else the default one (what the stand-in answers as)."""
    ids, default = _tracks()
    named = [t for t in ids if re.search(rf"(?<![\d.]){re.escape(t)}(?![\d])", text)]
    return named or [default]


def release_rules(tracks: list[str]) -> tuple[bool, bool]:
    """(one event per request, zero counters) on any of ``tracks``, from their behaviour records."""
    one_event = zero_counters = False
    for track in tracks:
        record = Registry().resolve(track).behaviour
        one_event |= record.value("llmapi_model_streams_per_step") is False
        filled = record.value("per_request_draft_counters_filled")
        zero_counters |= (filled.get("TorchSampler") is False) if isinstance(filled, dict) else filled is False
    return one_event, zero_counters


def _event_lines(text: str) -> list[str]:
    """Lines that are one response of a request: an SSE event, a printed response body, a client's
    printed text_output."""
    events = []
    for line in text.splitlines():
        body = line[len("data: "):] if line.startswith("data: ") else line
        if body.startswith("text_output:"):
            events.append(line)
            continue
        try:
            doc = json.loads(body)
        except ValueError:
            continue
        if isinstance(doc, dict) and "text_output" in doc:
            events.append(line)
    return events


def _column_values(text: str, column: str) -> list[str]:
    """The values under ``column`` in a printed table whose header line has it (right-aligned
    columns, as the notebooks print them: a value ends where its header ends)."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        at = line.find(column)
        if at < 0 or not re.search(rf"(^|\s){re.escape(column)}(\s|$)", line):
            continue
        end = at + len(column)
        values = []
        for row in lines[i + 1:]:
            if not row.strip() or len(row) < end:
                break
            cell = row[:end].split()
            if not cell:
                break
            values.append(cell[-1])
        return values
    return []


def _number(value: str) -> float | None:
    try:
        return float(value)
    except ValueError:
        return None


def departures(text: str, one_event: bool, zero_counters: bool, tables: bool = False) -> list[str]:
    """What in ``text`` the release would not send: more than one event, nonzero draft counters;
    with ``tables``, nonzero ITL or draft columns of a printed table (notebooks measuring through Triton)."""
    found = []
    if one_event and len(_event_lines(text)) > 1:
        found.append(f"{len(_event_lines(text))} streamed events (the release sends one)")
    if zero_counters:
        found += [f"{name}={value} (the release sends 0)" for name, value in _COUNTER.findall(text)
                  if (_number(value) or 0) != 0]
    if tables:
        if one_event:
            found += [f"{c} column {v} (one event per request: AIPerf's ITL is 0)" for c in _STREAMED_COLUMNS
                      for v in _column_values(text, c) if (_number(v) or 0) != 0]
        if zero_counters:
            found += [f"{c} column {v} (the release's counters are 0)" for c in _COUNTER_COLUMNS
                      for v in _column_values(text, c) if (_number(v) or 0) != 0]
    return found


def _say(found: list[str]) -> str:
    return "; ".join(found[:3]) + (f" (and {len(found) - 3} more)" if len(found) > 3 else "")


def shown_outputs() -> list[tuple[str, str]]:
    """(page, included file) for every stored output a page includes (files under output/ or out/)."""
    found = []
    for page in sorted((ROOT / "docs").rglob("*.md")):
        for path in _INCLUDE.findall(page.read_text(encoding="utf-8")):
            path = re.sub(r"(:-?\d+)+$", "", path)
            if {"output", "out"} & set(Path(path).parts[:-1]):
                found.append((str(page.relative_to(ROOT)), path))
    return found


SHOWN = shown_outputs()


def test_the_pages_show_stored_outputs():
    assert len(SHOWN) >= 20, SHOWN  # the walk of includes found them (not a vacuous pass)


@pytest.mark.parametrize("page,output", SHOWN, ids=[f"{p}:{o}" for p, o in SHOWN])
def test_a_shown_output_is_in_the_release_mode_or_labelled(page, output):
    one_event, zero_counters = release_rules(tracks_named((ROOT / page).read_text(encoding="utf-8")))
    text = (ROOT / output).read_text(encoding="utf-8")
    found = departures(text, one_event, zero_counters)
    first = text.splitlines()[0] if text.strip() else ""
    assert not found or LABEL in first, (
        f"{output} (shown on {page}, which names a pinned release) shows {_say(found)}: regenerate it "
        f"in the release's mode, or say in its first line which {LABEL} departure made it")


def _cpu_notebooks():
    from specdec_guide.notebooks import list_notebooks

    return [i for i in list_notebooks(ROOT) if i.tier == "cpu"]


@pytest.mark.parametrize("info", _cpu_notebooks(), ids=lambda i: i.source.name)
def test_a_notebooks_stored_outputs_are_in_the_release_mode_or_labelled(info):
    source = info.source.read_text(encoding="utf-8")
    one_event, zero_counters = release_rules(tracks_named(source))
    # Tables count only where the notebook measures through Triton's llmapi model (its events, its counters).
    through_triton = "run_aiperf.profile(" in source or "sampling_param_return_perf_metrics" in source
    if not through_triton:
        pytest.skip(f"{info.source.name} does not measure through Triton's llmapi model: its outputs are the engine's own")
    nb = json.loads(info.paired.read_text(encoding="utf-8"))
    outputs = ["".join(o.get("text", "")) for c in nb["cells"] for o in c.get("outputs", []) if "text" in o]
    assert outputs, f"{info.paired.name}: no stored text outputs"
    for text in outputs:
        found = departures(text, one_event, zero_counters, tables=True)
        assert not found or LABEL in text, (
            f"{info.paired.name}: a stored output shows {_say(found)} without naming the {LABEL} departure "
            f"that made it:\n{text[:400]}")


# -- the checks can fail ----------------------------------------------------------------------------
PER_STEP = "\n".join(f'data: {{"text_output":"The capital{" of France"[:i]}"}}' for i in range(4)) + "\n"


def test_per_step_events_and_filled_counters_are_departures_on_the_pinned_release():
    one_event, zero_counters = release_rules(["1.1.0"])
    assert one_event and zero_counters
    assert departures(PER_STEP, one_event, zero_counters) == ["4 streamed events (the release sends one)"]
    assert departures('{"text_output": "x", "total_draft_tokens": "12", "acceptance_rate": "0.5"}',
                      one_event, zero_counters) == ["total_draft_tokens=12 (the release sends 0)",
                                                    "acceptance_rate=0.5 (the release sends 0)"]
    assert departures("text_output: x\ntotal_draft_tokens: 0\nacceptance_rate: 0.0\n", one_event, zero_counters) == []
    table = ("server    conc  TTFT ms  ITL ms\nngram        1      436    83.2\n\n"
             "server    set   drafted accepted\nngram     chat       23        9\n")
    assert departures(table, one_event, zero_counters, tables=True) == [
        "ITL ms column 83.2 (one event per request: AIPerf's ITL is 0)",
        "drafted column 23 (the release's counters are 0)", "accepted column 9 (the release's counters are 0)"]
    assert departures(table.replace("83.2", " 0.0").replace("23", " 0").replace(" 9", " 0"),
                      one_event, zero_counters, tables=True) == []


def test_a_page_is_read_for_the_tracks_it_names():
    assert tracks_named("on TensorRT-LLM 1.2.1 (Triton 26.04)") == ["1.2.1"]
    assert tracks_named("version 11.1.0 or 1.1.01") == [_tracks()[1]]  # neither names 1.1.0: the default
