"""Every track of schemas/tracks.yaml and every method of schemas/methods.yaml has what the guide needs.

A track: its snapshot, its snippets, its per-track fixtures, its GPU workflow entry, its migration
column, its verdict in every field note and its tab on every per-track block of every page (the quick
start's, the versions page's); the checks are tests/registry_checks.py's, which tests/test_add_track.py
also runs on a copy with a scaffolded track. A method: its template, its snippet on every track, the
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
from specdec_guide.site.hooks import expand_markers
from registry import SCHEMA_DIR, default_track, methods, registry, track_methods, tracks
import registry_checks as checks

ROOT = Path(__file__).resolve().parents[1]
VERSIONS_PAGE = ROOT / "docs" / "speculative_decoding" / "versions.md"
PAGES = sorted((ROOT / "docs").rglob("*.md"))
#: This checkout, as the checks of tests/registry_checks.py read a repository (the same functions run
#: on a throw-away copy with a scaffolded track in tests/test_add_track.py).
REPO = checks.load(ROOT)


def _spec(path: Path) -> dict:
    doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    return doc.get("speculative_config") or {}


# ---- tracks ------------------------------------------------------------------------------------
@pytest.mark.parametrize("track", tracks())
def test_track_has_its_entry_and_snapshot(track):
    """tracks.yaml's fields, and llm_api/cli/triton/support.yaml and behaviour/ (the same areas as the
    first track) in schemas/<track>/."""
    problems = checks.entry(REPO, track) + checks.snapshot(REPO, track)
    assert not problems, problems


@pytest.mark.parametrize("track", tracks())
def test_track_has_a_snippet_for_every_method_and_every_tab_of_the_pages(track):
    """The method snippets (each spelling its decoding_type as the track does), every file a page's
    track-tabs marker names (the quick start's steps, the versions page's blocks) and every file
    written from snippets/PER_TRACK.yaml: a track without one would silently lose its tab."""
    assert any(w.startswith("quickstart/") for w in checks.wanted_snippets(REPO, track))  # the markers were read
    problems = checks.snippets(REPO, track)
    assert not problems, problems


@pytest.mark.parametrize("track", tracks())
def test_track_has_its_per_track_fixtures(track):
    """precision/ and upstream_shapes/ hold the first track's files; rules/ its own, each with its twin."""
    problems = checks.fixtures(REPO, track)
    assert not problems, problems


def test_nothing_is_named_for_a_track_the_registry_lacks():
    """Snapshot, snippet and fixture folders and migration columns: a track removed or renamed in one
    place only; and a new fixture folder with per-track subfolders is listed in PER_TRACK_FIXTURES."""
    problems = checks.orphans(REPO)
    assert not problems, problems


def test_gpu_workflow_runs_every_track_container():
    """The GPU workflow's matrix (a workflow cannot read tracks.yaml) has one entry per track."""
    problems = checks.gpu_workflow(REPO)
    assert not problems, problems


@pytest.mark.parametrize("track", tracks())
def test_migration_map_has_a_column_per_track(track):
    assert track in migration.TRACKS and track in migration.TAB_LABELS
    rows, problems = migration.load(ROOT)
    assert not problems and rows
    problems = checks.migration_column(REPO, track)
    assert not problems, problems


@pytest.mark.parametrize("track", tracks())
def test_every_field_note_says_what_happens_on_the_track(track):
    problems = checks.field_notes(REPO, track)
    assert not problems, problems


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
    paths = version_tables.marker_paths(page)
    assert len(paths) >= 5
    text = expand_markers(page, "versions.md", ROOT, registry())
    for t in registry().tracks:
        assert text.count(f'=== "{t.tab_label}"') == len(paths), t.id
        assert f"| {t.id} | {t.trtllm_version} | `{t.container}`" in text or \
            f"| {t.id} (newest stable) | {t.trtllm_version} | `{t.container}`" in text, t.id
    for path in paths:
        assert f'snippets/{path.replace("{track}", tracks()[0])}' in text


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
    nested = expand_markers("=== \"A\"\n\n    <!-- specdec-guide: track-tabs yaml llm_api/{track}/x.yaml -->\n",
                            "page.md", tmp_path, registry())
    assert [ln for ln in nested.splitlines() if "=== " in ln][1:] == [f'    === "{t.tab_label}"' for t in registry().tracks]
    assert all(ln.startswith("        ") for ln in nested.splitlines() if "--8<--" in ln or "```" in ln)


