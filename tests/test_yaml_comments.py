"""No prose in the project's YAML data is cut short by a comment.

In YAML a ` #` ends a plain (unquoted) scalar: `note: fixed by PR #12547 on main` parses as
"fixed by PR". This finds every ` #` that follows a plain scalar on its own line and so starts a
comment, in the data the site, the stand-in and the audit read, and wants that text quoted. And the
package's own loader (libyaml) reads every shipped YAML file as the reference parser does.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
FILES = sorted([*(ROOT / "src/specdec_guide/schemas").rglob("*.yaml"), *(ROOT / "audit").glob("*.yaml"),
                ROOT / "snippets/migration/map.yaml"])
_HASH_NUMBER = re.compile(r"\S( +)#\d")


def cut_scalars(text: str) -> list[str]:
    """``line:col`` of each `` #<digit>`` that ends a plain scalar on the same line (a comment that
    swallowed the rest of the prose)."""
    ends: dict[int, list[int]] = {}
    for token in yaml.scan(text, Loader=yaml.SafeLoader):
        if isinstance(token, yaml.ScalarToken) and token.plain:
            ends.setdefault(token.end_mark.line, []).append(token.end_mark.column)
    found = []
    for number, line in enumerate(text.splitlines()):
        for m in _HASH_NUMBER.finditer(line):
            hash_col = m.end() - 2
            if any(end <= hash_col and not line[end:hash_col].strip() for end in ends.get(number, [])):
                found.append(f"{number + 1}:{hash_col + 1}")
    return found


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_prose_is_cut_by_a_comment(path):
    found = cut_scalars(path.read_text(encoding="utf-8"))
    assert not found, f"{path.relative_to(ROOT)}: ` #` after unquoted text starts a comment at " + ", ".join(found)


def test_the_check_finds_a_cut_note_and_passes_a_quoted_one():
    assert cut_scalars("note: fixed by PR #12547 on main\n") == ["1:19"]
    assert cut_scalars("note: fixed by\n  PR #12547 later\n") == ["2:6"]  # a plain scalar over two lines
    assert cut_scalars("note: >-\n  fixed by PR #12547\n") == []  # in a block scalar # is text
    assert cut_scalars("note: 'fixed by PR #12547 on main'\n# PR #1 in a comment line\n") == []


def test_the_data_loader_reads_every_shipped_yaml_as_safe_load_does():
    """diagnostics.load_data_yaml (libyaml, for the package's own files) gives yaml.safe_load's data."""
    from specdec_guide.diagnostics import load_data_yaml

    files = sorted((ROOT / "src" / "specdec_guide").rglob("*.yaml"))
    assert len(files) >= 10, files
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert load_data_yaml(text) == yaml.safe_load(text), path



def _tree_yaml() -> list[Path]:
    """The YAML files a `validate` of this repository meets that test_the_data_loader... does not
    compare: snippets, templates, docs and the tests' fixtures (broken ones too). audit/ is left out:
    review records in one fixed schema (tests/test_audit.py, which loads them the same way), a
    megabyte that the pure loader would take seconds over."""
    skip = {".git", ".venv", ".venv-aiperf", "site", "node_modules", "audit", "src"}
    found = []
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in skip]
        found += [Path(folder) / f for f in files if f.endswith((".yaml", ".yml"))]
    return sorted(found)


def _keys_as_safe_load_reads_them(text: str) -> list[str] | None:
    """What kinds._top_keys answered with PyYAML's pure loader: the data's keys, else the key lines."""
    try:
        data = yaml.safe_load(text)
    except (yaml.YAMLError, RecursionError):
        return [m.group(1) for m in map(re.compile(r"^([A-Za-z_][\w.\-]*)\s*:(?:\s|$)").match, text.split("\n")) if m] or None
    return [str(k) for k in data] if isinstance(data, dict) else None


#: Texts where the two loaders part or could: libyaml refuses a %YAML 1.3 directive that PyYAML
#: accepts; nesting runs PyYAML out of Python stack (RecursionError) before libyaml refuses it;
#: tabs, odd scalars, merge keys, several documents, broken quoting.
HOSTILE = ["a:\n\t- 1\n", "%YAML 1.1\n---\na: 1\n", "%YAML 1.3\n---\na: 1\n", "a: !!binary aGk=\nb: 0o17\n",
           "a: &x {b: 1}\nc: *x\n<<: *x\n", "? [1, 2]\n: v\n", "a: 1\na: 2\n", "- 1\n- 2\n", "", "a: 'unterminated\n",
           "\ufeffmodel: x\n", "a: \"\\x\"\n", "model: x\n---\nb: 2\n", "a: b: c\n", "a: [1, 2\n",
           "speculative_config: " + "[" * 600 + "]" * 600 + "\n",
           "triton_config:\n" + "".join(" " * (i + 1) + "k:\n" for i in range(1200)) + " " * 1201 + "v\n"]


def test_the_validators_key_reader_answers_as_with_safe_load():
    """kinds._top_keys reads a file with libyaml's loader (load_data_yaml), which parts from
    yaml.safe_load on some texts; the keys by which it recognises a file are the same, on every YAML
    file of this tree and on hostile texts."""
    from specdec_guide.validate.kinds import _top_keys

    files = _tree_yaml()
    assert len(files) > 100 and any("fixtures" in p.parts for p in files), len(files)
    texts = [(str(p.relative_to(ROOT)), p.read_text(encoding="utf-8")) for p in files]
    for where, text in [*texts, *((f"hostile {i}", t) for i, t in enumerate(HOSTILE))]:
        assert _top_keys(text) == _keys_as_safe_load_reads_them(text), where
