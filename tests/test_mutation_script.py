"""scripts/mutation.py's report (``make mutation``): how it scores a module and how it treats the
equivalents file. The mutation run itself is not part of `make test`; this checks its bookkeeping."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import mutation  # noqa: E402


def report(**statuses) -> dict:
    return {name: {"file": "f.py", "status": status, "diff": f"--- a\n+++ b\n-    x = 1\n+    x = 2 # {name}"}
            for name, status in statuses.items()}


def test_the_score_counts_killed_and_timeouts_and_leaves_out_equivalents():
    got = report(m1="killed", m2="timeout", m3="survived", m4="no tests", m5="survived", m6="suspicious")
    equivalents = [{"module": "ngram", "mutant": "m5", "change": "+    x = 2 # m5", "why": "same"}]
    counts, notes = mutation.summarize("ngram", got, equivalents)
    assert counts == {"total": 6, "killed": 2, "survived": 1, "no tests": 1, "other": 1, "equivalent": 1,
                      "score": 2 / 5}
    assert [n.split("\n")[0] for n in notes] == ["  survived: m3", "  no tests: m4", "  suspicious: m6"]
    assert notes[0].split("\n")[1:] == ["    -    x = 1", "    +    x = 2 # m3"]  # the diff, without its header
    assert mutation.summarize("ngram", {}, [])[0]["score"] == 1.0


def test_an_equivalent_entry_that_no_longer_fits_is_stale_and_not_counted():
    got = report(m1="survived", m2="killed", m3="survived")
    entries = [{"module": "ngram", "mutant": "gone", "change": "+", "why": "w"},
               {"module": "ngram", "mutant": "m2", "change": "+    x = 2 # m2", "why": "w"},
               {"module": "ngram", "mutant": "m1", "change": "+    y = 3", "why": "w"},
               {"module": "other", "mutant": "m3", "change": "+    x = 2 # m3", "why": "w"}]
    counts, notes = mutation.summarize("ngram", got, entries)
    assert counts["equivalent"] == 0 and counts["survived"] == 2
    stale = [n for n in notes if "stale" in n]
    assert stale == ["  stale equivalent entry: gone is not a mutant any more",
                     "  stale equivalent entry: m2 is killed now; drop the entry",
                     "  stale equivalent entry: m1's diff no longer holds '+    y = 3'"]


def test_the_equivalents_file_names_known_modules_and_says_why():
    entries = mutation.load_equivalents()
    assert entries, "tests/mutation_equivalents.yaml is empty"
    for entry in entries:
        assert entry["module"] in mutation.MODULES, entry
        assert entry["change"].startswith("+") and len(entry["why"]) > 20, entry
        sources = [Path(s).stem for s in mutation.MODULES[entry["module"]][0]]
        assert entry["mutant"].split(".x")[0].rsplit(".", 1)[-1] in sources, entry
    names = [e["mutant"] for e in entries]
    assert len(names) == len(set(names)), "a mutant recorded twice"


def test_every_module_maps_to_files_that_exist():
    for module, (sources, tests) in mutation.MODULES.items():
        for path in (*sources, *tests):
            assert (ROOT / path).is_file(), (module, path)


def test_the_readmes_scores_add_up_and_agree_with_the_equivalents_file_and_the_module_map():
    """The README's table comes from a run (not checkable here: .mutation/ is not kept), but what it
    says can be held to what is committed: one row per module of MODULES with its sources, the
    equivalents the file records for it, counts that add up, and the score that follows from them."""
    import re
    from collections import Counter

    text = (ROOT / "README.md").read_text()
    rows = [line for line in text.split("## How well the tests catch bugs", 1)[1].split("\n## ", 1)[0].splitlines()
            if line.startswith("| ") and not line.startswith("| module") and not line.startswith("| ---")]
    recorded = Counter(e["module"] for e in mutation.load_equivalents())
    seen = set()
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        sources = re.findall(r"`([^`]+)`", cells[1])
        mutants, caught, equivalent, missed = (int(c.replace(",", "")) for c in cells[2:6])
        module = next(m for m, (files, _) in mutation.MODULES.items() if Path(files[0]).name == Path(sources[0]).name)
        seen.add(module)
        assert [Path(f).name for f in mutation.MODULES[module][0]] == [Path(s).name for s in sources], row
        assert equivalent == recorded[module], (module, equivalent, recorded[module])
        assert caught + equivalent + missed == mutants, row
        assert cells[6] == f"{round(100 * caught / (mutants - equivalent))}%", row
    assert seen == set(mutation.MODULES), f"README rows for {sorted(seen)}, modules {sorted(mutation.MODULES)}"
    fm = __import__("importlib").import_module("fidelity_mutants")
    assert f"({len(fm.MUTANTS)} mutants, each in a copy of `src/`)" in " ".join(text.split())