@pytest.mark.parametrize("path", sorted((ROOT / "notebooks").glob("[0-9]*.py")), ids=lambda p: p.name)
def test_a_gpu_notebook_header_names_only_its_track(path):
    """Its container and TensorRT-LLM version are its track's (specdec_guide.notebooks.track_meta)."""
    from specdec_guide.notebooks import track_meta

    raw = jupytext.read(path).metadata.get("specdec_guide") or {}  # read once: a notebook is slow to parse
    if raw.get("tier") != "gpu":
        return
    assert raw.get("track") in tracks(), f"{path.name}: specdec_guide.track {raw.get('track')!r} is not a track id"
    assert not {"container", "trtllm_version"} & set(raw), f"{path.name}: a second copy of the track's data"
    t = registry().resolve(raw["track"])
    meta = track_meta(dict(raw), str(path))
    assert meta["container"] == t.container and meta["trtllm_version"] == t.trtllm_version


# ---- methods -----------------------------------------------------------------------------------
@pytest.mark.parametrize("method", methods())
def test_method_has_its_files(method):
    """Its template, its snippet on every track it exists on, its page, its spelling in every snapshot."""
    problems = checks.method_files(REPO, method)
    assert not problems, problems


@pytest.mark.parametrize("method", methods())
def test_method_has_its_template(method):
    m = methods_registry.get(method)
    folder = templates.template_dir(method)
    assert (folder / "config.pbtxt").is_file() and (folder / "1" / "model.yaml").is_file(), folder
    assert _spec(folder / "1" / "model.yaml").get("decoding_type") == m.spelling(default_track()), folder


@pytest.mark.parametrize("method", methods())
def test_method_has_the_page_that_teaches_it(method):
    m = methods_registry.get(method)
    path = ROOT / m.teaches
    assert path.is_file(), f"{method}: {m.teaches} does not exist"
    if m.decoding_type:
        assert m.decoding_type in path.read_text(encoding="utf-8"), f"{m.teaches} never names {m.decoding_type}"
    if path.suffix == ".py":
        assert (ROOT / "docs" / "speculative_decoding" / "notebooks" / path.with_suffix(".ipynb").name).exists()


@pytest.mark.parametrize("track,method", [(t, m) for t, m in track_methods() if methods_registry.get(m).decoding_type])
def test_method_spelling_is_accepted_by_every_track_it_is_on(track, method):
    spelling = methods_registry.get(method).spelling(track)
    assert spelling in registry().resolve(track).decoding_spellings(), \
        f"{method}: decoding_type {spelling} is not in the {track} snapshot's SpeculativeConfig"


@pytest.mark.parametrize("method", methods())
def test_cpu_engine_flag_is_honoured(method, tmp_path):
    m = methods_registry.get(method)
    if m.cpu_engine:
        assert method not in templates.CPU_REFUSES
        for track in m.tracks:
            assert m.decoding_type is None or m.spelling(track) in methods_registry.cpu_decoding_types(track), track
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


@pytest.mark.parametrize("method", methods())
def test_method_names_only_tracks_of_the_registry(method):
    """methods.yaml's ``tracks`` are track ids (not aliases), so a typo or a removed track is caught."""
    listed = methods_registry.get(method).tracks
    assert set(listed) <= set(tracks()), f"{method}: tracks {sorted(set(listed) - set(tracks()))} are not in tracks.yaml"


@pytest.mark.parametrize("track", tracks())
def test_every_track_has_the_baseline_and_a_speculative_method(track):
    """A track added to tracks.yaml but to no method's ``tracks`` would silently offer nothing."""
    assert "baseline" in methods(on=track), f"{track}: add it to the tracks of the methods of methods.yaml it has"
    assert any(methods_registry.get(m).speculative for m in methods(on=track)), track


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
