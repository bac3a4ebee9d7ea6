"""What every track and every method must have, as functions of a repository root.

tests/test_registry.py asserts them on this checkout; tests/test_add_track.py asserts them on a
throw-away copy in which scripts/add_track.py (or add_method.py) scaffolded a new entry, and that
deleting any file the script wrote makes them fail. Each function returns the problems it found, one
line each (empty: nothing missing); none reads the package's own data, only the given root's.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from specdec_guide.releases import methods as _methods
from specdec_guide.releases.tracks import Registry
from specdec_guide.site import track_snippets, version_tables

SCHEMAS = Path("src/specdec_guide/schemas")
FIXTURES = Path("tests/fixtures/validate")
#: Fixture folders with one subfolder per track: "same" = every track holds the same files (the same
#: shapes checked against each release, with each release's expected results), "own" = each track has
#: its own non-empty set (its own rules; every fixture with its twin, see :func:`fixtures`).
PER_TRACK_FIXTURES = {"precision": "same", "upstream_shapes": "same", "rules": "own"}
#: Fixture folders named by track that are not per-track: the small fixture snapshot the tests point
#: SPECDEC_GUIDE_SCHEMA_DIR at (one track is enough to test the loader).
NOT_PER_TRACK = {"schemas"}
#: The files of a track's snapshot folder (behaviour/ holds the same areas on every track).
SNAPSHOT_FILES = ("llm_api.yaml", "cli.yaml", "triton.yaml", "support.yaml")
#: snippets/<folder>/<track>/: the per-track snippet folders.
SNIPPET_FOLDERS = ("llm_api", "quickstart")
GPU_WORKFLOW = Path(".github/workflows/gpu.yml")
MIGRATION_MAP = Path("snippets/migration/map.yaml")
FIELD_NOTES = SCHEMAS / "field_notes"
#: A rule fixture with no failing twin shows that a release does not check what another one does.
LONE_OK_SUFFIX = "-unchecked"
#: What a folder named for a track looks like (a release number).
TRACK_NAME = re.compile(r"\d+(\.\d+)+")


@dataclass
class Repo:
    root: Path
    registry: Registry
    methods: tuple

    @property
    def ids(self) -> list[str]:
        return [t.id for t in self.registry.tracks]


def load(root: Path) -> Repo:
    root = Path(root)
    return Repo(root, Registry(root / SCHEMAS), _methods.load(root / SCHEMAS / "methods.yaml"))


def _files(folder: Path) -> set[str]:
    """The files under ``folder`` (relative, posix), dotfiles left out; os.walk, as the checks run once
    per deleted file in tests/test_add_track.py and pathlib's rglob is several times slower."""
    out = set()
    for here, _dirs, names in os.walk(folder):
        rel = os.path.relpath(here, folder).replace(os.sep, "/")
        out.update(n if rel == "." else f"{rel}/{n}" for n in names if not n.startswith("."))
    return out


def _folders(folder: Path):
    """Every folder under ``folder``, as paths."""
    for here, dirs, _names in os.walk(folder):
        for d in dirs:
            yield Path(here) / d


#: Parsed files by (path, mtime, size): the checks run once per deleted file in tests/test_add_track.py,
#: and the field notes alone are a third of a megabyte of YAML. Callers do not modify what they get.
_PARSED: dict[tuple[str, int, int], object] = {}
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _yaml(path: Path):
    try:
        st = path.stat()
    except OSError:
        return None
    key = (str(path), st.st_mtime_ns, st.st_size)
    if key not in _PARSED:
        _PARSED[key] = yaml.load(path.read_text(encoding="utf-8"), Loader=_LOADER)
    return _PARSED[key]


def method_exists_on(method, track_id: str) -> bool:
    """Whether the method exists on the track (methods.yaml's per-track availability, where recorded)."""
    on = getattr(method, "exists_on", None)
    return on(track_id) if callable(on) else True


