"""No prose in the project's YAML data is cut short by a comment.

In YAML a ` #` ends a plain (unquoted) scalar: `note: fixed by PR #12547 on main` parses as
"fixed by PR". This finds every ` #` that follows a plain scalar on its own line and so starts a
comment, in the data the site, the stand-in and the audit read, and wants that text quoted. And the
package's own loader (libyaml) reads every shipped YAML file as the reference parser does.
"""

from __future__ import annotations

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
