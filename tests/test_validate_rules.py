"""Construction-time rules and precision of the LLM-API checks, per pinned track.

* tests/fixtures/validate/rules/<track>/: for every rule a failing (``*.bad.*``) and a passing
  (``*.ok.*``) fixture, written by us; the first line says what must be found
  (``# expect: LINE:COL substring | ...``) or ``# expect: clean``.
* tests/fixtures/validate/precision/<track>/: files in the shape of real upstream LLM-API files
  (a llmapi model.yaml, an extra-options YAML with MoE and scheduler settings, a
  speculative-decoding example script), in our own words; they must validate clean.
* the snapshots themselves: every class, union and rule names a recorded source, every rule the
  function that enforces it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from specdec_guide.validate import llm_yaml, python_ast
from specdec_guide.releases.tracks import Registry
from registry import registry, tracks

FIXTURES = Path(__file__).parent / "fixtures" / "validate"
RULES = sorted(p for p in (FIXTURES / "rules").glob("*/*") if p.suffix in (".yaml", ".yml", ".py"))
PRECISION = sorted(p for p in (FIXTURES / "precision").glob("*/*") if p.suffix in (".yaml", ".yml", ".py"))
SCHEMAS = Path(__file__).resolve().parents[1] / "src" / "specdec_guide" / "schemas"
RULE_KEYS = ("gt", "ge", "lt", "le", "min_items", "items_gt", "choices_ci")


def findings(path: Path) -> list:
    registry = Registry(SCHEMAS)
    track = registry.resolve(path.parent.name)
    text = path.read_text()
    if path.suffix == ".py":
        return python_ast.check(text, track, registry)[0]
    return llm_yaml.check(text, track, registry, model_yaml=path.name == "model.yaml")


def expectations(path: Path) -> list[tuple[int, int, str]] | None:
    head = path.read_text().split("\n", 1)[0]
    assert head.startswith("# expect: "), f"{path}: first line must say what to expect"
    want = head[len("# expect: "):].strip()
    if want == "clean":
        return None
    out = []
    for part in want.split(" | "):
        pos, _, text = part.partition(" ")
        line, col = pos.split(":")
        out.append((int(line), int(col), text))
    return out


@pytest.mark.parametrize("path", RULES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_rule_fixture(path):
    got = findings(path)
    want = expectations(path)
    if want is None:
        assert got == [], f"{path.name} must validate clean, got {got}"
        return
    assert path.stem.endswith(".bad"), path
    for line, col, text in want:
        assert any(f[0] == line and f[1] == col and text in f[2] for f in got), \
            f"{path.name}: expected {line}:{col} '{text}', got {got}"
    assert len(got) == len(want), f"{path.name}: unexpected extra findings {got}"


def test_every_rule_fixture_has_a_pair():
    names = {p.parent.name + "/" + p.name for p in RULES}
    for p in RULES:
        if ".bad." in p.name:
            assert p.parent.name + "/" + p.name.replace(".bad.", ".ok.") in names, f"{p} has no passing twin"


@pytest.mark.parametrize("path", PRECISION, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_upstream_shaped_file_is_clean(path):
    assert findings(path) == []


def test_precision_counts(capsys):
    clean = sum(1 for p in PRECISION if not findings(p))
    bad = [p for p in RULES if ".bad." in p.name]
    caught = sum(1 for p in bad if all(any(f[0] == ln and f[1] == c and t in f[2] for f in findings(p))
                                       for ln, c, t in expectations(p)))
    with capsys.disabled():
        print(f"\nLLM-API precision: {clean}/{len(PRECISION)} upstream-shaped files clean; "
              f"{caught}/{len(bad)} rule fixtures caught at their line:col")
    assert clean == len(PRECISION) and caught == len(bad)


@pytest.mark.parametrize("track", tracks())
def test_snapshot_facts_name_their_source(track):
    snap = Registry(SCHEMAS).resolve(track).llm_api
    sources = snap.get("sources") or {}
    for name, cls in (snap.get("classes") or {}).items():
        assert cls.get("source") in sources, f"{track} class {name}: source {cls.get('source')!r} not recorded"
        for fname, spec in (cls.get("fields") or {}).items():
            if isinstance(spec, dict) and spec.get("source"):
                assert spec["source"] in sources, f"{track} {name}.{fname}: unknown source"
            if isinstance(spec, dict) and any(k in spec for k in RULE_KEYS[4:]):
                assert spec.get("at"), f"{track} {name}.{fname}: an element/choice rule without 'at'"
        for rule in cls.get("rules") or []:
            assert rule.get("id") and rule.get("kind"), f"{track} {name}: rule without id/kind"
            assert rule.get("source") in sources and rule.get("at"), f"{track} {name} rule {rule.get('id')}: no source line"
    for name, union in (snap.get("unions") or {}).items():
        assert union.get("source") in sources, f"{track} union {name}"
        for member in union.get("members") or []:
            assert member in snap["classes"], f"{track} union {name}: member {member} not described"


RELEASE_PAGES = {t.id: t.docs_pages.get("commit") for t in registry().tracks}
#: Whether each release's YAML dispatcher knows SaveState (EAGLE-3 training data): a new track says its own.
HAS_SAVE_STATE = {"1.1.0": False, "1.2.1": True}


@pytest.mark.parametrize("track", sorted(RELEASE_PAGES))
def test_llm_args_facts_come_from_the_release_page(track):
    """Both llm_args pages were read from the release's gh-pages copy: no class, field or rule taken
    from them is unconfirmed; SamplingParams (another page) keeps its own marks."""
    snap = Registry(SCHEMAS).resolve(track).llm_api
    assert snap["sources"]["llm_args"]["commit"] == RELEASE_PAGES[track]
    for name, cls in snap["classes"].items():
        if name == "SamplingParams":
            continue
        assert not cls.get("unconfirmed"), name
        for rule in cls.get("rules") or []:
            assert rule["source"] == "llm_args" and not rule.get("unconfirmed"), (name, rule["id"])
    keys = snap["unions"]["SpeculativeConfig"]["from_dict_keys"]
    assert "Eagle3" not in keys and "Draft_Target" not in keys and "DraftTarget" in keys
    assert track in HAS_SAVE_STATE, f"{track}: record in HAS_SAVE_STATE whether its from_dict table has SaveState"
    assert ("SaveState" in keys) == HAS_SAVE_STATE[track]
