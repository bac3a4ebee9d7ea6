"""Which files the guide verifies, what kind each one is, and which track it declares.

Kinds: ``pbtxt`` (Triton config.pbtxt), ``llm-yaml`` (Triton llmapi ``model.yaml`` or a
trtllm-serve/trtllm-bench ``--extra_llm_api_options``/``--config`` file), ``python`` (a snippet
or a jupytext notebook), ``shell`` and ``page`` (docs/**/*.md). A YAML file is an LLM API file
when it is named ``model.yaml``, its name contains ``llm_api`` / ``llm-api`` /
``extra_llm_api_options``, or it carries the marker comment ``# specdec-guide: llm-api-yaml``.

A file picks its track with a comment ``# specdec-guide: trtllm=1.1.0`` (an id or an alias).
"""

from __future__ import annotations

import re
from pathlib import Path

SNIPPET_ROOTS = ("snippets", "model_repo_templates")
DIRECTIVE_RE = re.compile(r"specdec-guide:\s*trtllm\s*=\s*([\w.\-]+)")
LLM_YAML_MARKER = re.compile(r"^\s*#\s*specdec-guide:\s*llm-api-yaml\b", re.M)
#: ``# specdec-guide: engine=cpu``: a model.yaml written for our CPU reference engine (see llm_yaml).
CPU_ENGINE_MARKER = re.compile(r"^\s*#\s*specdec-guide:\s*engine\s*=\s*cpu\b", re.M)
_LLM_YAML_NAME = re.compile(r"(llm[_-]api|extra[_-]llm[_-]api[_-]options)", re.I)
# Files that describe the snippets rather than being snippets.
NOT_SNIPPETS = {"VERIFIED_BY.yaml", "README.md", ".gitkeep", ".gitignore"}


def find_repo_root(start: Path | None = None) -> Path:
    """The nearest folder (from ``start`` or cwd upwards) holding mkdocs.yml or pyproject.toml."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "mkdocs.yml").is_file() or (folder / "pyproject.toml").is_file():
            return folder
    return here


def skipped(path: Path) -> bool:
    return (path.name in NOT_SNIPPETS or path.name.startswith(".")
            or any(part in ("__pycache__", ".ipynb_checkpoints") for part in path.parts))


def snippet_files(root: Path) -> list[Path]:
    """Everything a page may include or a reader may run: snippets/**, model_repo_templates/**,
    notebooks/*.py (the jupytext sources; the .ipynb is their paired rendering)."""
    out: list[Path] = []
    for top in SNIPPET_ROOTS:
        base = root / top
        if base.is_dir():
            out.extend(p for p in base.rglob("*") if p.is_file() and not skipped(p.relative_to(root)))
    nb = root / "notebooks"
    if nb.is_dir():
        out.extend(p for p in nb.glob("*.py") if p.is_file() and not skipped(p.relative_to(root)))
    return sorted(out)


def page_files(root: Path) -> list[Path]:
    docs = root / "docs"
    return sorted(p for p in docs.rglob("*.md") if p.is_file()) if docs.is_dir() else []


def head_text(path: Path, limit: int = 4096) -> str:
    try:
        with open(path, "rb") as fh:
            return fh.read(limit).decode("utf-8", errors="replace")
    except OSError:
        return ""


def kind_of(path: Path, root: Path | None = None, extra_llm_yaml: set | None = None) -> str | None:
    """The validation kind of ``path``, or None when no validator applies."""
    name = path.name
    suffix = path.suffix.lower()
    if suffix == ".pbtxt":
        return "pbtxt"
    if suffix in (".yaml", ".yml"):
        if name == "model.yaml" or _LLM_YAML_NAME.search(name) or LLM_YAML_MARKER.search(head_text(path)):
            return "llm-yaml"
        if extra_llm_yaml and path.resolve() in extra_llm_yaml:
            return "llm-yaml"
        return None
    if suffix == ".py":
        return "python"
    if suffix in (".sh", ".bash"):
        return "shell"
    if suffix == ".md" and root is not None:
        try:
            rel = path.resolve().relative_to(root.resolve())
        except ValueError:
            return "page"
        return "page" if rel.parts[:1] == ("docs",) else None
    if suffix == ".md":
        return "page"
    return None


def declared_track(text: str) -> str | None:
    m = DIRECTIVE_RE.search(text)
    return m.group(1) if m else None


def is_notebook(path: Path, root: Path | None) -> bool:
    if path.suffix != ".py":
        return False
    if root is not None:
        try:
            return path.resolve().relative_to(root.resolve()).parts[:1] == ("notebooks",)
        except ValueError:
            pass
    return "jupytext" in head_text(path, 2048)
