"""``make regen`` (specdec_guide.regen) is the one way to refresh stored outputs: its targets, its
command line, the tests that name it, and no second switch left anywhere."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import stored_output

from specdec_guide import regen
from specdec_guide.diagnostics import UserError

ROOT = Path(__file__).resolve().parents[1]
#: Where a regeneration switch could hide: the package, tests, scripts, pages, snippets, build files.
SCANNED = ("src/specdec_guide", "tests", "scripts", "benchmarks", "docs", "snippets", "notebooks", ".github",
           "README.md", "Makefile", "mkdocs.yml", "pyproject.toml")
#: The switches `make regen` replaced, spelled as their users wrote them.
RETIRED = ("SPECDEC_UPDATE_OUTPUTS", "SPECDEC_WRITE_OUTPUTS", "pagewalk write", "--table-only", "table_only",
           "make notebooks", "make outputs", "specdec_guide.notebooks sync", "specdec_guide.notebooks run",
           "containers --write", "container_map --write", "track_snippets --write")


def _text_files():
    for top in SCANNED:
        path = ROOT / top
        for f in [path] if path.is_file() else sorted(path.rglob("*")):
            if f.is_file() and f.suffix in ("", ".py", ".md", ".yaml", ".yml", ".toml", ".sh", ".txt", ".out") \
                    and "__pycache__" not in f.parts and f != Path(__file__).resolve():
                yield f


def test_no_second_way_to_regenerate_is_left():
    found = [f"{f.relative_to(ROOT)}:{n}: {word}" for f in _text_files()
             for n, line in enumerate(f.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
             for word in RETIRED if word in line]
    assert not found, "\n".join(found)


def test_every_regen_command_a_file_names_exists():
    """What a failing test, a message or a page tells a reader to run is a real target (and item)."""
    said = [(f, m) for f in _text_files() for m in re.finditer(r"make regen WHAT=([\w-]+)(?::([\w./-]+))?",
                                                               f.read_text(encoding="utf-8", errors="replace"))]
    assert len(said) >= 10, said
    for f, m in said:
        assert m[1] in regen.TARGETS, f"{f.relative_to(ROOT)}: {m[0]}"
        target = regen.TARGETS[m[1]]
        if m[2] and not m[2].isupper() and target.items:  # PAGE, ITEM: placeholders
            assert m[2].rstrip(".") in target.items(ROOT), f"{f.relative_to(ROOT)}: {m[0]}"


def test_the_listing_names_every_target_and_bad_words_exit_2_before_anything_runs(capsys):
    assert regen.main([]) == 0
    listing = capsys.readouterr().out
    assert all(f"  {name} " in listing for name in regen.TARGETS)
    assert regen.main(["walks", "notebooks:no_such"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("regen: notebooks: no item 'no_such' (known: 01_") and "Traceback" not in err
    assert regen.main(["outputs"]) == 2
    assert "unknown regen target 'outputs' (known: container-map, " in capsys.readouterr().err
    with pytest.raises(UserError, match="this target takes none"):
        regen.plan(["container-map:x"], ROOT)


def test_all_runs_every_target_but_the_new_measurement_in_order():
    steps = regen.plan(["walks", "all", "notebooks:04_ngram"], ROOT)
    assert [t.name for t, _ in steps] == [t for t in regen.TARGETS if t != "benchmarks"]
    assert dict((t.name, items) for t, items in steps)["notebooks"] == ["04_ngram"]
    assert [t.name for t, _ in regen.plan(["benchmarks:real_model"], ROOT)] == ["benchmarks"]


def test_the_contributors_page_and_the_makefile_name_every_target():
    page = (ROOT / "docs/contributors.md").read_text(encoding="utf-8")
    section = page.split("## Stored outputs", 1)[1].split("\n## ", 1)[0]
    assert re.findall(r"^- `([\w-]+)`:", section, re.M) == list(regen.TARGETS)
    for kind in ("scripts/regen_schema.py", "scripts/regen_cli_schema.py", "make test-gpu"):
        assert kind in section  # what is regenerated otherwise, and said so
    assert "$(BIN)/python -m specdec_guide.regen $(or $(WHAT),all)" in (ROOT / "Makefile").read_text()


def test_benchmark_tables_and_the_container_map_are_rewritten_from_their_data(tmp_path):
    shutil.copytree(ROOT / "benchmarks", tmp_path / "benchmarks", ignore=shutil.ignore_patterns("__pycache__"))
    chosen = ["real_model", "served_ngram"]  # verify_cost's table() imports torch: seconds
    for name in regen.BENCHMARK_TABLES:
        (tmp_path / "benchmarks/results" / f"{name}.md").write_text("typed by hand\n")
    assert regen.TARGETS["benchmark-tables"].run(tmp_path, chosen) == [f"benchmarks/results/{n}.md" for n in chosen]
    assert (tmp_path / "benchmarks/results/verify_cost.md").read_text() == "typed by hand\n"  # not chosen
    for name in chosen:
        assert (tmp_path / "benchmarks/results" / f"{name}.md").read_text() == \
            (ROOT / "benchmarks/results" / f"{name}.md").read_text(), name
    (tmp_path / "snippets/versions").mkdir(parents=True)
    assert regen.TARGETS["container-map"].run(tmp_path, []) == ["snippets/versions/container_map.md"]
    assert (tmp_path / "snippets/versions/container_map.md").read_text() == \
        (ROOT / "snippets/versions/container_map.md").read_text()


def test_test_outputs_runs_the_files_that_store_outputs_with_the_one_variable(monkeypatch):
    callers = sorted(f"tests/{f.name}" for f in (ROOT / "tests").glob("test_*.py")
                     if "stored_output.check(" in f.read_text(encoding="utf-8") and f.name != Path(__file__).name)
    assert callers == sorted(regen.OUTPUT_TESTS)
    ran = []
    monkeypatch.setattr(regen.subprocess, "run", lambda cmd, cwd, env: ran.append((cmd, env)) or
                        subprocess.CompletedProcess(cmd, 0))
    regen.TARGETS["test-outputs"].run(ROOT, ["tests/test_quickstart.py"])
    (cmd, env), = ran
    assert cmd[:3] == [sys.executable, "-m", "pytest"] and cmd[-1] == "tests/test_quickstart.py"
    assert env[regen.REGEN_ENV] == "test-outputs"


def test_a_stored_output_is_compared_unless_regen_runs_the_test(tmp_path, monkeypatch):
    path = tmp_path / "out.txt"
    path.write_text("old\n")
    monkeypatch.delenv(regen.REGEN_ENV, raising=False)
    with pytest.raises(AssertionError, match=r"differs from a fresh run: make regen WHAT=test-outputs:tests/test_regen\.py"):
        stored_output.check(path, "new\n")
    stored_output.check(path, "NEW\n", same=lambda fresh, stored: fresh.lower() == stored.lower().replace("old", "new"))
    assert path.read_text() == "old\n"
    monkeypatch.setenv(regen.REGEN_ENV, "walks,test-outputs")
    stored_output.check(path, "new\n")
    assert path.read_text() == "new\n"