# ---- one track ---------------------------------------------------------------------------------
def entry(repo: Repo, tid: str) -> list[str]:
    t = repo.registry.find(tid)
    if t is None:
        return [f"{tid}: not in tracks.yaml"]
    out = []
    for name in ("label", "container", "trtllm_version", "triton_version"):
        if not getattr(t, name):
            out.append(f"{tid}: tracks.yaml entry has no {name}")
    if not (t.docs_pages.get("commit") and t.docs_pages.get("built_from")):
        out.append(f"{tid}: tracks.yaml needs docs_pages (scripts/regen_cli_schema.py reads the release pages there)")
    return out


def snapshot(repo: Repo, tid: str) -> list[str]:
    folder = repo.root / SCHEMAS / tid
    out = [f"{folder.relative_to(repo.root)}/{name} is missing" for name in SNAPSHOT_FILES if not (folder / name).is_file()]
    behaviour, first = folder / "behaviour", repo.root / SCHEMAS / repo.ids[0] / "behaviour"
    if not _files(behaviour):
        out.append(f"{behaviour.relative_to(repo.root)}/ is missing or empty")
    elif _files(behaviour) != _files(first):
        out.append(f"{behaviour.relative_to(repo.root)} and {first.relative_to(repo.root)} record different areas: "
                   f"{sorted(_files(behaviour) ^ _files(first))}")
    return out


def wanted_snippets(repo: Repo, tid: str) -> set[str]:
    """snippets/-relative files the track needs: each method's snippet, every file a page's track-tabs
    marker names, every file written from snippets/PER_TRACK.yaml."""
    wanted = {f"llm_api/{tid}/{m.snippet}" for m in repo.methods if m.snippet and method_exists_on(m, tid)}
    for page in sorted((repo.root / "docs").rglob("*.md")):
        wanted |= {p.replace("{track}", tid) for p in version_tables.marker_paths(page.read_text(encoding="utf-8"))}
    wanted |= {key.replace("{track}", tid) for key in track_snippets.load(repo.root)}
    return wanted


def snippets(repo: Repo, tid: str) -> list[str]:
    wanted = wanted_snippets(repo, tid)
    out = [f"snippets/{w} is missing" for w in sorted(wanted) if not (repo.root / "snippets" / w).is_file()]
    for m in repo.methods:
        path = repo.root / "snippets" / "llm_api" / tid / (m.snippet or "")
        if m.snippet and method_exists_on(m, tid) and path.is_file():
            spec = (_yaml(path) or {}).get("speculative_config") or {}
            if spec.get("decoding_type") != m.spelling(tid):
                out.append(f"{path.relative_to(repo.root)}: decoding_type is not {m.spelling(tid)}")
        elif m.snippet and path.is_file():
            shown = " (a page's track tabs still show it)" if path.relative_to(repo.root / "snippets").as_posix() in wanted else ""
            out.append(f"{path.relative_to(repo.root)}: method {m.id} is not on track {tid} (methods.yaml), so no "
                       f"page may show this file{shown}: remove it or add the track to the method")
    return out


def fixtures(repo: Repo, tid: str) -> list[str]:
    out = []
    for name, kind in PER_TRACK_FIXTURES.items():
        folder, first = repo.root / FIXTURES / name / tid, repo.root / FIXTURES / name / repo.ids[0]
        have = _files(folder)
        rel = folder.relative_to(repo.root)
        if not have:
            out.append(f"{rel} is missing (every track has one)")
        elif kind == "same" and have != _files(first):
            out.append(f"{rel} and {first.relative_to(repo.root)} hold different files: {sorted(have ^ _files(first))}")
        elif kind == "own":
            for f in sorted(have):
                for mine, twin in ((".bad.", ".ok."), (".ok.", ".bad.")):
                    if mine in f and f.replace(mine, twin) not in have and not (
                            mine == ".ok." and f.split(".ok.")[0].endswith(LONE_OK_SUFFIX)):
                        out.append(f"{rel}/{f} has no {twin.strip('.')} twin "
                                   f"(a lone passing fixture is named *{LONE_OK_SUFFIX}.ok.*)")
    return out


