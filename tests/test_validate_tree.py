"""``specdec-guide validate .`` on real trees: this repository's root, and a reader's plain project.

A folder is walked as git sees it (no ``.git``, no virtual environment, nothing .gitignore'd, nothing
the project's ``[tool.specdec-guide.validate] exclude`` names), and a YAML file is judged as LLM-API
options only when its content says so: a CI workflow, mkdocs.yml or docker-compose.yml is not, while
a misspelt key next to real ones still is.
"""

from __future__ import annotations

import shutil
import subprocess
import venv
from pathlib import Path

import pytest

from specdec_guide import cli
from specdec_guide.validate import kinds, walk
from specdec_guide.validate.runner import validate_paths
from specdec_guide.validate.verified import verifier

REPO = Path(__file__).resolve().parents[1]

BROKEN_YAML = "speculative_config:\n  decoding_type: NGram\n  max_draft_len: zero\n"
OPTIONS = ("# what trtllm-serve reads with --extra_llm_api_options\n"
           "disable_overlap_scheduler: true\n"
           "speculative_config:\n"
           "  decoding_type: NGram\n"
           "  max_draft_len: 4\n"
           "  max_matching_ngram_size: 2\n")
WORKFLOW = ("name: ci\non:\n  push:\n    branches: [main]\npermissions:\n  contents: read\njobs:\n  test:\n"
            "    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n      - run: make test\n")
MKDOCS = "site_name: My serving notes\nnav:\n  - index.md\ntheme:\n  name: material\nplugins: [search]\n"
COMPOSE = ("services:\n  triton:\n    image: nvcr.io/nvidia/tritonserver:25.12-trtllm-python-py3\n"
           "    command: tritonserver --model-repository /models\nvolumes:\n  models: {}\n")


def test_this_repository_validates_clean_at_its_root():
    """`validate .` here: .venv (a folder or a link), .git and tests/fixtures (pyproject's exclude) are
    left out; this package's schema snapshots, mkdocs.yml and the workflows are not judged as options."""
    report = validate_paths([REPO], root=REPO, is_verified=verifier(REPO))
    assert [str(d) for d in report.diagnostics] == []
    assert report.ok
    seen = {p.path.resolve().relative_to(REPO).as_posix() for p in report.results}
    assert len(seen) > 100  # snippets, templates, notebooks, pages, the package's own Python
    assert not any(s.startswith((".venv", ".git/", "tests/fixtures/")) for s in seen)
    assert "snippets/llm_api/1.1.0/ngram.yaml" in seen and "docs/index.md" in seen
    assert not any(s.startswith("src/specdec_guide/schemas/") and s.endswith(".yaml") for s in seen)
    assert "mkdocs.yml" not in seen and ".github/workflows/cpu.yml" not in seen
    assert walk.project_excludes(REPO) == (["tests/fixtures"], [])
    # under the root too (`cd tests && specdec-guide validate .`): the root's setting applies
    below = validate_paths([REPO / "tests"], root=REPO, is_verified=verifier(REPO))
    assert below.ok and not any("fixtures" in r.path.parts for r in below.results)


def make_project(root: Path, git: bool) -> Path:
    """A reader's serving project: a virtual environment, a CI workflow, an mkdocs site, a compose file,
    a launch script and the extra-options YAML it passes to trtllm-serve."""
    root.mkdir()
    (root / "pyproject.toml").write_text("[project]\nname = 'serving'\nversion = '0'\n")
    venv.create(root / ".venv", with_pip=False)
    venv.create(root / "py311", with_pip=False)  # a name no list knows: its pyvenv.cfg says what it is
    (root / "linked-env").symlink_to(root / "py311", target_is_directory=True)
    for env in (root / ".venv", root / "py311"):
        site = env / "lib" / "site-packages"
        site.mkdir(parents=True, exist_ok=True)
        (site / "broken.py").write_text("def f(:\n")
        (site / "model.yaml").write_text(BROKEN_YAML)
    (root / ".github" / "workflows").mkdir(parents=True)
    (root / ".github" / "workflows" / "ci.yml").write_text(WORKFLOW)
    (root / "mkdocs.yml").write_text(MKDOCS)
    (root / "docs").mkdir()
    (root / "docs" / "index.md").write_text(  # not laid out like the guide: only its commands are read
        "# Notes\n\n```console\n$ trtllm-serve ./ckpt --extra_llm_api_options config/options.yaml\n"
        "[TRT-LLM] [I] Soyer's model is loading\n```\n\n```yaml\nsite: not an option\n```\n")
    (root / "docker-compose.yml").write_text(COMPOSE)
    (root / "config").mkdir()
    (root / "config" / "options.yaml").write_text(OPTIONS)
    (root / "serve.sh").write_text("#!/bin/sh\ntrtllm-serve ./ckpt --port 8000 "
                                   "--extra_llm_api_options config/options.yaml\n")
    (root / "out").mkdir()
    (root / "out" / "model.yaml").write_text(BROKEN_YAML)  # .gitignore'd
    (root / ".gitignore").write_text("# generated\n/out/\n*.log\n")
    (root / "run.log").write_text("not text a checker reads\n")
    if git:
        subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def validate_here(folder: Path, capsys, monkeypatch, *args: str) -> tuple[int, list[str], str]:
    monkeypatch.chdir(folder)
    code = cli.main(["validate", *args])
    out = capsys.readouterr()
    return code, out.out.strip().split("\n"), out.err


