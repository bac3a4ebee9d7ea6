"""No input makes a tool print a traceback: the guide's own files, mutated at random.

Snippets, templates, notebooks, pages and YAML of this repository get byte flips, truncations,
deleted or duplicated lines, broken indentation, stray tabs, quotes and brackets (a fixed seed and a
bounded count, so a failure is reproducible by its index). Each mutant goes through the tools that
read such a file, in process: ``validate`` always; ``doctor`` for LLM-API YAML and model
repositories; ``estimate --config`` for NGram options and ``estimate`` for the prompt log;
``repo render`` for a template. None may raise, and every problem printed must start with
``path:line:col:`` (a UserError's ``specdec-guide CMD:`` prefix aside).
"""

from __future__ import annotations

import random
import re
import shutil
from pathlib import Path

import pytest

from specdec_guide import cli

REPO = Path(__file__).resolve().parents[1]
SEED = 18
COUNT = 150
SOURCES = ("snippets", "model_repo_templates", "notebooks", "docs")
SUFFIXES = {".sh", ".yaml", ".yml", ".py", ".pbtxt", ".md", ".jsonl"}
#: ``path:line:col: ...``; a diagnostic of the whole file says ``:0:0:``.
POSITIONED = re.compile(r"^(specdec-guide [\w-]+(?: [\w-]+)?: )?[^\s:][^:]*:\d+:\d+: \S")
SUMMARY = re.compile(r"^(checked |doctor: \d+ config|rendered |start it: )")


def sources() -> list[Path]:
    out = []
    for top in SOURCES:
        out += [p for p in sorted((REPO / top).rglob("*")) if p.is_file() and p.suffix in SUFFIXES
                and "output" not in p.parts]
    return out


def mutate(data: bytes, rng: random.Random, header: int = 0) -> tuple[str, bytes]:
    """One random change: ``(what, new bytes)``; half of them within the first ``header`` lines."""
    lines = data.split(b"\n")
    n = len(lines)
    i = rng.randrange(max(n, 1)) if not header or rng.random() < 0.5 else rng.randrange(min(header, n))
    kind = rng.choice(["flip", "truncate", "delete", "duplicate", "indent", "dedent", "tab", "quote",
                       "bracket", "swap", "nul", "latin1"])
    if kind == "flip" and data:
        k = rng.randrange(len(data))
        return f"flip byte {k}", data[:k] + bytes([rng.randrange(256)]) + data[k + 1:]
    if kind == "truncate" and data:
        k = rng.randrange(len(data))
        return f"truncate at {k}", data[:k]
    if kind == "delete":
        return f"delete line {i + 1}", b"\n".join(lines[:i] + lines[i + 1:])
    if kind == "duplicate":
        return f"duplicate line {i + 1}", b"\n".join(lines[:i + 1] + lines[i:])
    if kind == "indent":
        return f"indent line {i + 1}", b"\n".join(lines[:i] + [b"   " + lines[i]] + lines[i + 1:])
    if kind == "dedent":
        return f"dedent line {i + 1}", b"\n".join(lines[:i] + [lines[i].lstrip()] + lines[i + 1:])
    if kind == "tab":
        return f"tab in line {i + 1}", b"\n".join(lines[:i] + [b"\t" + lines[i]] + lines[i + 1:])
    if kind == "quote" and lines[i]:
        k = rng.randrange(len(lines[i]) + 1)
        return f"quote in line {i + 1}", b"\n".join(lines[:i] + [lines[i][:k] + rng.choice([b"'", b'"']) + lines[i][k:]]
                                                  + lines[i + 1:])
    if kind == "bracket" and lines[i]:
        k = rng.randrange(len(lines[i]) + 1)
        return f"bracket in line {i + 1}", b"\n".join(lines[:i] + [lines[i][:k] + rng.choice([b"{", b"[", b"}", b":"])
                                                    + lines[i][k:]] + lines[i + 1:])
    if kind == "swap" and n > 1:
        j = rng.randrange(n)
        lines[i], lines[j] = lines[j], lines[i]
        return f"swap lines {i + 1} and {j + 1}", b"\n".join(lines)
    if kind == "nul":
        k = rng.randrange(len(data) + 1)
        return f"NUL at {k}", data[:k] + b"\0" + data[k:]
    k = rng.randrange(len(data) + 1)
    return f"latin-1 byte at {k}", data[:k] + b"\xe9" + data[k:]


def cases() -> list[tuple[str, str, bytes]]:
    rng = random.Random(SEED)
    files = sources()
    out = []
    for n in range(COUNT):
        path = rng.choice(files)
        # a notebook's jupytext header (its first lines, YAML) is a parser of its own: aim there often
        header = 12 if path.parent.name == "notebooks" else 0
        what, data = mutate(path.read_bytes(), rng, header)
        out.append((f"{n}: {path.relative_to(REPO)}: {what}", path.relative_to(REPO).as_posix(), data))
    return out


CASES = cases()