def migration_column(repo: Repo, tid: str) -> list[str]:
    data = _yaml(repo.root / MIGRATION_MAP) or {}
    return [f"{MIGRATION_MAP}: row {i} ({row.get('show')!r}) has no column for {tid}"
            for i, row in enumerate(data.get("rows") or []) if not isinstance((row.get("tracks") or {}).get(tid), dict)]


def field_notes(repo: Repo, tid: str) -> list[str]:
    out = []
    for path in sorted((repo.root / FIELD_NOTES).glob("*.yaml")):
        for note in (_yaml(path) or {}).get("notes") or []:
            if tid not in (note.get("on_track") or {}):
                out.append(f"{path.relative_to(repo.root)}: note {note.get('id')} says nothing for {tid} (on_track)")
    return out


def gpu_workflow(repo: Repo) -> list[str]:
    """The GPU workflow's matrix (a workflow cannot read tracks.yaml) has one entry per track container."""
    doc = _yaml(repo.root / GPU_WORKFLOW) or {}
    include = (((doc.get("jobs") or {}).get("run") or {}).get("strategy") or {}).get("matrix", {}).get("include") or []
    images = [e.get("image", "") for e in include]
    out = []
    if sorted(images) != sorted(t.container for t in repo.registry.tracks):
        out.append(f"{GPU_WORKFLOW}: the matrix images {images} are not the tracks' containers")
    for e in include:
        tag = e.get("image", "").rsplit(":", 1)[-1].split("-", 1)[0]
        if e.get("name") != f"triton-{tag}":
            out.append(f"{GPU_WORKFLOW}: matrix entry {e}: name it triton-{tag}")
    return out


def orphans(repo: Repo) -> list[str]:
    """Folders and columns named for a track that tracks.yaml does not list (a track removed or renamed
    in one place only)."""
    ids, out = set(repo.ids), []
    snapshot_folders = [p for p in (repo.root / SCHEMAS).iterdir() if p.is_dir() and (p / "llm_api.yaml").is_file()]
    folders = snapshot_folders + [p for f in SNIPPET_FOLDERS for p in (repo.root / "snippets" / f).iterdir() if p.is_dir()]
    folders += [p for name in PER_TRACK_FIXTURES for p in (repo.root / FIXTURES / name).iterdir() if p.is_dir()]
    out += [f"{p.relative_to(repo.root)}/ is named for a track tracks.yaml does not list" for p in folders
            if TRACK_NAME.fullmatch(p.name) and p.name not in ids]
    seen = {p.parent.relative_to(repo.root / FIXTURES).parts[0]
            for p in _folders(repo.root / FIXTURES) if p.name in ids}
    for name in sorted(seen - NOT_PER_TRACK - set(PER_TRACK_FIXTURES)):
        out.append(f"{FIXTURES / name} has per-track folders: list it in PER_TRACK_FIXTURES (tests/registry_checks.py)")
    templates = {m.template for m in repo.methods}
    for folder in sorted(p for p in (repo.root / "model_repo_templates" / "llmapi").iterdir() if p.is_dir()):
        if folder.name not in templates:
            out.append(f"{folder.relative_to(repo.root)}/ is the template of no method of methods.yaml")
    for m in repo.methods:
        unknown = set(getattr(m, "tracks", ())) - ids
        if unknown:
            out.append(f"{SCHEMAS / 'methods.yaml'}: method {m.id} names tracks tracks.yaml lacks: {sorted(unknown)}")
    data = _yaml(repo.root / MIGRATION_MAP) or {}
    for i, row in enumerate(data.get("rows") or []):
        unknown = set(row.get("tracks") or {}) - ids
        if unknown:
            out.append(f"{MIGRATION_MAP}: row {i} has columns for unknown tracks {sorted(unknown)}")
    return out


