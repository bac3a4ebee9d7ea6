"""Page tables that compare the pinned tracks, one column (or one mention) per track.

Not a registry test: after ``scripts/add_track.py`` the registry tests pass, and these tables fail
here until a person writes the new release's column (docs/contributors.md, "The prose").
"""

from __future__ import annotations

import re
from pathlib import Path

from registry import tracks
from repo_copy import load_script

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted((ROOT / "docs").rglob("*.md"))
add_track = load_script("add_track")  # its _id_pattern: a whole release number, as the scaffold reads them


def _tables_missing_a_track(text: str, ids: list[str]) -> list[str]:
    """Header rows of markdown tables that name two or more of ``ids`` but not all (``line: row``)."""
    patterns = {t: [add_track._id_pattern(t), add_track._id_pattern(f"v{t}")] for t in ids}
    lines = text.splitlines()
    out = []
    for n, line in enumerate(lines):
        starts = line.lstrip().startswith("|") and (n == 0 or not lines[n - 1].lstrip().startswith("|"))
        if not starts or n + 1 >= len(lines) or not re.match(r"^\s*\|?\s*:?-{3,}", lines[n + 1]):
            continue
        named = {t for t, pair in patterns.items() if any(p.search(line) for p in pair)}
        if len(named) >= 2 and named != set(ids):
            out.append(f"{n + 1}: {line.strip()} (lacks {', '.join(t for t in ids if t not in named)})")
    return out


def test_a_table_with_a_column_per_track_has_every_track():
    """A table whose header names two or more tracks compares them: a track added to tracks.yaml needs
    its column there, so a table without it fails here (prose that names two releases is listed by
    scripts/add_track.py instead: it may stay true as written)."""
    found = {str(p.relative_to(ROOT)): _tables_missing_a_track(p.read_text(encoding="utf-8"), tracks())
             for p in [*PAGES, ROOT / "README.md"]}
    assert not {k: v for k, v in found.items() if v}
    # The check itself, on tables written here: one more track is missing from a per-track header.
    a, b = tracks()[0], tracks()[-1]
    table = f"| | {a} | v{b} |\n| --- | --- | --- |\n| x | y | z |\n"
    more = [*tracks(), "9.9.9"]
    assert _tables_missing_a_track(table, more) == [f"1: | | {a} | v{b} | (lacks 9.9.9)"]
    assert _tables_missing_a_track(table, tracks()) == []
    assert _tables_missing_a_track("| a | 9.9.9 |\n| --- | --- |\n", more) == []  # one track named: not a comparison
