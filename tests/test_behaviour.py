"""The behaviour record loader: every fact names a known source and a confidence, ids are unique."""

from __future__ import annotations

import pytest

from specdec_guide.releases import behaviour
from specdec_guide.diagnostics import UserError
from specdec_guide.releases.tracks import Registry


def _write(folder, name, text):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text, encoding="utf-8")


GOOD = """
version: "9.9.9"
sources:
  s1: {repo: o/r, path: a.py, commit: "0000000000000000000000000000000000000000"}
facts:
  f1: {claim: "x", value: true, source: s1, confidence: confirmed}
"""


def test_loads_and_reads_by_id(tmp_path):
    _write(tmp_path, "a.yaml", GOOD)
    rec = behaviour.load_folder(tmp_path, "9.9.9")
    assert rec.value("f1") is True
    assert rec.source_of("f1")[0]["path"] == "a.py"
    with pytest.raises(UserError, match="no behaviour fact 'nope'"):
        rec.fact("nope")


@pytest.mark.parametrize(
    "text, message",
    [
        (GOOD.replace("source: s1", "source: s2"), "unknown source 's2'"),
        (GOOD.replace("confidence: confirmed", "confidence: sure"), "confidence must be one of"),
        (GOOD.replace("source: s1, ", ""), "names no source"),
        (GOOD.replace('"9.9.9"', '"1.0.0"'), "lies in track 9.9.9"),
        ("facts: [", "not valid YAML"),
        (GOOD.replace("confidence: confirmed}", "confidence: confirmed, does_not_work: [streaming]}"),
         "does_not_work entry 'streaming' is not '<kind>:<name>'"),
    ],
)
def test_bad_records_are_user_errors(tmp_path, text, message):
    _write(tmp_path, "a.yaml", text)
    with pytest.raises(UserError, match=message):
        behaviour.load_folder(tmp_path, "9.9.9")


def test_a_fact_is_defined_once(tmp_path):
    _write(tmp_path, "a.yaml", GOOD)
    _write(tmp_path, "b.yaml", GOOD)
    with pytest.raises(UserError, match="also defined in a.yaml"):
        behaviour.load_folder(tmp_path, "9.9.9")


@pytest.mark.parametrize("track", [t.id for t in Registry().tracks])
def test_every_pinned_track_record_loads(track):
    rec = Registry().resolve(track).behaviour
    assert rec.track == track
    for fact in rec.facts.values():
        assert fact.claim, f"{fact.file}: fact {fact.id} has no claim"


def test_does_not_work_is_read_by_kind(tmp_path):
    _write(tmp_path, "a.yaml", GOOD.replace("confidence: confirmed}",
                                            'confidence: confirmed, does_not_work: ["input:streaming"]}'))
    assert behaviour.load_folder(tmp_path, "9.9.9").fact("f1").does_not_work == ("input:streaming",)