def methods_on(repo: Repo, tid: str) -> list[str]:
    """The baseline and a speculative method exist on the track (methods.yaml's per-track ``tracks:``)."""
    on = [m for m in repo.methods if method_exists_on(m, tid)]
    if not any(m.decoding_type is None for m in on) or not any(m.decoding_type for m in on):
        return [f"{SCHEMAS / 'methods.yaml'}: track {tid} needs the baseline and a speculative method in their 'tracks'"]
    return []


TRACK_CHECKS = (entry, snapshot, snippets, fixtures, migration_column, field_notes, methods_on)


def track_problems(repo: Repo, tid: str) -> list[str]:
    return [p for check in TRACK_CHECKS for p in check(repo, tid)]


# ---- one method --------------------------------------------------------------------------------
def nav_pages(repo: Repo) -> set[str]:
    """The docs/-relative pages of mkdocs.yml's nav."""
    def walk(node):
        if isinstance(node, str):
            yield node
        elif isinstance(node, list):
            for item in node:
                yield from walk(item)
        elif isinstance(node, dict):
            for value in node.values():
                yield from walk(value)

    return set(walk((_yaml(repo.root / "mkdocs.yml") or {}).get("nav") or []))


def method_files(repo: Repo, mid: str) -> list[str]:
    """The template, the snippet on every track it exists on, the page that teaches it, spelled right."""
    m = next((m for m in repo.methods if m.id == mid), None)
    if m is None:
        return [f"{mid}: not in methods.yaml"]
    out = []
    folder = repo.root / "model_repo_templates" / "llmapi" / m.template / "tensorrt_llm"
    for name in ("config.pbtxt", "1/model.yaml"):
        if not (folder / name).is_file():
            out.append(f"{(folder / name).relative_to(repo.root)} is missing")
    if (folder / "1" / "model.yaml").is_file():
        spec = (_yaml(folder / "1" / "model.yaml") or {}).get("speculative_config") or {}
        if spec.get("decoding_type") != m.decoding_type and m.decoding_type not in m.decoding_type_by_track.values():
            out.append(f"{(folder / '1' / 'model.yaml').relative_to(repo.root)}: decoding_type is not {m.decoding_type}")
    teaches = repo.root / m.teaches
    if teaches.suffix == ".md" and teaches.is_relative_to(repo.root / "docs") and \
            teaches.relative_to(repo.root / "docs").as_posix() not in nav_pages(repo):
        out.append(f"{mid}: {m.teaches} is not in mkdocs.yml's nav")
    if not teaches.is_file():
        out.append(f"{mid}: {m.teaches} does not exist")
    elif m.decoding_type and m.decoding_type not in teaches.read_text(encoding="utf-8"):
        out.append(f"{m.teaches} never names {m.decoding_type}")
    elif teaches.suffix == ".py" and not (repo.root / "docs/speculative_decoding/notebooks" / teaches.with_suffix(".ipynb").name).exists():
        out.append(f"{mid}: docs/speculative_decoding/notebooks/{teaches.with_suffix('.ipynb').name} is missing")
    for tid in repo.ids:
        if m.decoding_type and method_exists_on(m, tid) and m.spelling(tid) not in repo.registry.resolve(tid).decoding_spellings():
            out.append(f"{mid}: decoding_type {m.spelling(tid)} is not in the {tid} snapshot's SpeculativeConfig")
        path = repo.root / "snippets" / "llm_api" / tid / (m.snippet or "")
        if m.snippet and method_exists_on(m, tid) and not path.is_file():
            out.append(f"{path.relative_to(repo.root)} is missing")
    return out


# ---- everything --------------------------------------------------------------------------------
def problems(root: Path) -> list[str]:
    """Every problem of every track and method of the repository at ``root``."""
    repo = load(root)
    out = gpu_workflow(repo) + orphans(repo)
    for tid in repo.ids:
        out += track_problems(repo, tid)
    for m in repo.methods:
        out += method_files(repo, m.id)
    return out
