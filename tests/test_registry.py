"""Every track of schemas/tracks.yaml and every method of schemas/methods.yaml has what the guide needs.

A track: its snapshot, its snippets, its per-track fixtures, its GPU workflow entry, its migration
column and its tab on every per-track block of every page (the quick start's, the versions page's). A method: its template, its snippet on every track, the
page or notebook that teaches it, a decoding_type every track's snapshot accepts, and its CPU-engine
flag honoured by the CPU engine and by ``repo render``. How to add either: docs/contributors.md.
"""

from __future__ import annotations

from pathlib import Path

import jupytext
import pytest
import yaml

from specdec_guide.releases import methods as methods_registry
from specdec_guide import migration, templates
from specdec_guide.diagnostics import UserError
from specdec_guide.engine import config as engine_config
from specdec_guide.site import version_tables
from registry import SCHEMA_DIR, methods, registry, tracks

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "validate"
#: Fixture folders with one subfolder per track: "same" = every track holds the same files (the same
#: shapes checked against each release), "own" = each track has its own non-empty set (its own rules).
PER_TRACK_FIXTURES = {"precision": "same", "upstream_shapes": "same", "rules": "own"}
#: Fixture folders named by track that are not per-track: the small fixture snapshot the tests point
#: SPECDEC_GUIDE_SCHEMA_DIR at (one track is enough to test the loader).
NOT_PER_TRACK = {"schemas"}
VERSIONS_PAGE = ROOT / "docs" / "speculative_decoding" / "versions.md"
PAGES = sorted((ROOT / "docs").rglob("*.md"))
GPU_WORKFLOW = ROOT / ".github" / "workflows" / "gpu.yml"


def _files(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()}


def _spec(path: Path) -> dict:
    doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    return doc.get("speculative_config") or {}


# ---- tracks ------------------------------------------------------------------------------------
@pytest.mark.parametrize("track", tracks())
def test_track_has_its_snapshot(track):
    t = registry().resolve(track)
    for part in ("llm_api", "cli", "triton"):
        assert t.has_part(part), f"{t.folder}/{part}.yaml is missing"
    assert (t.folder / "behaviour").is_dir(), f"{t.folder}/behaviour/ is missing"
    assert t.container and t.trtllm_version and t.triton_version, f"{track}: tracks.yaml entry is incomplete"
    assert t.docs_pages.get("commit") and t.docs_pages.get("built_from"), \
        f"{track}: tracks.yaml needs docs_pages (scripts/regen_cli_schema.py reads the release pages there)"


@pytest.mark.parametrize("track", tracks())
def test_track_has_a_snippet_for_every_method_and_every_tab_of_the_pages(track):
    """The method snippets, and every file a page's track-tabs marker names (the quick start's steps,
    the versions page's blocks): a track without one would silently lose its tab."""
    wanted = {f"llm_api/{track}/{m.snippet}" for m in methods_registry.load() if m.snippet}
    for page in PAGES:
        wanted |= {path.replace("{track}", track) for path in version_tables.marker_paths(page.read_text(encoding="utf-8"))}
    assert any(w.startswith("quickstart/") for w in wanted)  # the markers were read
    missing = sorted(w for w in wanted if not (ROOT / "snippets" / w).is_file())
    assert not missing, f"track {track}: snippets/ lacks {missing}"


@pytest.mark.parametrize("track", tracks())
def test_method_snippets_use_the_track_spelling(track):
    for m in methods_registry.load():
        if m.snippet:
            path = ROOT / "snippets" / "llm_api" / track / m.snippet
            assert _spec(path).get("decoding_type") == m.spelling(track), f"{path}: not {m.spelling(track)}"


@pytest.mark.parametrize("track", tracks())
def test_track_has_its_per_track_fixtures(track):
    for name, kind in PER_TRACK_FIXTURES.items():
        folder = FIXTURES / name / track
        assert folder.is_dir() and _files(folder), f"{folder} is missing (every track has one)"
        if kind == "same":
            first = FIXTURES / name / tracks()[0]
            assert _files(folder) == _files(first), f"{folder} and {first} hold different files"


def test_every_fixture_folder_named_by_track_is_known():
    """A new fixture folder with per-track subfolders is listed above, so a new track must fill it."""
    ids = set(tracks())
    seen = {p.parent.relative_to(FIXTURES).parts[0] for p in FIXTURES.rglob("*") if p.is_dir() and p.name in ids}
    assert seen - NOT_PER_TRACK <= set(PER_TRACK_FIXTURES), sorted(seen - NOT_PER_TRACK - set(PER_TRACK_FIXTURES))


