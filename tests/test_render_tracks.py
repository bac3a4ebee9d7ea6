"""``specdec-guide repo render --trtllm``: the rendered repository follows the track.

Expected values come from the registries, not from templates.py: the release line from tracks.yaml,
the ``decoding_type`` from methods.yaml, the draft-model key from the track's snapshot
(``Track.draft_key_field``), and the whole file must pass ``specdec-guide validate`` for that track.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from registry import default_track, registry, track_methods, tracks
from specdec_guide import cli, templates
from specdec_guide.diagnostics import UserError
from specdec_guide.engine import config as engine_config
from specdec_guide.releases import methods as methods_registry
from specdec_guide.validate.runner import validate_paths

ROOT = Path(__file__).resolve().parents[1]
OTHER = next(t for t in tracks() if t != default_track())


def _container_files(tmp_path: Path) -> Path:
    fake = tmp_path / "container_llmapi_1"
    fake.mkdir(exist_ok=True)
    for name in ("model.py", "helpers.py"):
        (fake / name).write_text(f"# stand-in for the container's {name}\n")
    return fake


def _render_trtllm(tmp_path: Path, method: str, track: str | None) -> Path:
    extra = {"draft_model": str(tmp_path)} if methods_registry.get(method).needs == "draft_model" else {}
    return templates.render(method, model=str(tmp_path), out=tmp_path / "repo", engine="trtllm", force=True,
                            trtllm_model_dir=_container_files(tmp_path), trtllm=track, **extra)


@pytest.mark.parametrize("track,method", [(t, m) for t, m in track_methods(trtllm_model=True)])
def test_the_rendered_model_yaml_is_the_tracks(tmp_path, track, method):
    t = registry().resolve(track)
    out = _render_trtllm(tmp_path, method, track)
    text = (out / "1" / "model.yaml").read_text()
    assert f"\n# specdec-guide: trtllm={t.id}\n" in text
    assert f"# TensorRT-LLM {t.trtllm_version} llmapi model (Triton {t.container_tag}):" in text
    spec = yaml.safe_load(text).get("speculative_config") or {}
    assert spec.get("decoding_type") == methods_registry.get(method).spelling(t.id)
    if methods_registry.get(method).needs == "draft_model":
        keys = {"speculative_model", "speculative_model_dir"} & set(spec)
        assert keys == {t.draft_key_field}, (keys, t.draft_key_field)
    report = validate_paths([out / "1" / "model.yaml", out / "config.pbtxt"], root=tmp_path,
                            is_verified=lambda p: True)
    assert {r.track.id for r in report.results} == {t.id}
    assert not report.diagnostics, "\n".join(map(str, report.diagnostics))


def test_without_the_flag_it_is_the_default_track_and_an_alias_names_a_track(tmp_path):
    default = (_render_trtllm(tmp_path, "draft_target", None) / "1" / "model.yaml").read_text()
    assert default == (_render_trtllm(tmp_path, "draft_target", default_track()) / "1" / "model.yaml").read_text()
    alias = registry().resolve(OTHER).aliases[0]
    by_alias = (_render_trtllm(tmp_path, "draft_target", alias) / "1" / "model.yaml").read_text()
    assert by_alias == (_render_trtllm(tmp_path, "draft_target", OTHER) / "1" / "model.yaml").read_text()
    assert by_alias != default


def test_the_default_tracks_render_keeps_the_template_as_written(tmp_path):
    """Only the markers are filled and the stamp added: no note about another release."""
    out = _render_trtllm(tmp_path, "ngram", default_track())
    rendered = (out / "1" / "model.yaml").read_text().split("\n", 2)[2]
    template = (templates.template_dir("ngram") / "1" / "model.yaml").read_text()
    assert rendered == template.replace("model: ${MODEL}", f'model: "{tmp_path}"')


def test_another_track_says_its_comments_describe_the_template_release(tmp_path):
    t = registry().resolve(OTHER)
    text = (_render_trtllm(tmp_path, "ngram", OTHER) / "1" / "model.yaml").read_text()
    written_for = re.search(r"# TensorRT-LLM (\S+) llmapi model",
                            (templates.template_dir("ngram") / "1" / "model.yaml").read_text()).group(1)
    assert f"# (Rendered for TensorRT-LLM {t.trtllm_version} from a template written for {written_for}:" in text


@pytest.mark.parametrize("track", tracks())
def test_the_cpu_stand_in_reads_the_render_as_that_track(tmp_path, tiny_models, track):
    target, draft = tiny_models
    out = templates.render("draft_target", model=str(target), draft_model=str(draft), out=tmp_path / "repo",
                           trtllm=track)
    cfg = engine_config.load_config(out / "1" / "model.yaml")
    assert cfg.track == track and cfg.speculative.draft_model == str(draft)
    assert registry().resolve(track).draft_key_field in yaml.safe_load((out / "1" / "model.yaml").read_text())[
        "speculative_config"]


def test_the_missing_container_files_name_the_tracks_container(tmp_path, capsys):
    t = registry().resolve(OTHER)
    with pytest.raises(UserError, match="rendered without model.py"):
        templates.render("ngram", model="some/model", out=tmp_path / "repo", engine="trtllm",
                         trtllm_model_dir=tmp_path / "absent", trtllm=OTHER)
    err = capsys.readouterr().err
    assert f"docker run --rm -v {(tmp_path / 'repo/tensorrt_llm/1').resolve()}:/dst {t.container} " in err


@pytest.mark.parametrize("track", tracks())
def test_a_hub_id_draft_follows_the_tracks_behaviour_record(tmp_path, track):
    downloads = registry().resolve(track).behaviour.value("hub_id_as_speculative_model")
    kw = dict(model="some/model", out=tmp_path / "repo", engine="trtllm", draft_model="org/eagle3-head",
              trtllm_model_dir=_container_files(tmp_path), trtllm=track)
    if downloads is False:
        with pytest.raises(UserError, match=rf"a Hugging Face hub id, but TensorRT-LLM {re.escape(track)} "):
            templates.render("eagle3", **kw)
    else:
        out = templates.render("eagle3", **kw)
        assert yaml.safe_load((out / "1/model.yaml").read_text())["speculative_config"][
            registry().resolve(track).draft_key_field] == "org/eagle3-head"


def test_a_bad_track_is_one_line_naming_the_known_ones(tmp_path, capsys):
    code = cli.main(["repo", "render", "--method", "ngram", "--model", "some/model", "--trtllm", "9.9",
                     "--out", str(tmp_path / "repo")])
    err = capsys.readouterr().err
    assert code == 2  # a usage error, as every UserError of the CLI
    assert err.count("\n") == 1 and err.startswith("specdec-guide repo: unknown TRT-LLM track '9.9' (known: "), err
    assert all(name in err for name in registry().names())
    assert not (tmp_path / "repo").exists()


def test_a_method_off_the_track_is_refused_on_the_command_line(tmp_path, capsys, monkeypatch):
    from test_methods_per_track import without

    monkeypatch.setattr(methods_registry, "METHODS_PATH", without(tmp_path, "ngram", OTHER))
    argv = ["repo", "render", "--method", "ngram", "--model", "some/model", "--out", str(tmp_path / "repo")]
    assert cli.main([*argv, "--trtllm", OTHER]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"specdec-guide repo: method ngram is not available on track {OTHER} (methods.yaml)"), err
    assert cli.main([*argv, "--engine", "trtllm", "--trtllm-model-dir", str(_container_files(tmp_path)),
                     "--trtllm", default_track()]) == 0


def test_the_rendered_config_pbtxt_says_which_release_its_comments_describe(tmp_path):
    """config.pbtxt's comments name the template's release: on another track a leading comment says so,
    names the track's release and container and its snapshot; on the default track the file is the template's."""
    t = registry().resolve(OTHER)
    other = (_render_trtllm(tmp_path, "ngram", OTHER) / "config.pbtxt").read_text()
    head = other.split("\n# Triton model configuration", 1)[0].replace("\n# ", " ")
    assert head.startswith(f"# (Rendered for TensorRT-LLM {t.trtllm_version} (Triton {t.container_tag}) from a "
                           f"template written for {registry().resolve(default_track()).trtllm_version}"), head
    assert f"src/specdec_guide/schemas/{t.id}/triton.yaml" in head
    if (t.triton.get("llmapi_model") or {}).get("unconfirmed"):
        assert "unconfirmed" in head and t.container in head
    default = (_render_trtllm(tmp_path, "ngram", default_track()) / "config.pbtxt").read_text()
    assert default == (templates.template_dir("ngram") / "config.pbtxt").read_text()


def test_a_snapshot_with_other_llmapi_names_is_named_in_the_rendered_config(tmp_path):
    """The comparison is with the track's own snapshot: a name it lacks and a name only it has are both listed."""
    base = registry().resolve(default_track())
    facts = dict(base.triton["llmapi_model"])
    inputs = [io for io in facts["inputs"] if io["name"] != "sampling_param_seed"]
    facts.update(inputs=inputs + [{"name": "lora_id", "data_type": "TYPE_UINT64", "dims": [1], "optional": True}],
                 unconfirmed=False)
    folder = tmp_path / "9.9.9"
    folder.mkdir()
    (folder / "triton.yaml").write_text(yaml.safe_dump({"llmapi_model": facts}))
    fake = type(base)(id="9.9.9", aliases=[], folder=folder, trtllm_version="9.9.9",
                      container="nvcr.io/nvidia/tritonserver:99.01-trtllm-python-py3")
    template = (templates.template_dir("ngram") / "config.pbtxt").read_text()
    note = templates.config_for_track(template, fake, base.trtllm_version).split("\n# Triton model", 1)[0]
    note = note.replace("\n# ", " ")
    assert "(Triton 99.01)" in note and "not in the snapshot: sampling_param_seed" in note, note
    assert "only in the snapshot: lora_id" in note and "unconfirmed" not in note, note
