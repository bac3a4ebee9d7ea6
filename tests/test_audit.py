"""The GPU-path audit record (audit/*.yaml, format in audit/README.md) stays true to the files it audits.

Every entry names a claim, where it is (a file and a short exact quote), a verdict and a source. A claim
marked right or unconfirmed must still be there, word for word, so that an edit to it sends the editor
back to the record; a claim marked wrong must be gone and the fix recorded. Together the area files
cover every GPU notebook and GPU page.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

import pytest
import yaml

from site_build import ROOT
from registry import tracks

AUDIT = ROOT / "audit"
VERDICTS = {"right", "wrong", "wrong-for-track", "unconfirmed"}
TRACKS = set(tracks()) | {"both", "next"}  # a track of tracks.yaml, both of them, or main after them
# What the issue (#16) names as the GPU path: notebooks 02-07 and 09, the method pages, versions,
# troubleshooting and the llmapi templates (their model.yaml and config.pbtxt).
REQUIRED = [
    *(f"notebooks/{n}.py" for n in ("02_legacy_engine_workflow", "03_migrate_to_llm_api", "04_ngram",
                                      "05_draft_target", "06_eagle3", "07_mtp", "09_benchmarking_gpu")),
    "docs/speculative_decoding/choosing_a_method.md",
    "docs/speculative_decoding/user_provided.md",
    "docs/speculative_decoding/versions.md",
    "docs/speculative_decoding/troubleshooting.md",
    *(str(p.relative_to(ROOT)) for p in sorted((ROOT / "model_repo_templates/llmapi").glob("*/tensorrt_llm/1/model.yaml"))),
    *(str(p.relative_to(ROOT)) for p in sorted((ROOT / "model_repo_templates/llmapi").glob("*/tensorrt_llm/config.pbtxt"))),
]
# Sources must point somewhere a reader can follow: a repository path, a PR, or a versioned docs page.
SOURCE = re.compile(r"([\w.-]+/[\w.-]+ \S+@[0-9A-Za-z._/-]+)|(PR #\d+)|(https://\S+)|(#\d+)")


def _areas() -> list[Path]:
    return sorted(AUDIT.glob("*.yaml"))


@functools.cache
def _load(path: Path) -> dict:
    """An area file, read once per process (it is read at collection, by every worker: libyaml's loader
    takes a tenth of the pure-Python one's time on these files). Tests read entries, never change them."""
    data = yaml.load(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    assert isinstance(data, dict) and data.get("entries"), f"{path.name}: no entries"
    return data


def _entries():
    for path in _areas():
        for i, entry in enumerate(_load(path)["entries"]):
            yield pytest.param(path, entry, id=f"{path.stem}:{entry.get('id', i)}")


def test_the_record_exists_and_has_one_file_per_area():
    assert (AUDIT / "README.md").is_file()
    assert len(_areas()) >= 10, [p.name for p in _areas()]


def test_ids_are_unique_across_areas():
    seen: dict[str, str] = {}
    for path in _areas():
        for entry in _load(path)["entries"]:
            assert entry.get("id") not in seen, f"{entry.get('id')} in {path.name} and {seen.get(entry.get('id'))}"
            seen[entry["id"]] = path.name


def check(entry: dict, root: Path = ROOT) -> list[str]:
    """What is wrong with one entry, against the files under ``root`` (empty: nothing)."""
    out = []
    for key in ("id", "track", "claim", "where", "verdict", "source"):
        if not entry.get(key):
            out.append(f"lacks {key}")
    if out:
        return out
    if entry["verdict"] not in VERDICTS:
        out.append(f"verdict {entry['verdict']!r} is not one of {sorted(VERDICTS)}")
    if str(entry["track"]) not in TRACKS:
        out.append(f"track {entry['track']!r} is not one of {sorted(TRACKS)}")
    if not SOURCE.search(str(entry["source"])):
        out.append(f"source names no repo path@ref, PR or URL: {entry['source']}")
    where = entry["where"]
    if not isinstance(where, dict) or not where.get("path") or not where.get("quote"):
        return out + ["where needs path and quote"]
    target = root / where["path"]
    if not target.is_file():
        return out + [f"{where['path']} does not exist"]
    text = target.read_text(encoding="utf-8")
    quote = where["quote"]
    if "\n" in quote:
        out.append("a quote is one line")
    if entry["verdict"] in ("right", "unconfirmed"):
        if quote not in text:
            out.append(f"{where['path']} no longer says {quote!r}: check the claim again")
        if entry["verdict"] == "unconfirmed" and not entry.get("note"):
            out.append("an unconfirmed entry says in its note where the page says so")
    else:
        fix = entry.get("fix") or {}
        if not fix.get("what"):
            out.append("a wrong claim needs fix.what")
        if quote in text and not fix.get("pending"):
            out.append(f"the wrong text {quote!r} is still in {where['path']}")
        if fix.get("now") and fix["now"] not in text:
            out.append(f"the fix {fix['now']!r} is not in {where['path']}")
    return out


@pytest.mark.parametrize("path,entry", list(_entries()))
def test_entry_has_every_field_and_its_quote_agrees_with_the_file(path, entry):
    assert not check(entry), f"{path.name}: {entry.get('id')}: " + "; ".join(check(entry))


@pytest.mark.parametrize("path,entry", [p for p in _entries() if (p.values[1].get("fix") or {}).get("pending")])
def test_a_wrong_claim_in_another_helpers_file_is_fixed_there(path, entry):
    """A wrong claim in a file this record's author does not own names its owner under fix.pending;
    it fails as expected until that owner's fix is in, and passes (XPASS) once the wrong text is gone."""
    text = (ROOT / entry["where"]["path"]).read_text(encoding="utf-8")
    if entry["where"]["quote"] in text:
        pytest.xfail(f"{entry['id']}: still in {entry['where']['path']}; pending: {entry['fix']['pending']}")


def test_areas_cover_every_gpu_notebook_and_page():
    covered: dict[str, set[str]] = {}
    for path in _areas():
        data = _load(path)
        declared = set(data.get("covers") or [])
        assert declared, f"{path.name}: no covers list"
        with_entries = {e["where"]["path"] for e in data["entries"]}
        missing = declared - with_entries
        assert not missing, f"{path.name} covers {sorted(missing)} without an entry for it"
        for p in declared:
            covered.setdefault(p, set()).add(path.name)
    missing = [p for p in REQUIRED if p not in covered]
    assert not missing, f"no area file covers: {missing}"


def test_migration_page_is_covered_once_its_area_exists():
    area = AUDIT / "migration.yaml"
    if not area.is_file():
        pytest.skip("audit/migration.yaml is written by the helper that owns migration.md")
    assert "docs/speculative_decoding/migration.md" in (_load(area).get("covers") or [])


def test_a_stale_quote_is_caught(tmp_path):
    """The check can fail: a right claim whose quote is gone, a wrong claim whose text is still there,
    a fix that is not in the file, and an entry without a source."""
    (tmp_path / "page.md").write_text("triton_config.decoupled: true in model.yaml is enough\n")
    base = {"id": "x", "track": "1.1.0", "claim": "c", "source": "PR #1"}
    right = {**base, "verdict": "right", "where": {"path": "page.md", "quote": "config.pbtxt too"}}
    wrong = {**base, "verdict": "wrong", "where": {"path": "page.md", "quote": "is enough"},
             "fix": {"what": "x", "now": "config.pbtxt"}}
    unsourced = {**base, "source": "somewhere", "verdict": "right", "where": {"path": "page.md", "quote": "is enough"}}
    assert any("no longer says" in p for p in check(right, tmp_path))
    problems = check(wrong, tmp_path)
    assert any("still in" in p for p in problems) and any("is not in" in p for p in problems)
    assert any("source names no" in p for p in check(unsourced, tmp_path))
    fixed = {**wrong, "fix": {"what": "x", "now": "is enough"}, "where": {"path": "page.md", "quote": "gone text"}}
    assert check(fixed, tmp_path) == []