def test_gpu_workflow_runs_every_track_container():
    """The GPU workflow's matrix (a workflow cannot read tracks.yaml) has one entry per track."""
    doc = yaml.safe_load(GPU_WORKFLOW.read_text(encoding="utf-8"))
    include = doc["jobs"]["run"]["strategy"]["matrix"]["include"]
    images = [e["image"] for e in include]
    assert sorted(images) == sorted(t.container for t in registry().tracks), \
        f"{GPU_WORKFLOW.relative_to(ROOT)}: the matrix images {images} are not the tracks' containers"
    for e in include:
        tag = e["image"].rsplit(":", 1)[1].split("-", 1)[0]
        assert e["name"] == f"triton-{tag}", f"matrix entry {e}: name it triton-{tag}"


@pytest.mark.parametrize("track", tracks())
def test_migration_map_has_a_column_per_track(track):
    assert track in migration.TRACKS and track in migration.TAB_LABELS
    rows, problems = migration.load(ROOT)
    assert not problems and rows
    for row in rows:
        assert isinstance(row.tracks.get(track), dict), f"{migration.MAP_PATH}:{row.line}: no entry for {track}"
        unknown = set(row.tracks) - set(tracks())
        assert not unknown, f"{migration.MAP_PATH}:{row.line}: columns for unknown tracks {sorted(unknown)}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT / "docs")))
def test_no_page_types_a_per_track_tab(page):
    """Per-track tabs come from markers, titled Track.tab_label: typed ones drift from the registry,
    and one whose title differs from the others does not switch with them (linked tabs)."""
    ids = tracks()
    typed = [f"{page.name}:{n}: {ln.strip()}" for n, ln in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
             if ln.lstrip().startswith('=== "') and any(i in ln for i in ids)]
    assert not typed, f"per-track tabs typed into the page (use <!-- specdec-guide: track-tabs LANG PATH -->): {typed}"


def test_versions_page_tabs_and_table_are_the_registry():
    page = VERSIONS_PAGE.read_text(encoding="utf-8")
    assert version_tables.TRACKS_MARKER in page
    markers = list(version_tables.TABS_RE.finditer(page))
    assert len(markers) >= 5
    text = version_tables.expand(page, registry(), ROOT)
    for t in registry().tracks:
        assert text.count(f'=== "{t.tab_label}"') == len(markers), t.id
        assert f"| {t.id} | {t.trtllm_version} | `{t.container}`" in text or \
            f"| {t.id} (newest stable) | {t.trtllm_version} | `{t.container}`" in text, t.id
    for m in markers:
        assert f'snippets/{m["path"].replace("{track}", tracks()[0])}' in text


def test_track_tabs_show_each_track_that_has_the_file(tmp_path):
    """A tab per track holding the file, in tracks.yaml's order; a track without it gets none (the
    snippet test above is what fails then)."""
    first, *rest = tracks()
    (tmp_path / "snippets/llm_api" / first).mkdir(parents=True)
    (tmp_path / "snippets/llm_api" / first / "x.yaml").write_text("a: 1\n")
    text = version_tables.track_tabs("yaml", "llm_api/{track}/x.yaml", tmp_path, registry())
    assert text.count("=== ") == 1 and f'--8<-- "snippets/llm_api/{first}/x.yaml"' in text
    for t in rest:
        (tmp_path / "snippets/llm_api" / t).mkdir(parents=True)
        (tmp_path / "snippets/llm_api" / t / "x.yaml").write_text("a: 1\n")
    text = version_tables.track_tabs("yaml", "llm_api/{track}/x.yaml", tmp_path, registry())
    assert [ln for ln in text.splitlines() if ln.startswith("=== ")] == \
        [f'=== "{t.tab_label}"' for t in registry().tracks]
    # Indented (inside another tab): every line of the tabs moves with the marker.
    nested = version_tables.expand("=== \"A\"\n\n    <!-- specdec-guide: track-tabs yaml llm_api/{track}/x.yaml -->\n",
                                   registry(), tmp_path)
    assert [ln for ln in nested.splitlines() if "=== " in ln][1:] == [f'    === "{t.tab_label}"' for t in registry().tracks]
    assert all(ln.startswith("        ") for ln in nested.splitlines() if "--8<--" in ln or "```" in ln)


