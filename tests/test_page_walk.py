"""The reader's path: each page's shell snippets, in page order, in one fresh shell (no venv active).

`specdec_guide.pagewalk` does the walking; here every page with runnable commands is walked and
what each command prints is compared with the output the page shows (stored by
`make regen WHAT=walks`), by shape: keys, value types and line forms, not the
values that change from run to run. Each page is walked once per session (the `walked_page`
fixture of tests/conftest.py); tests/test_tools_pages.py checks the values on the same walks.
"""

from __future__ import annotations

import fnmatch
import re
import sys
from pathlib import Path

import pytest

from specdec_guide import coverage, pagewalk
from specdec_guide.diagnostics import UserError
from specdec_guide.regen import hint

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def _pages_with_shell_steps() -> set[str]:
    return {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md") if pagewalk.page_steps(p, ROOT)}


def test_every_page_with_shell_commands_is_walked_or_says_why_not():
    pages = _pages_with_shell_steps()
    assert set(pagewalk.WALKED_PAGES) <= pages
    unaccounted = pages - set(pagewalk.WALKED_PAGES) - set(pagewalk.NOT_WALKED)
    assert not unaccounted, f"pages with shell snippets that no walk covers: {sorted(unaccounted)}"
    # An excuse only for a page whose commands cannot run here (a GPU, the container) and are
    # checked statically against the release's snapshot instead (trtllm-serve, the container's
    # launcher and fill_template.py), or that a test runs in another way (named in
    # snippets/VERIFIED_BY.yaml).
    registered = [e.pattern for e in coverage.load_registry(ROOT)[0]]
    verifier = coverage.verifier(ROOT)
    for page in pagewalk.NOT_WALKED:
        for step in pagewalk.page_steps(DOCS / page, ROOT):
            assert verifier.schema_check(ROOT / step.snippet) or any(
                fnmatch.fnmatchcase(step.snippet, pattern) for pattern in registered), (
                f"docs/{page}:{step.line}: {step.snippet} is neither walked, nor checked against a snapshot, "
                "nor executed by a registered test")


def _walk_params() -> list:
    """Each walked page; one that starts a server (a background step) is marked `triton`."""
    return [pytest.param(page, marks=[pytest.mark.triton] if any(s.background for s in pagewalk.page_steps(DOCS / page, ROOT)) else [])
            for page in pagewalk.WALKED_PAGES]


@pytest.mark.timeout(1800)
@pytest.mark.parametrize("page", _walk_params())
def test_page_walk(page, walked_page):
    result, clone = walked_page(page)
    print(f"{page}: {len(result.steps)} steps in {result.seconds:.0f}s")
    for step, fresh in zip(result.steps, result.outputs):
        if step.output is None:
            # A command that prints something must show it on the page.
            assert not fresh.strip(), f"docs/{page}:{step.line}: {step.snippet} prints output the page does not show:\n{fresh}"
            continue
        stored = (ROOT / step.output).read_text()
        assert pagewalk.shape(stored) == pagewalk.shape(fresh), (
            f"docs/{page}:{step.line}: {step.output} no longer matches a fresh run "
            f"(regenerate: {hint('walks', page)}):\n--- stored\n{stored}\n--- fresh\n{fresh}")
    for made, shown in pagewalk.SHOWN_FILES.get(page, ()):  # a file the page shows, as its commands write it
        assert (ROOT / shown).is_file(), f"{shown} is missing (regenerate: {hint('walks', page)})"
        assert (clone / made).is_file(), f"docs/{page}: the walk did not write {made}, which the page shows as {shown}"
        assert (clone / made).read_bytes()[:8] == (ROOT / shown).read_bytes()[:8], f"{made}: not the kind of file {shown} is"


# -- the walker itself ---------------------------------------------------------------------------
def _fake_root(tmp_path: Path, steps: dict[str, str], page: str) -> Path:
    root = tmp_path / "root"
    (root / "docs").mkdir(parents=True)
    (root / "snippets").mkdir()
    for name, text in steps.items():
        (root / "snippets" / name).write_text(text)
    (root / "docs/page.md").write_text(page)
    return root


def test_walk_runs_in_order_in_one_shell_and_stops_at_the_first_failure(tmp_path):
    root = _fake_root(tmp_path, {"a.sh": "mkdir -p work && cd work\nexport GREETING=hi\n", "b.sh": "echo $GREETING from $(basename $PWD)\n",
                                 "c.sh": "false\necho after the failure\n", "d.sh": "touch ../never\n"}, "\n".join(
        f"```bash\n--8<-- \"snippets/{n}.sh\"\n```\n" for n in "abcd"))
    with pytest.raises(UserError) as err:
        pagewalk.walk("page.md", root=root, workdir=tmp_path / "w")
    assert str(err.value).startswith("docs/page.md:10: snippets/c.sh failed (exit 1)")
    assert "after the failure" not in str(err.value)
    assert (tmp_path / "w/state/1.out").read_text() == "hi from work\n"
    assert not (tmp_path / "w/clone/never").exists()


def test_walk_starts_without_the_venv_and_the_page_must_activate_it(tmp_path):
    venv_bin = str(Path(sys.prefix) / "bin")
    root = _fake_root(tmp_path, {"probe.sh": "command -v specdec-guide || echo 'not on PATH'\n",
                                 "activate.sh": "source .venv/bin/activate\ncommand -v specdec-guide\n"},
                      '```bash\n--8<-- "snippets/probe.sh"\n```\n\n```bash\n--8<-- "snippets/activate.sh"\n```\n'
                      '```text title="prints"\n--8<-- "snippets/activate.out"\n```\n')
    result = pagewalk.walk("page.md", root=root, workdir=tmp_path / "w")
    assert result.outputs[0] == "not on PATH\n"
    assert result.outputs[1].strip().endswith("/bin/specdec-guide")
    assert result.steps[1].output == "snippets/activate.out" and result.steps[0].output is None
    assert venv_bin not in pagewalk._env({}).get("PATH", "").split(":")


def test_a_server_block_runs_in_the_background_and_is_stopped(tmp_path):
    server = f"python3 -c 'import time; print(\"{pagewalk.READY}\", flush=True); time.sleep(600)' &\nwait\n"
    root = _fake_root(tmp_path, {"serve.sh": server, "after.sh": "echo next\n"},
                      '```bash title="Terminal 1 (keeps running)"\n--8<-- "snippets/serve.sh"\n```\n'
                      '```bash\n--8<-- "snippets/after.sh"\n```\n')
    steps = pagewalk.page_steps(root / "docs/page.md", root)
    assert [s.background for s in steps] == [True, False]
    result = pagewalk.walk("page.md", root=root, workdir=tmp_path / "w")
    assert result.outputs[1] == "next\n" and result.seconds < 60


def test_shape_ignores_values_but_not_keys_types_or_line_forms():
    stored = 'data: {"text_output": "ab", "n": "1"}\n\ndata: {"text_output": "abc", "n": "2"}\nready in …s\n'
    assert pagewalk.shape(stored) == pagewalk.shape('data: {"text_output": "xyz", "n": "7"}\nready in …s\n')
    assert pagewalk.shape(stored) != pagewalk.shape('data: {"text_output": "xyz", "n": 7}\nready in …s\n')
    assert pagewalk.shape(stored) != pagewalk.shape('data: {"text": "xyz", "n": "7"}\nready in …s\n')
    assert pagewalk.shape("total_draft_tokens: 12\n") == pagewalk.shape("total_draft_tokens: 3\n")
    assert pagewalk.shape("total_draft_tokens: 12\n") != pagewalk.shape("total_draft_tokens: twelve\n")


def test_mask_puts_back_default_ports_and_hides_timings(tmp_path):
    ports = {"TRITON_HTTP_PORT": 41001, "TRITON_GRPC_PORT": 41002, "TRITON_METRICS_PORT": 41003}
    text = (f"tritonserver ready in 7.4s (repository {tmp_path}/scratch/repo)\n  HTTP     http://127.0.0.1:41001\n"
            f'  log      /tmp/specdec-triton-specdec123x0a1b2c3d_/server.log\n{{"arrival_time_ns":"1732999"}}\n')
    masked = pagewalk.mask(text, ports, tmp_path)
    assert masked == ("tritonserver ready in …s (repository ~/guide/scratch/repo)\n  HTTP     http://127.0.0.1:8000\n"
                      '  log      /tmp/specdec-triton-…/server.log\n{"arrival_time_ns":"…"}\n')
    assert not re.search(r"4100\d", masked)