def assert_positioned(output: str, case: str) -> None:
    from specdec_guide.validate.runner import INTERNAL_ERROR

    assert "Traceback" not in output and INTERNAL_ERROR not in output, f"{case}: {output}"
    for line in output.splitlines():
        if not line.strip() or SUMMARY.match(line) or line.startswith((" ", "\t")):
            continue
        assert POSITIONED.match(line), f"{case}: an unpositioned line: {line!r}"


def run_tool(capsys, argv: list[str], case: str) -> None:
    try:
        cli.main(argv)
    except SystemExit as err:  # argparse usage errors exit; anything else is a crash
        assert err.code == 2, case
    out = capsys.readouterr()
    assert_positioned(out.out + "\n" + out.err, f"{case} ({' '.join(argv[:1])})")


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A checkout-shaped folder (pages include from snippets/) to drop one mutant into."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "snippets").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("start", range(0, COUNT, 50), ids=lambda s: f"mutants-{s}-{s + 49}")
def test_mutated_files_never_crash_a_tool(project, capsys, monkeypatch, tiny_models, start):
    from specdec_guide import templates

    target, draft = tiny_models
    for case, rel, data in CASES[start:start + 50]:
        for old in list(project.iterdir()):
            if old.name not in ("pyproject.toml", "snippets"):
                shutil.rmtree(old) if old.is_dir() else old.unlink()
        path = project / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        run_tool(capsys, ["validate", rel], case)
        if path.suffix in (".yaml", ".yml"):
            run_tool(capsys, ["doctor", rel, "--model", str(target)], case)
            run_tool(capsys, ["estimate", str(REPO / "snippets/tools/prompts.jsonl"), "--config", rel,
                              "--tokenizer", str(target)], case)
        if path.suffix == ".jsonl":
            run_tool(capsys, ["estimate", rel, "--tokenizer", str(target)], case)
        parts = Path(rel).parts
        if parts[:2] == ("model_repo_templates", "llmapi") and len(parts) > 3:
            method = parts[2]
            # the whole template, with this one file mutated, as doctor's repository and render's source
            tmpl = project / "templates"
            if tmpl.exists():
                shutil.rmtree(tmpl)
            shutil.copytree(REPO / "model_repo_templates" / "llmapi" / method, tmpl / method)
            (tmpl / Path(*parts[2:])).write_bytes(data)
            run_tool(capsys, ["doctor", str(tmpl / method)], case)
            if method in templates.CPU_REFUSES:
                continue  # render refuses the method on the CPU engine before it reads the template
            monkeypatch.setattr(templates, "templates_root", lambda: tmpl)
            argv = ["repo", "render", "--method", method, "--model", str(target), "--out", "out", "--force"]
            if method == "draft_target":
                argv += ["--draft-model", str(draft)]
            if method == "user_provided":
                argv += ["--drafter", "specdec_guide.drafters.examples:RepeatLastToken"]
            run_tool(capsys, argv, case)
            monkeypatch.undo()
            monkeypatch.chdir(project)


def test_a_notebook_whose_jupytext_header_is_malformed_yaml_is_a_positioned_finding(project, capsys):
    """The input that printed a traceback before: the header's YAML error, at its line and column."""
    src = (REPO / "notebooks").glob("*.py")
    first = next(iter(sorted(src)))
    lines = first.read_text(encoding="utf-8").split("\n")
    at = next(i for i, ln in enumerate(lines) if ln.startswith("#     tier:"))
    lines[at] += ": x"  # "mapping values are not allowed here", at the second colon
    col = lines[at].rindex(": x") + 1
    (project / "notebooks").mkdir()
    (project / "notebooks" / first.name).write_text("\n".join(lines), encoding="utf-8")
    assert cli.main(["validate", f"notebooks/{first.name}"]) == 1
    out = capsys.readouterr()
    assert "Traceback" not in out.out + out.err
    finding = out.out.strip().split("\n")[0]
    assert finding.startswith(f"notebooks/{first.name}:{at + 1}:{col}: the jupytext header is not valid YAML: "
                              "mapping values are not allowed here"), finding


ADVERSARIAL = {
    "deep.yaml": ("speculative_config: " + "[" * 600 + "]" * 600 + "\n", "deep.yaml:1:1: YAML nests too deeply"),
    "loop.yaml": ("speculative_config: &a\n  decoding_type: NGram\n  x: [*a]\n",
                  "loop.yaml:1:21: this anchor's value contains an alias to itself"),
    "laughs.yaml": ("speculative_config:\n  a: &a [x, x, x, x, x, x, x, x, x, x]\n"
                    + "".join(f"  {chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 10)}]\n"
                              for i in range(6)), "laughs.yaml:7:6: its aliases expand to more than"),
    "late_nul.sh": ("echo ok\n" * 2000 + "trtllm-serve m\0\n", "late_nul.sh:2001:15: binary file (a NUL byte)"),
    "deep.py": ("x = " + "(" * 300 + ")" * 300 + "\n", "deep.py:1:"),
}


@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_hostile_files_are_findings_not_crashes_or_hangs(project, capsys, name):
    text, expected = ADVERSARIAL[name]
    (project / name).write_text(text)
    assert cli.main(["validate", name]) == 1
    out = capsys.readouterr()
    assert_positioned(out.out + out.err, name)
    assert out.out.startswith(expected), out.out
