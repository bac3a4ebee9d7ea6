"""The field notes (schemas/field_notes/*.yaml) and the page rendered from them.

Each note must name real sources, say what happens on every pinned track and what to do there
(or "no fix known"), and use the symptom vocabulary; the page must index every note by symptom
and every error text, and the built site's search must find an error by its text.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from registry import tracks
from specdec_guide import field_notes
from specdec_guide.diagnostics import UserError

ROOT = Path(__file__).resolve().parents[1]
TRACKS = tracks()


@pytest.fixture(scope="module")
def notes():
    return field_notes.load()


def test_there_are_at_least_sixty_notes_over_every_area(notes):
    assert len(notes) >= 60
    assert {n.area for n in notes} == {p.stem for p in field_notes.NOTES_DIR.glob("*.yaml")}


def test_each_note_has_a_source_a_scope_on_every_track_and_a_fix(notes):
    for n in notes:
        assert n.sources and all(s["url"].startswith("https://") for s in n.sources), n.id
        assert sorted(n.on_track) == sorted(TRACKS), n.id
        for track, verdict in n.on_track.items():
            assert verdict["status"] in ("affected", "not_affected", "fixed", "unknown"), (n.id, track)
            assert verdict["fix"].strip(), (n.id, track)


def test_crash_divergence_and_hang_notes_lead_to_the_triage_order(notes):
    for n in notes:
        if {"crash", "divergent_output", "hang"} & set(n.symptoms):
            assert n.triage, f"{n.id}: a crash, divergence or hang note must link the triage order"


def test_the_areas_cover_the_symptoms_readers_report(notes):
    seen = {s for n in notes for s in n.symptoms}
    for symptom in ("divergent_output", "crash", "hang", "oom", "no_speedup", "acceptance_falls",
                    "one_streamed_event", "key_refused", "lost_tool_calls"):
        assert symptom in seen, f"no note for {symptom}"


def _copy(tmp_path: Path) -> Path:
    into = tmp_path / "field_notes"
    shutil.copytree(field_notes.NOTES_DIR, into)
    return into


@pytest.mark.parametrize("change, message", [
    (lambda n, d: n.update(sources=["nowhere_1"]), "sources nowhere_1 are not in the file's 'sources' table"),
    (lambda n, d: n["on_track"].pop("1.2.1"), "'on_track' must have exactly the tracks"),
    (lambda n, d: n["on_track"]["1.1.0"].update(fix=""), "on_track 1.1.0: 'fix' must say what to do"),
    (lambda n, d: n["on_track"]["1.1.0"].update(status="maybe"), "status must be one of"),
    (lambda n, d: n.update(symptoms=["sad"]), "'symptoms' has sad"),
    (lambda n, d: n.update(confidence="sure"), "confidence must be one of"),
    (lambda n, d: d["notes"].append(dict(n)), "a note id appears twice"),
])
def test_a_broken_note_is_refused_with_its_file_and_id(tmp_path, change, message):
    into = _copy(tmp_path)
    path = next(iter(sorted(into.glob("*.yaml"))))
    data = yaml.safe_load(path.read_text())
    change(data["notes"][0], data)
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    with pytest.raises(UserError, match=message.replace("(", r"\(").replace(")", r"\)")) as err:
        field_notes.load(into)
    assert path.name in str(err.value) or "appears twice" in str(err.value)


def test_the_page_indexes_every_note_and_every_error(notes):
    page = field_notes.markdown(notes)
    for n in notes:
        assert f"{{ #{n.id} }}" in page and f"](#{n.id})" in page, n.id
        for error in n.errors:
            assert field_notes._code(error) in page, error
    src = (ROOT / "docs" / field_notes.PAGE).read_text()
    assert field_notes.MARKER in src and "## Triage order" in src
    assert "speculative_decoding/field_notes.md" in (ROOT / "docs/index.md").read_text()


def test_the_site_search_finds_a_note_by_its_error_text(built_site, notes):
    index = json.loads((built_site / "search" / "search_index.json").read_text())
    docs = [d for d in index["docs"] if d["location"].startswith("speculative_decoding/field_notes/")]
    errors = [e for n in notes for e in n.errors]
    assert errors
    text = "\n".join(d["text"] for d in docs)
    import html

    missing = [e for e in errors if html.escape(e, quote=False) not in text and e not in text]
    assert not missing, missing
    # and a note has its own search entry (its heading's anchor), so a hit lands on the note
    assert any(d["location"].endswith(f"#{notes[0].id}") for d in docs)