@pytest.mark.parametrize("path", sorted((ROOT / "notebooks").glob("[0-9]*.py")), ids=lambda p: p.name)
def test_a_gpu_notebook_header_names_only_its_track(path):
    """Its container and TensorRT-LLM version are its track's (specdec_guide.notebooks.track_meta)."""
    from specdec_guide.notebooks import read_meta

    raw = jupytext.read(path).metadata.get("specdec_guide") or {}
    if raw.get("tier") != "gpu":
        return
    assert raw.get("track") in tracks(), f"{path.name}: specdec_guide.track {raw.get('track')!r} is not a track id"
    assert not {"container", "trtllm_version"} & set(raw), f"{path.name}: a second copy of the track's data"
    t = registry().resolve(raw["track"])
    assert read_meta(path)["container"] == t.container and read_meta(path)["trtllm_version"] == t.trtllm_version


# ---- methods -----------------------------------------------------------------------------------
@pytest.mark.parametrize("method", methods())
def test_method_has_its_template(method):
    m = methods_registry.get(method)
    folder = templates.template_dir(method)
    assert (folder / "config.pbtxt").is_file() and (folder / "1" / "model.yaml").is_file(), folder
    assert _spec(folder / "1" / "model.yaml").get("decoding_type") == m.spelling(templates.TRACK), folder


@pytest.mark.parametrize("method", methods())
def test_method_has_the_page_that_teaches_it(method):
    m = methods_registry.get(method)
    path = ROOT / m.teaches
    assert path.is_file(), f"{method}: {m.teaches} does not exist"
    if m.decoding_type:
        assert m.decoding_type in path.read_text(encoding="utf-8"), f"{m.teaches} never names {m.decoding_type}"
    if path.suffix == ".py":
        assert (ROOT / "docs" / "speculative_decoding" / "notebooks" / path.with_suffix(".ipynb").name).exists()


@pytest.mark.parametrize("method", [m for m in methods() if methods_registry.get(m).decoding_type])
@pytest.mark.parametrize("track", tracks())
def test_method_spelling_is_accepted_by_every_track(method, track):
    spelling = methods_registry.get(method).spelling(track)
    assert spelling in registry().resolve(track).decoding_spellings(), \
        f"{method}: decoding_type {spelling} is not in the {track} snapshot's SpeculativeConfig"


@pytest.mark.parametrize("method", methods())
def test_cpu_engine_flag_is_honoured(method, tmp_path):
    m = methods_registry.get(method)
    if m.cpu_engine:
        assert method not in templates.CPU_REFUSES
        assert m.decoding_type is None or m.decoding_type in engine_config.RUNNABLE_DECODING_TYPES
        return
    assert m.decoding_type in engine_config.REFUSALS
    with pytest.raises(UserError, match=f"{method} with --engine cpu"):
        templates.render(method, out=tmp_path / "repo", model="some/model", engine="cpu")
    with pytest.raises(engine_config.ConfigError, match="CPU reference engine cannot run it"):
        engine_config.load_config(templates.template_dir(method) / "1" / "model.yaml")


@pytest.mark.parametrize("method", methods())
def test_trtllm_model_flag_and_needs_are_honoured(method):
    m = methods_registry.get(method)
    assert (method in templates.TRTLLM_REFUSES) == (not m.trtllm_model)
    assert (method in templates.NEEDS_DRAFT_MODEL) == (m.needs == "draft_model")
    assert (method in templates.NEEDS_DRAFTER) == (m.needs == "drafter")


def test_repo_render_offers_the_registry():
    import argparse

    def actions(parser):
        for a in parser._actions:
            yield a
            for sub in (a.choices or {}).values() if isinstance(a, argparse._SubParsersAction) else ():
                yield from actions(sub)

    parser = argparse.ArgumentParser()
    templates.register(parser.add_subparsers())
    action = next(a for a in actions(parser) if "--method" in a.option_strings)
    assert tuple(action.choices) == tuple(methods())


def test_a_bad_methods_file_is_a_located_error(tmp_path):
    bad = tmp_path / "methods.yaml"
    bad.write_text("methods:\n  - id: x\n    label: [unclosed\n")
    with pytest.raises(UserError, match=r"methods.yaml:\d+:\d+: the methods registry is not valid YAML"):
        methods_registry.load(bad)
    bad.write_text("methods:\n  - id: x\n    needs: null\n    label: X\n")
    with pytest.raises(UserError, match="method x: missing key 'decoding_type'"):
        methods_registry.load(bad)
    assert (SCHEMA_DIR / "methods.yaml") == methods_registry.METHODS_PATH


def test_the_data_loader_reads_every_shipped_yaml_as_safe_load_does():
    """diagnostics.load_data_yaml (libyaml, for the package's own files) gives yaml.safe_load's data."""
    from specdec_guide.diagnostics import load_data_yaml

    files = sorted((ROOT / "src" / "specdec_guide").rglob("*.yaml"))
    assert len(files) >= 10, files
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert load_data_yaml(text) == yaml.safe_load(text), path

