"""Which files the guide verifies, what kind each one is, and which track it declares.

Kinds: ``pbtxt`` (Triton config.pbtxt), ``llm-yaml`` (Triton llmapi ``model.yaml`` or a
trtllm-serve/trtllm-bench ``--extra_llm_api_options``/``--config`` file), ``python`` (a snippet
or a jupytext notebook), ``shell``, ``page`` (docs/**/*.md of a checkout laid out like this guide,
held to the one-source rule) and ``markdown`` (other pages, or a README named on the command line:
only their shell fences are checked). A ``.yaml``/``.yml`` file is an LLM API file when a shell
snippet passes it to ``--extra_llm_api_options``/``--config``, when it carries the marker
``# specdec-guide: llm-api-yaml`` (for a file whose content says too little), or by its content
(:func:`looks_like_llm_yaml`): a top-level ``speculative_config`` or ``triton_config``, or top-level
keys most of which are LLM-API fields of a recorded track or close misspellings of one. A name like
``model.yaml`` or ``*llm_api*`` lowers that bar but does not decide alone, so this package's own
schema snapshots (``schemas/<track>/llm_api.yaml``), mkdocs.yml and CI workflows are not judged.

A file picks its track with a comment ``# specdec-guide: trtllm=1.1.0`` (an id or an alias). Every
marker is read through :mod:`specdec_guide.markers`.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

import yaml

from specdec_guide import markers

SNIPPET_ROOTS = ("snippets", "model_repo_templates")
_LLM_YAML_NAME = re.compile(r"(llm[_-]api|extra[_-]llm[_-]api[_-]options)", re.I)
# Files that describe the snippets rather than being snippets.
NOT_SNIPPETS = {"VERIFIED_BY.yaml", "PER_TRACK.yaml", "README.md", ".gitkeep", ".gitignore"}


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


def is_guide_root(root: Path) -> bool:
    """A checkout laid out like this guide: pages include their code from snippets/ or templates."""
    return any((root / top).is_dir() for top in SNIPPET_ROOTS)


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


#: Top-level keys that say "this YAML is for the LLM API" on their own.
LLM_YAML_SIGNATURE_KEYS = ("speculative_config", "triton_config")
#: LLM-API fields whose names are too generic to recognise a file by (other YAML uses them too).
_GENERIC_KEYS = {"model", "backend", "tokenizer", "revision", "dtype", "seed"}


def llm_yaml_by_name(name: str) -> bool:
    return name == "model.yaml" or bool(_LLM_YAML_NAME.search(name))


@lru_cache(maxsize=4)
def _llm_api_keys(schema_dir: str) -> frozenset:
    from specdec_guide.releases.tracks import Registry

    keys: set[str] = set()
    try:
        reg = Registry(Path(schema_dir))
    except Exception:  # a missing or broken schema folder: recognise by the signature keys only
        return frozenset()
    for track in reg.tracks:
        if not track.exists:
            continue
        try:
            classes = track.classes()
        except Exception:
            continue
        for cls in ("TorchLlmArgs", "TrtLlmArgs", "BaseLlmArgs"):
            keys.update(str(k) for k in ((classes.get(cls) or {}).get("fields") or {}))
    return frozenset(keys)


def llm_api_keys(registry=None) -> frozenset:
    """Top-level LLM-API field names over every recorded track (for recognising YAML by content)."""
    from specdec_guide.releases.tracks import default_schema_dir

    folder = registry.schema_dir if registry is not None else default_schema_dir()
    return _llm_api_keys(str(Path(folder).resolve()))


_TOP_KEY_LINE = re.compile(r"^([A-Za-z_][\w.\-]*)\s*:(?:\s|$)")


def _top_keys(text: str) -> list[str] | None:
    """The top-level keys of a YAML mapping; for a text that does not parse, the unindented
    ``key:`` lines (so a real options file with a syntax error is still recognised, and reported)."""
    try:
        data = yaml.safe_load(text)
    except (yaml.YAMLError, RecursionError):
        keys = [m.group(1) for m in map(_TOP_KEY_LINE.match, text.split("\n")) if m]
        return keys or None
    if not isinstance(data, dict):
        return None
    return [str(k) for k in data]


def has_top_key(text: str, key: str) -> bool:
    return key in (_top_keys(text) or [])


#: How close an unknown key must be to an LLM-API field to count as its misspelling when recognising
#: a file (a little stricter than the validator's "did you mean" hints).
NEAR_MISS_CUTOFF = 0.8


def _key_evidence(keys: list[str], fields: frozenset) -> tuple[list[str], list[str]]:
    """``(known, near)``: keys that are LLM-API fields, and keys that look like a misspelt one
    (``near`` holds the field each resembles)."""
    import difflib

    known = [k for k in keys if k in fields]
    near = []
    for k in keys:
        if k not in fields:
            close = difflib.get_close_matches(k, sorted(fields), n=1, cutoff=NEAR_MISS_CUTOFF)
            if close:
                near.append(close[0])
    return known, near


def looks_like_llm_yaml(text: str, registry=None, named: bool = False) -> bool:
    """True when a YAML text is LLM-API options by its content.

    A top-level ``speculative_config`` or ``triton_config`` is enough. Otherwise at least half the
    top-level keys must be LLM-API fields of a recorded track or close misspellings of one, and one
    of them specific (``model:`` alone could be anything): so a file with a misspelt key next to a
    real one is still checked, and reported, rather than skipped, while mkdocs.yml, CI workflows,
    docker-compose files or this package's own schema snapshots (no such key) are not. ``named``:
    the file's name already says LLM-API options (``model.yaml``, ``*llm_api*``), so one such key
    is enough, and an empty file counts.
    """
    keys = _top_keys(text)
    if not keys:
        return named
    if any(k in LLM_YAML_SIGNATURE_KEYS for k in keys):
        return True
    fields = llm_api_keys(registry)
    known, near = _key_evidence(keys, fields)
    if named:
        return bool(known or near)
    # A misspelling counts next to a real key (or as the misspelt speculative_config itself): one
    # key that merely resembles a field, alone in some other tool's YAML, proves nothing.
    evidence = (any(k not in _GENERIC_KEYS for k in known) or any(n in LLM_YAML_SIGNATURE_KEYS for n in near)
                or bool(known and any(n not in _GENERIC_KEYS for n in near)))
    return 2 * (len(known) + len(near)) >= len(keys) and evidence


def kind_of(path: Path, root: Path | None = None, extra_llm_yaml: set | None = None,
            registry=None) -> str | None:
    """The validation kind of ``path``, or None when no validator applies."""
    name = path.name
    suffix = path.suffix.lower()
    if suffix == ".pbtxt":
        return "pbtxt"
    if suffix in (".yaml", ".yml"):
        if markers.first(head_text(path), "llm-api-yaml"):
            return "llm-yaml"
        if extra_llm_yaml and path.resolve() in extra_llm_yaml:
            return "llm-yaml"  # a shell snippet passes it to --extra_llm_api_options / --config
        if name in NOT_SNIPPETS:
            return None
        # By content; the name (model.yaml, *llm_api*) only lowers the bar (see looks_like_llm_yaml).
        return "llm-yaml" if looks_like_llm_yaml(head_text(path, 1 << 20), registry,
                                                 named=llm_yaml_by_name(name)) else None
    if suffix == ".py":
        return "python"
    if suffix in (".sh", ".bash"):
        return "shell"
    if suffix == ".md" and root is not None:
        try:
            rel = path.resolve().relative_to(root.resolve())
        except ValueError:
            return "page"
        if rel.parts[:1] != ("docs",):
            return None
        # The one-source rule holds where pages include from snippets/ (this guide, its fixtures);
        # the pages of another project only have their shell commands checked.
        return "page" if is_guide_root(root) else "markdown"
    if suffix == ".md":
        return "page"
    return None


def declared_track(text: str) -> str | None:
    """The track a ``trtllm=`` marker names (a comment line of its own, so a string that holds the
    words, a test's input, does not set the file's track), else None."""
    return markers.value(text, "trtllm")


def is_notebook(path: Path, root: Path | None) -> bool:
    if path.suffix != ".py":
        return False
    if root is not None:
        try:
            return path.resolve().relative_to(root.resolve()).parts[:1] == ("notebooks",)
        except ValueError:
            pass
    return "jupytext" in head_text(path, 2048)
