"""scripts/add_track.py, as docs/contributors.md shows it, on a throw-away copy of the repository.

The copy holds the files git tracks or would track (no venv, no site). The page's commands
(snippets/contributors/add_track.sh, with 9.9.9 for NEW and 1.2.1 for OLD) run there with the copy's
src first on PYTHONPATH, so the copy's code and data are what run: the scaffold must leave a tree whose
registry tests pass and list what is left to decide. Then each file the script wrote is deleted in turn,
and each file it edited put back as it was, and the registry checks (tests/registry_checks.py, run in
this process on the copy) must fail every time. The script refuses bad input in one line and puts back
every file when a write fails.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import registry_checks as checks
from repo_copy import load_script, page_commands, scaffold_in_copy, tree

ROOT = Path(__file__).resolve().parents[1]
SNIPPET = "snippets/contributors/add_track.sh"
PAGE = ROOT / "docs" / "contributors.md"
NEW, OLD = "9.9.9", "1.2.1"

add_track = load_script("add_track")
# What the script will write here, computed without writing (the plan reads this checkout): the
# parameters of the deletion tests below, which the real run in the copy must match.
_PLAN = add_track.Plan(NEW, OLD)
_PLAN.build()
CREATED = sorted(p.as_posix() for p in _PLAN.changes if not (ROOT / p).exists())
EDITED = sorted(p.as_posix() for p in _PLAN.changes if (ROOT / p).exists())


@pytest.fixture(scope="module")
def scaffolded(tmp_path_factory):
    return scaffold_in_copy(tmp_path_factory.mktemp("clone"), SNIPPET, {"NEW": NEW, "OLD": OLD})


def test_the_page_shows_the_snippet_and_the_snippet_the_three_steps():
    assert f'--8<-- "{SNIPPET}"' in PAGE.read_text(encoding="utf-8")
    assigned, commands = page_commands((ROOT / SNIPPET).read_text(encoding="utf-8"))
    assert set(assigned) == {"NEW", "OLD"}
    assert [c.split()[1] for c in commands] == ["scripts/add_track.py", "-m", "scripts/add_track.py"]
    assert "tests/test_registry.py" in commands[1]


def test_the_pages_commands_scaffold_a_track_whose_registry_tests_pass(scaffolded):
    (_, scaffold), (_, registry_tests), (_, left) = scaffolded.runs
    assert scaffold.returncode == 0, scaffold.stderr
    assert f"Scaffolded track {NEW} from {OLD}" in scaffold.stdout
    assert "What a person must still decide" in scaffold.stdout
    assert registry_tests.returncode == 0, registry_tests.stdout[-3000:]
    assert re.search(r"\d+ passed", registry_tests.stdout) and " failed" not in registry_tests.stdout
    # What is left: every mark the script wrote, and tracks.yaml's release facts.
    assert left.returncode == 1
    assert f"{add_track.TRACKS_YAML}:" in left.stdout and "label: \"TODO\"" in left.stdout
    assert f"src/specdec_guide/schemas/{NEW}/llm_api.yaml:1:" in left.stdout
    # The run wrote what the plan says, nothing else; the checks find nothing missing in the copy.
    assert scaffolded.created == CREATED
    assert scaffolded.edited == EDITED
    assert checks.problems(scaffolded.root) == []


def test_the_scaffold_has_every_kind_of_per_track_file():
    """The plan covers the snapshot, the method and quick-start snippets (copied and written from
    templates), the three fixture folders with their expected results."""
    for want in (f"src/specdec_guide/schemas/{NEW}/llm_api.yaml", f"src/specdec_guide/schemas/{NEW}/support.yaml",
                 f"src/specdec_guide/schemas/{NEW}/behaviour/llm_api.yaml", f"snippets/llm_api/{NEW}/ngram.yaml",
                 f"snippets/llm_api/{NEW}/mtp.yaml", f"snippets/quickstart/{NEW}/docker_run.sh",
                 f"tests/fixtures/validate/upstream_shapes/{NEW}/expected.yaml",
                 f"tests/fixtures/validate/precision/{NEW}/model.yaml"):
        assert want in CREATED, want
    assert any(p.startswith(f"tests/fixtures/validate/rules/{NEW}/") for p in CREATED)
    assert {"src/specdec_guide/schemas/tracks.yaml", "snippets/migration/map.yaml", ".github/workflows/gpu.yml"} <= set(EDITED)


@pytest.mark.parametrize("rel", CREATED)
def test_deleting_a_scaffolded_file_fails_the_registry_checks(scaffolded, rel):
    path = scaffolded.root / rel
    data = path.read_bytes()
    path.unlink()
    try:
        assert checks.problems(scaffolded.root), f"{rel} deleted, and the registry checks still pass"
    finally:
        path.write_bytes(data)


@pytest.mark.parametrize("rel", EDITED)
def test_undoing_a_scaffolded_edit_fails_the_registry_checks(scaffolded, rel):
    path = scaffolded.root / rel
    data = path.read_bytes()
    path.write_bytes((ROOT / rel).read_bytes())
    try:
        assert checks.problems(scaffolded.root), f"{rel} put back, and the registry checks still pass"
    finally:
        path.write_bytes(data)


@pytest.mark.parametrize("argv,says", [
    ([NEW, "--from", OLD], f"track {NEW} exists already"),
    (["7.7.7", "--from", "0.0.1"], "no track '0.0.1' to copy from"),
    (["newest", "--from", OLD], "a track id is a release number"),
    (["7.7.7", "--from", OLD], "snippets/llm_api/7.7.7: exists already"),
])
def test_a_refusal_is_one_line_exit_2_and_writes_nothing(scaffolded, monkeypatch, capsys, argv, says):
    monkeypatch.setattr(add_track, "ROOT", scaffolded.root)
    half = scaffolded.root / "snippets" / "llm_api" / "7.7.7"
    half.mkdir()  # a track half added by hand
    try:
        before = tree(scaffolded.root)
        assert add_track.main(argv) == 2
        err = capsys.readouterr().err
        assert says in err and err.count("\n") == 1, err
        assert tree(scaffolded.root) == before
    finally:
        half.rmdir()


def test_a_failed_write_puts_back_every_file(scaffolded, monkeypatch, capsys):
    monkeypatch.setattr(add_track, "ROOT", scaffolded.root)
    real, calls = add_track._write_file, []

    def failing(path, text, mode):
        calls.append(path)
        if len(calls) == 40:
            raise OSError(f"{path}: no space left on device")
        real(path, text, mode)

    monkeypatch.setattr(add_track, "_write_file", failing)
    before = tree(scaffolded.root)
    dirs = {p for p in scaffolded.root.rglob("*") if p.is_dir()}
    assert add_track.main(["8.8.8", "--from", "1.1.0"]) == 1
    assert "every file put back" in capsys.readouterr().err
    assert len(calls) == 40 and tree(scaffolded.root) == before
    assert {p for p in scaffolded.root.rglob("*") if p.is_dir()} == dirs


def test_nothing_scaffolded_is_left_undecided():
    """In this checkout every decision a scaffold left has been made (python scripts/add_track.py --left)."""
    assert add_track.ROOT == ROOT
    left = add_track.left()
    assert not left, "decide these, then delete their marks:\n" + "\n".join(left)
