"""A method exists on the tracks its ``tracks:`` list in methods.yaml names, and every reader goes by it.

The shipped registry has every method on every track, so these tests take a copy of methods.yaml
with one method taken off one track and check that each place that lists methods for a track (the
registry's own lists, ``repo render``, the CPU engine, ``doctor``, the test parametrization, the
versions page's table and the support matrices) leaves it out there and keeps it on the other track.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import registry as test_registry
from specdec_guide import cli, templates
from specdec_guide.diagnostics import UserError
from specdec_guide.engine import config as engine_config
from specdec_guide.releases import methods as methods_registry
from specdec_guide.site import support, version_tables

DEFAULT = test_registry.default_track()
OTHER = next(t for t in test_registry.tracks() if t != DEFAULT)
SHIPPED = methods_registry.METHODS_PATH


def without(folder: Path, method: str, track: str) -> Path:
    """A copy of the shipped methods.yaml in which ``method`` is not on ``track``."""
    text = SHIPPED.read_text(encoding="utf-8")
    start = text.index(f"  - id: {method}\n")
    end = text.find("\n  - id:", start + 1)
    end = len(text) if end < 0 else end
    line = re.search(r"(?m)^    tracks: \[(.*)\]$", text[start:end])
    ids = [s.strip().strip('"') for s in line.group(1).split(",")]
    assert track in ids, (method, ids)
    kept = ", ".join(f'"{i}"' for i in ids if i != track)
    out = folder / "methods.yaml"
    out.write_text(text[:start] + text[start:end].replace(line.group(0), f"    tracks: [{kept}]") + text[end:],
                   encoding="utf-8")
    return out


@pytest.fixture
def ngram_off_default(tmp_path, monkeypatch):
    """methods.yaml with NGram on every track but the default one."""
    monkeypatch.setattr(methods_registry, "METHODS_PATH", without(tmp_path, "ngram", DEFAULT))


def test_the_shipped_methods_name_their_tracks():
    for m in methods_registry.load():
        assert m.tracks and all(m.exists_on(t) for t in m.tracks), m.id
        assert not m.exists_on("0.0.0"), m.id


def test_the_registry_lists_leave_the_method_out_where_it_is_not(ngram_off_default):
    assert "ngram" not in [m.id for m in methods_registry.on_track(DEFAULT)]
    assert "ngram" in [m.id for m in methods_registry.on_track(OTHER)]
    assert "ngram" not in methods_registry.cpu_ids(DEFAULT) and "ngram" in methods_registry.cpu_ids(OTHER)
    assert "NGram" not in methods_registry.cpu_decoding_types(DEFAULT)
    assert "NGram" in methods_registry.cpu_decoding_types(OTHER)
    assert methods_registry.cpu_ids() == methods_registry.cpu_ids(DEFAULT)  # no track: the default one
    with pytest.raises(UserError, match=rf"^method ngram is not available on track {re.escape(DEFAULT)} "
                                        r"\(methods\.yaml\)"):
        methods_registry.require("ngram", DEFAULT)
    assert methods_registry.require("ngram", OTHER).id == "ngram"


def test_an_alias_names_the_track(ngram_off_default):
    alias = next(t for t in test_registry.registry().tracks if t.id == OTHER).aliases[0]
    assert methods_registry.require("ngram", alias).id == "ngram"


def test_the_tests_parametrize_by_it(ngram_off_default):
    assert "ngram" not in test_registry.methods(on=DEFAULT) and "ngram" in test_registry.methods(on=OTHER)
    pairs = test_registry.track_methods()
    assert (DEFAULT, "ngram") not in pairs and (OTHER, "ngram") in pairs


def test_repo_render_refuses_it(ngram_off_default, tmp_path):
    with pytest.raises(UserError, match=rf"method ngram is not available on track {re.escape(DEFAULT)} "
                                        r"\(methods\.yaml\)"):
        templates.render("ngram", model="some/model", out=tmp_path / "repo")
    assert not (tmp_path / "repo").exists()


def _ngram_yaml(folder: Path, track: str) -> Path:
    path = folder / "model.yaml"
    path.write_text(f"# specdec-guide: trtllm={track}\nmodel: some/model\nbackend: pytorch\n"
                    "speculative_config:\n  decoding_type: NGram\n  max_draft_len: 4\n  max_matching_ngram_size: 2\n")
    return path


def test_the_cpu_engine_refuses_it_on_that_track_only(ngram_off_default, tmp_path):
    with pytest.raises(engine_config.ConfigError,
                       match=rf"decoding_type 'NGram': on TensorRT-LLM {re.escape(DEFAULT)} the CPU reference "
                             r"engine runs only [^N]*\(methods\.yaml\)"):
        engine_config.load_config(_ngram_yaml(tmp_path, DEFAULT))
    assert engine_config.load_config(_ngram_yaml(tmp_path, OTHER)).speculative.decoding_type == "NGram"


def test_doctor_names_it(ngram_off_default, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    line = f"error: method ngram is not available on track {DEFAULT} (methods.yaml)"
    assert cli.main(["doctor", str(_ngram_yaml(tmp_path, DEFAULT))]) == 1
    out = capsys.readouterr().out
    assert "model.yaml:5:1: " + line in out, out  # the decoding_type line
    cli.main(["doctor", str(_ngram_yaml(tmp_path, OTHER))])
    assert "is not available on track" not in capsys.readouterr().out


def test_the_versions_table_and_the_support_matrices_follow_it(ngram_off_default):
    tracks = [t for t in test_registry.registry().tracks if t.id in (DEFAULT, OTHER)]
    row = next(r for r in version_tables.method_rows(tracks) if r[0] == methods_registry.get("ngram").label)
    assert row[1 + [t.id for t in tracks].index(DEFAULT)] == "not on this track"
    assert row[1 + [t.id for t in tracks].index(OTHER)] == "`NGram`"
    assert "ngram" not in support.columns(DEFAULT) and "ngram" in support.columns(OTHER)
    with pytest.raises(UserError, match=rf"'methods' must be .* \(the methods on track {re.escape(DEFAULT)}"):
        support.load(DEFAULT)  # the shipped support.yaml still has an NGram column
    assert support.load(OTHER)["methods"]


@pytest.mark.parametrize("tracks,message", [
    (None, "missing key 'tracks'"),
    ("[]", "'tracks' must be a non-empty list of quoted track ids"),
    ("[1.2]", r"'tracks' must be a non-empty list of quoted track ids \(\"1.1.0\"\), not \[1.2\]"),
    ('"1.1.0"', "'tracks' must be list"),
    ('["1.1.0", "1.1.0"]', "'tracks' names a track twice"),
])
def test_a_bad_tracks_list_is_named(tmp_path, tracks, message):
    text = SHIPPED.read_text(encoding="utf-8")
    first = re.search(r'(?m)^    tracks: \[.*\]\n', text)
    text = text[:first.start()] + (f"    tracks: {tracks}\n" if tracks is not None else "") + text[first.end():]
    bad = tmp_path / "methods.yaml"
    bad.write_text(text, encoding="utf-8")
    with pytest.raises(UserError, match=f"method baseline: {message}"):
        methods_registry.load(bad)


def test_a_snippet_left_for_a_track_the_method_left_is_flagged(tmp_path):
    """The method's per-track snippet stays behind when the method leaves a track: no page may show
    it, and the registry checks say so (the same file is required while the method is there)."""
    import registry_checks
    from specdec_guide.releases.tracks import Registry

    root = Path(__file__).resolve().parents[1]
    methods = methods_registry.load(without(tmp_path, "ngram", DEFAULT))
    repo = registry_checks.Repo(root, Registry(root / registry_checks.SCHEMAS), methods)
    flagged = [p for p in registry_checks.snippets(repo, DEFAULT) if "ngram" in p]
    assert flagged and "is not on track" in flagged[0], flagged
    assert not [p for p in registry_checks.snippets(repo, OTHER) if "ngram" in p]
