"""scripts/add_method.py, as docs/contributors.md shows it, on a throw-away copy of the repository.

As tests/test_add_track.py does for a track: the page's commands (snippets/contributors/add_method.sh,
with a throw-away NAME) run in a copy, whose registry tests must pass; deleting each file the script
wrote, or putting back each file it edited, must fail the registry checks (tests/registry_checks.py,
in this process, on the copy); a refusal is one line and writes nothing, and a failed write puts
every file back.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import registry_checks as checks
from repo_copy import load_script, page_commands, scaffold_in_copy, tree

ROOT = Path(__file__).resolve().parents[1]
SNIPPET = "snippets/contributors/add_method.sh"
PAGE = ROOT / "docs" / "contributors.md"
NAME, LIKE = "scaffold_check", "ngram"

add_method = load_script("add_method")
_PLAN = add_method.MethodPlan(NAME, LIKE)
_PLAN.build()
CREATED = sorted(p.as_posix() for p in _PLAN.changes if not (ROOT / p).exists())
EDITED = sorted(p.as_posix() for p in _PLAN.changes if (ROOT / p).exists())


@pytest.fixture(scope="module")
def scaffolded(tmp_path_factory):
    return scaffold_in_copy(tmp_path_factory.mktemp("clone"), SNIPPET, {"NAME": NAME, "LIKE": LIKE})


def test_the_page_shows_the_snippet_and_the_snippet_the_three_steps():
    assert f'--8<-- "{SNIPPET}"' in PAGE.read_text(encoding="utf-8")
    assigned, commands = page_commands((ROOT / SNIPPET).read_text(encoding="utf-8"))
    assert set(assigned) == {"NAME", "LIKE"}
    assert [c.split()[1] for c in commands] == ["scripts/add_method.py", "-m", "scripts/add_method.py"]
    assert "tests/test_registry.py" in commands[1]


def test_the_pages_commands_scaffold_a_method_whose_registry_tests_pass(scaffolded):
    (_, scaffold), (_, registry_tests), (_, left) = scaffolded.runs
    assert scaffold.returncode == 0, scaffold.stderr
    assert f"Scaffolded method {NAME} from {LIKE}" in scaffold.stdout
    assert "What a person must still decide" in scaffold.stdout
    assert registry_tests.returncode == 0, registry_tests.stdout[-3000:]
    assert re.search(r"\d+ passed", registry_tests.stdout) and " failed" not in registry_tests.stdout
    assert left.returncode == 1 and f"{add_method.METHODS_YAML}:" in left.stdout
    assert scaffolded.created == CREATED
    assert scaffolded.edited == EDITED
    assert checks.problems(scaffolded.root) == []


def test_the_scaffold_has_the_template_a_snippet_per_track_and_the_page():
    assert f"model_repo_templates/llmapi/{NAME}/tensorrt_llm/config.pbtxt" in CREATED
    assert f"model_repo_templates/llmapi/{NAME}/tensorrt_llm/1/model.yaml" in CREATED
    assert f"docs/speculative_decoding/{NAME}.md" in CREATED
    tracks = _PLAN.tracks
    assert tracks and all(f"snippets/llm_api/{t}/{NAME}.yaml" in CREATED for t in tracks)
    assert EDITED == ["mkdocs.yml", "src/specdec_guide/schemas/methods.yaml"]


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
    ([NAME, "--like", LIKE], f"method {NAME} exists already"),
    (["other", "--like", "nope"], "no method 'nope' to start from"),
    (["Bad-Name", "--like", LIKE], "a method id is lower case"),
    (["half", "--like", LIKE], "docs/speculative_decoding/half.md: exists already"),
])
def test_a_refusal_is_one_line_exit_2_and_writes_nothing(scaffolded, monkeypatch, capsys, argv, says):
    monkeypatch.setattr(add_method, "ROOT", scaffolded.root)
    half = scaffolded.root / "docs" / "speculative_decoding" / "half.md"
    half.write_text("# a page written by hand\n")
    try:
        before = tree(scaffolded.root)
        assert add_method.main(argv) == 2
        err = capsys.readouterr().err
        assert says in err and err.count("\n") == 1, err
        assert tree(scaffolded.root) == before
    finally:
        half.unlink()


def test_a_failed_write_puts_back_every_file(scaffolded, monkeypatch, capsys):
    monkeypatch.setattr(add_method, "ROOT", scaffolded.root)
    real, calls = add_method.add_track._write_file, []

    def failing(path, text, mode):
        calls.append(path)
        if len(calls) == 4:
            raise OSError(f"{path}: no space left on device")
        real(path, text, mode)

    monkeypatch.setattr(add_method.add_track, "_write_file", failing)
    before = tree(scaffolded.root)
    dirs = {p for p in scaffolded.root.rglob("*") if p.is_dir()}
    assert add_method.main(["another_one", "--like", "draft_target"]) == 1
    assert "every file put back" in capsys.readouterr().err
    assert len(calls) == 4 and tree(scaffolded.root) == before
    assert {p for p in scaffolded.root.rglob("*") if p.is_dir()} == dirs