@pytest.mark.parametrize("git", [True, False], ids=["git-work-tree", "no-git"])
def test_a_plain_project_passes_and_a_typo_in_its_options_yaml_is_found(tmp_path, capsys, monkeypatch, git):
    if git and not shutil.which("git"):
        pytest.skip("git is not installed: the work-tree variant needs it (the other variant reads .gitignore)")
    root = make_project(tmp_path / "serving", git)
    code, out, err = validate_here(root, capsys, monkeypatch, ".")
    assert code == 0, out + [err]
    assert out[-1].startswith("checked 3 files (2 snippets, 1 fenced blocks in 1 pages) against TRT-LLM"), out
    assert out[-1].endswith("no problems")

    # The same file, misspelt next to its real keys: reported at the key.
    (root / "config" / "options.yaml").write_text(OPTIONS.replace("overlap_scheduler", "overlap_schedular"))
    code, out, err = validate_here(root, capsys, monkeypatch, ".")
    assert code == 1
    assert out[0].startswith("config/options.yaml:2:1: unknown key 'disable_overlap_schedular'"), out
    assert len(out) == 1 and err.strip().endswith(": 1 problem")


def test_an_options_yaml_no_script_names_is_recognised_by_its_keys(tmp_path, capsys, monkeypatch):
    root = make_project(tmp_path / "serving", git=False)
    (root / "serve.sh").unlink()
    (root / "config" / "options.yaml").write_text("disable_overlap_scheduler: true\nkv_cache_config:\n"
                                                  "  enable_block_reuse: false\nmax_batchsize: 8\n")
    code, out, _ = validate_here(root, capsys, monkeypatch, ".")
    assert code == 1
    assert out[0].startswith("config/options.yaml:4:1: unknown key 'max_batchsize'"), out


def test_the_project_exclude_setting_and_naming_an_excluded_folder(tmp_path, capsys, monkeypatch):
    root = make_project(tmp_path / "serving", git=False)
    (root / "pyproject.toml").write_text('[tool.specdec-guide.validate]\nexclude = ["examples/broken*"]\n')
    (root / "examples" / "broken_on_purpose").mkdir(parents=True)
    (root / "examples" / "broken_on_purpose" / "model.yaml").write_text(BROKEN_YAML)
    code, out, _ = validate_here(root, capsys, monkeypatch, ".")
    assert code == 0, out
    code, out, _ = validate_here(root, capsys, monkeypatch, "examples/broken_on_purpose")
    assert code == 1 and "examples/broken_on_purpose/model.yaml:3:18: 'speculative_config.max_draft_len' must be " \
        "int | null, got 'zero'" in out, out

    (root / "pyproject.toml").write_text("[tool.specdec-guide.validate]\nexclude = 'examples'\n")
    code, out, _ = validate_here(root, capsys, monkeypatch, ".")
    assert code == 1
    assert "pyproject.toml:2:1: [tool.specdec-guide.validate] exclude must be a list of path patterns (strings)" in out
    (root / "pyproject.toml").write_text("[tool.specdec-guide.validate\nexclude = []\n")
    code, out, _ = validate_here(root, capsys, monkeypatch, ".")
    toml = [line for line in out if line.startswith("pyproject.toml:")]
    assert code == 1 and len(toml) == 1 and toml[0].startswith("pyproject.toml:1:") and "TOML syntax error" in toml[0]


@pytest.mark.parametrize("text, named, expected", [
    (WORKFLOW, False, False),
    (MKDOCS, False, False),
    (COMPOSE, False, False),
    ("repos:\n  - repo: local\n    hooks: []\n", False, False),  # a pre-commit config
    ("model: ./ckpt\nbackend: pytorch\n", False, False),  # generic keys alone could be anything
    (OPTIONS, False, True),
    ("model: ./ckpt\nmax_batchsize: 8\nmax_num_tokens: 512\n", False, True),  # a typo next to real keys
    ("max_batchsize: 8\n", False, False),  # one misspelling on its own proves nothing...
    ("speculative_confg:\n  decoding_type: NGram\n", False, True),  # ...unless it is the speculative_config
    ("max_batchsize: 8\n", True, True),  # ...but in a file named like options it is one
    ("disable_overlap_scheduler: true\nspeculative_config: [\n", False, True),  # a syntax error in a real one
    ("", True, True),
])
def test_llm_yaml_is_recognised_by_content(text, named, expected):
    assert kinds.looks_like_llm_yaml(text, named=named) is expected


def test_schema_snapshots_are_not_judged_as_options_despite_their_name():
    schemas = REPO / "src" / "specdec_guide" / "schemas"
    snapshots = sorted(schemas.glob("*/llm_api.yaml"))
    assert snapshots and all(kinds.kind_of(p, REPO) is None for p in snapshots)
    assert kinds.kind_of(REPO / "model_repo_templates/llmapi/ngram/tensorrt_llm/1/model.yaml", REPO) == "llm-yaml"


def test_gitignore_patterns_without_git():
    rules = walk.GitignoreRules()
    rules.add("", ["# comment", "*.log", "/build/", "docs/**/draft-*.md", "!keep.log", "cache/"])
    rules.add("sub", ["local.yaml"])
    assert rules.matches("a/b/run.log", False) and not rules.matches("a/keep.log", False)
    assert rules.matches("build", True) and not rules.matches("build", False) and not rules.matches("x/build", True)
    assert rules.matches("docs/a/b/draft-1.md", False) and rules.matches("docs/draft-2.md", False)
    assert rules.matches("deep/cache", True) and not rules.matches("deep/cache", False)
    assert rules.matches("sub/x/local.yaml", False) and not rules.matches("other/local.yaml", False)
