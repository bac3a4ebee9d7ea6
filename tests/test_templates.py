"""The llmapi templates and `specdec-guide repo render` (no server here; see test_triton_llmapi.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from specdec_guide import templates
from specdec_guide.diagnostics import UserError
from registry import default_track, methods

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = ROOT / "src/specdec_guide/schemas/1.1.0"
METHODS = templates.METHODS


def _facts():
    return yaml.safe_load((SCHEMA / "triton.yaml").read_text())["llmapi_model"]


def _llm_api():
    return yaml.safe_load((SCHEMA / "llm_api.yaml").read_text())


def _parse_pbtxt(path: Path):
    from google.protobuf import text_format
    from tritonclient.grpc import model_config_pb2

    return text_format.Parse(path.read_text(), model_config_pb2.ModelConfig())


@pytest.mark.parametrize("method", METHODS)
def test_config_pbtxt_matches_the_1_1_0_llmapi_model(method):
    from tritonclient.grpc import model_config_pb2

    cfg = _parse_pbtxt(templates.template_dir(method) / "config.pbtxt")
    facts = _facts()
    assert cfg.name == facts["name"] and cfg.backend == facts["backend"]
    # Written here too, equal to model.yaml's triton_config: behind the container's launcher
    # (--disable-auto-complete-config) Triton reads only this file.
    tc = yaml.safe_load((templates.template_dir(method) / "1" / "model.yaml").read_text())["triton_config"]
    assert cfg.HasField("model_transaction_policy")
    assert (cfg.max_batch_size, cfg.model_transaction_policy.decoupled) == (tc["max_batch_size"], tc["decoupled"])
    dtype = model_config_pb2.DataType.Name

    def rows(items):
        return [(t.name, dtype(t.data_type), list(t.dims), getattr(t, "optional", False)) for t in items]

    assert rows(cfg.input) == [(i["name"], i["data_type"], i["dims"], i.get("optional", False)) for i in facts["inputs"]]
    assert rows(cfg.output) == [(o["name"], o["data_type"], o["dims"], False) for o in facts["outputs"]]


def test_config_pbtxt_is_the_same_for_every_method():
    texts = {(templates.template_dir(m) / "config.pbtxt").read_text() for m in METHODS}
    assert len(texts) == 1


@pytest.mark.parametrize("method", METHODS)
def test_model_yaml_keys_exist_in_trtllm_1_1_0(method):
    """Every key except triton_config goes to LLM(**kwargs): check it against the 1.1.0 snapshot."""
    doc = yaml.safe_load((templates.template_dir(method) / "1" / "model.yaml").read_text())
    api = _llm_api()
    llm_fields = api["classes"]["TorchLlmArgs"]["fields"]
    assert doc["backend"] == "pytorch" and doc["model"] == "${MODEL}"
    assert set(doc) - {"triton_config"} <= set(llm_fields), set(doc) - set(llm_fields)
    assert {"max_batch_size", "decoupled"} <= set(doc["triton_config"])
    assert doc["triton_config"]["decoupled"] is True  # so the guide's /generate_stream works
    spec = doc.get("speculative_config")
    if method == "baseline":
        assert spec is None
        return
    cls_name = api["unions"]["SpeculativeConfig"]["from_dict_keys"][spec["decoding_type"]]
    cls = api["classes"][cls_name]
    keys = set(spec) - {"decoding_type"}
    assert keys <= set(cls["fields"]), keys - set(cls["fields"])
    required = {k for k, f in cls["fields"].items() if f.get("required") and f.get("yaml", True) is not False}
    assert required <= set(spec), f"{method}: missing {required - set(spec)}"
    expected = {"ngram": "NGram", "draft_target": "DraftTarget", "eagle3": "Eagle", "mtp": "MTP", "user_provided": "UserProvided"}
    assert spec["decoding_type"] == expected[method]
    if method in ("ngram", "draft_target", "user_provided", "eagle3"):
        assert doc["disable_overlap_scheduler"] is True  # as upstream's examples for these methods
    if method == "eagle3":
        # Two-model: the form the release's feature table lists for Llama 3.1 8B and 3.3 70B, the targets the
        # guide serves (versions.md, "Which form on Llama 3.1 8B"); one-model is the default, so it is written out.
        assert spec["eagle3_one_model"] is False


def test_user_provided_drafter_lives_in_triton_config_not_in_llm_args():
    doc = yaml.safe_load((templates.template_dir("user_provided") / "1" / "model.yaml").read_text())
    assert "drafter" not in doc["speculative_config"]
    assert doc["triton_config"]["cpu_drafter"] == "${DRAFTER}"


def _render(tmp_path, method="ngram", **kw):
    kw.setdefault("model", "some/model")
    return templates.render(method, out=tmp_path / "repo", **kw)


@pytest.mark.parametrize("method", methods(on=default_track(), cpu_engine=True))
def test_render_cpu_fills_every_marker(tmp_path, tiny_models, method):
    target, draft = tiny_models
    kw = {"draft_model": str(draft)} if method == "draft_target" else {}
    if method == "user_provided":
        kw["drafter"] = "my_pkg.drafters:MyDrafter"
    out = _render(tmp_path, method, model=str(target), **kw)
    assert out == tmp_path / "repo" / "tensorrt_llm"
    assert sorted(p.name for p in (out / "1").iterdir()) == ["model.py", "model.yaml"]
    doc = yaml.safe_load((out / "1" / "model.yaml").read_text())
    assert doc["model"] == str(target)
    values = [line for line in (out / "1" / "model.yaml").read_text().splitlines() if not line.lstrip().startswith("#")]
    assert not [line for line in values if "${" in line]
    if method == "draft_target":
        assert doc["speculative_config"]["speculative_model_dir"] == str(draft)
    if method == "user_provided":
        assert doc["triton_config"]["cpu_drafter"] == "my_pkg.drafters:MyDrafter"
    assert (out / "1" / "model.py").read_bytes() == (ROOT / "src/specdec_guide/engine/model.py").read_bytes()


def test_render_copies_a_drafter_file_into_the_model_folder(tmp_path):
    drafter = ROOT / "snippets/drafters/prompt_lookup_drafter.py"
    out = _render(tmp_path, "user_provided", drafter=f"{drafter}:PromptLookupDrafter")
    assert (out / "1" / drafter.name).read_bytes() == drafter.read_bytes()
    doc = yaml.safe_load((out / "1/model.yaml").read_text())
    assert doc["triton_config"]["cpu_drafter"] == "prompt_lookup_drafter.py:PromptLookupDrafter"
    with pytest.raises(UserError, match="not found"):
        _render(tmp_path, "user_provided", drafter=f"{tmp_path}/absent.py:X", force=True)


def test_render_keeps_hub_names_and_makes_local_paths_absolute(tmp_path, monkeypatch):
    out = _render(tmp_path, model="TinyLlama/TinyLlama-1.1B-Chat-v1.0")
    assert yaml.safe_load((out / "1/model.yaml").read_text())["model"] == "TinyLlama/TinyLlama-1.1B-Chat-v1.0"
    (tmp_path / "local").mkdir()
    (tmp_path / "local/config.json").write_text("{}")
    monkeypatch.chdir(tmp_path)
    out = templates.render("ngram", "local", out=tmp_path / "repo2")
    assert yaml.safe_load((out / "1/model.yaml").read_text())["model"] == str(tmp_path / "local")


def test_render_checks_local_model_paths_and_notes_hub_names(tmp_path, monkeypatch, capsys):
    """Issue 12 item 6: a mistyped path fails at render time, not 8 s into the server's start."""
    (tmp_path / "models/target").mkdir(parents=True)
    (tmp_path / "models/target/config.json").write_text("{}")
    (tmp_path / "models/empty").mkdir()
    monkeypatch.chdir(tmp_path)
    for model, message in (("models/targt", "--model models/targt: no such directory (models holds: empty, target)"),
                           ("./nowhere", "--model ./nowhere: no such directory"),
                           (str(tmp_path / "a/b/c"), "no such directory"),
                           ("models/empty", "--model models/empty: no config.json there")):
        with pytest.raises(UserError) as err:
            templates.render("ngram", model, out=tmp_path / "repo")
        assert message in str(err.value) and "\n" not in str(err.value), err.value
        assert not (tmp_path / "repo").exists()
    with pytest.raises(UserError, match="--draft-model models/draf: no such directory"):
        templates.render("draft_target", "models/target", out=tmp_path / "repo", draft_model="models/draf")
    capsys.readouterr()
    templates.render("ngram", "HuggingFaceTB/SmolLM2-135M-Instruct", out=tmp_path / "repo")
    assert "not a local path; the CPU engine (transformers) will resolve it as a Hugging Face model name" in (
        capsys.readouterr().err)
    templates.render("ngram", "models/target", out=tmp_path / "repo", force=True)
    assert capsys.readouterr().err == ""


def test_render_options_name_batch_size_decoupled(tmp_path):
    out = _render(tmp_path, name="ngram_sync", max_batch_size=4, decoupled=False)
    assert out.name == "ngram_sync"
    cfg = _parse_pbtxt(out / "config.pbtxt")
    assert cfg.name == "ngram_sync"
    tc = yaml.safe_load((out / "1/model.yaml").read_text())["triton_config"]
    assert tc == {"max_batch_size": 4, "decoupled": False}
    assert (cfg.max_batch_size, cfg.model_transaction_policy.decoupled) == (4, False)


def _fake_container(tmp_path):
    fake = tmp_path / "container_llmapi_1"
    fake.mkdir(exist_ok=True)
    for name in ("model.py", "helpers.py"):
        (fake / name).write_text(f"# stand-in for the container's {name}\n")
    return fake


RENDERABLE = [(m, "cpu") for m in templates.METHODS if m not in templates.CPU_REFUSES] + [
    (m, "trtllm") for m in templates.METHODS if m not in templates.TRTLLM_REFUSES]


@pytest.mark.parametrize("method, engine", RENDERABLE)
@pytest.mark.parametrize("decoupled, max_batch_size", [(None, None), (False, 8), (True, 2)])
def test_every_rendered_repository_agrees_on_the_policy(tmp_path, method, engine, decoupled, max_batch_size):
    """config.pbtxt carries model.yaml's decoupled and max_batch_size, and validate finds nothing to report."""
    from specdec_guide.validate.runner import validate_paths

    (tmp_path / "target").mkdir()
    (tmp_path / "target/config.json").write_text("{}")
    (tmp_path / "draft").mkdir()
    (tmp_path / "draft/config.json").write_text("{}")
    kw = {"draft_model": str(tmp_path / "draft")} if method in templates.NEEDS_DRAFT_MODEL else {}
    if method in templates.NEEDS_DRAFTER:
        kw["drafter"] = "my_pkg.drafters:MyDrafter"
    if engine == "trtllm":
        kw["trtllm_model_dir"] = _fake_container(tmp_path)
    out = templates.render(method, str(tmp_path / "target"), tmp_path / "repo", engine=engine,
                           decoupled=decoupled, max_batch_size=max_batch_size, **kw)
    cfg = _parse_pbtxt(out / "config.pbtxt")
    tc = yaml.safe_load((out / "1/model.yaml").read_text())["triton_config"]
    assert cfg.max_batch_size == tc["max_batch_size"] == (0 if max_batch_size is None else max_batch_size)
    assert cfg.model_transaction_policy.decoupled is tc["decoupled"] is (True if decoupled is None else decoupled)
    report = validate_paths([out / "config.pbtxt"], root=ROOT, is_verified=lambda p: True)
    assert report.ok, [str(d) for d in report.diagnostics]


@pytest.mark.parametrize("field, old, new", [("decoupled", "decoupled: true", "decoupled: false"),
                                             ("decoupled", "decoupled: true", ""),
                                             ("max_batch_size", "max_batch_size: 0", "max_batch_size: 4")])
def test_validate_flags_a_repository_whose_files_disagree(tmp_path, field, old, new):
    from specdec_guide.validate.runner import validate_paths

    out = _render(tmp_path, "baseline", engine="trtllm", trtllm_model_dir=_fake_container(tmp_path))
    text = (out / "config.pbtxt").read_text()
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if ln.strip() == old)
    (out / "config.pbtxt").write_text(text.replace(old, new))
    report = validate_paths([out / "config.pbtxt"], root=ROOT, is_verified=lambda p: True)
    assert len(report.diagnostics) == 1, [str(d) for d in report.diagnostics]
    d = report.diagnostics[0]
    msg = str(d)
    assert "config.pbtxt" in msg and "launch_triton_server.py" in msg and "--disable-auto-complete-config" in msg
    assert field in msg
    if new:  # an explicit value that disagrees is reported on its own line
        assert d.line == line


def test_render_trtllm_refuses_a_hub_id_as_the_draft_where_the_release_does_not_download_it(tmp_path):
    """Driven by the behaviour record of the container's release (hub_id_as_speculative_model)."""
    from specdec_guide.releases.tracks import Registry

    assert Registry().resolve(default_track()).behaviour.value("hub_id_as_speculative_model") is False
    with pytest.raises(UserError) as err:
        _render(tmp_path, "eagle3", engine="trtllm", draft_model="yuhuili/EAGLE3-LLaMA3.1-Instruct-8B",
                trtllm_model_dir=_fake_container(tmp_path))
    assert "snapshot_download('yuhuili/EAGLE3-LLaMA3.1-Instruct-8B'" in str(err.value)
    assert "\n" not in str(err.value) and not (tmp_path / "repo").exists()


@pytest.mark.parametrize(
    "method, kw, message",
    [
        ("draft_target", {}, "draft_target needs --draft-model"),
        ("eagle3", {"draft_model": "d"}, "eagle3 with --engine cpu: EAGLE-3"),
        ("mtp", {}, "mtp with --engine cpu: MTP"),
        ("user_provided", {}, "user_provided needs --drafter module:Class"),
        ("user_provided", {"drafter": "not a class"}, "expected module:Class"),
        ("user_provided", {"engine": "trtllm", "drafter": "a:B"}, "only as a Python object"),
        ("ngram", {"draft_model": "d"}, "--draft-model is only used by"),
        ("ngram", {"drafter": "a:B"}, "--drafter is only used by user_provided"),
        ("ngram", {"name": "../x"}, "--name"),
        ("ngram", {"max_batch_size": -1}, "--max-batch-size must be >= 0"),
        ("nope", {}, "unknown method"),
    ],
)
def test_render_errors_are_one_line(tmp_path, method, kw, message):
    with pytest.raises(UserError) as err:
        _render(tmp_path, method, **kw)
    assert message in str(err.value) and "\n" not in str(err.value)
    assert not (tmp_path / "repo").exists()


def test_render_refuses_a_non_empty_dir_and_force_replaces_only_the_model(tmp_path):
    repo = tmp_path / "repo"
    (repo / "other_model").mkdir(parents=True)
    (repo / "other_model" / "keep.txt").write_text("mine")
    outside = tmp_path / "outside.txt"
    outside.write_text("mine too")
    with pytest.raises(UserError, match="not empty; pass --force"):
        _render(tmp_path)
    out = _render(tmp_path, force=True)
    (out / "1" / "stale.txt").write_text("left from an earlier render")
    out = _render(tmp_path, "baseline", force=True)
    assert not (out / "1" / "stale.txt").exists()
    assert "speculative_config" not in yaml.safe_load((out / "1/model.yaml").read_text())
    assert (repo / "other_model" / "keep.txt").read_text() == "mine"
    assert outside.read_text() == "mine too"


def test_force_does_not_follow_a_symlinked_model_folder(tmp_path):
    victim = tmp_path / "victim"
    (victim / "1").mkdir(parents=True)
    (victim / "1" / "data.txt").write_text("precious")
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "tensorrt_llm").symlink_to(victim, target_is_directory=True)
    _render(tmp_path, force=True)
    assert (victim / "1" / "data.txt").read_text() == "precious"
    assert not (repo / "tensorrt_llm").is_symlink()


def test_render_trtllm_copies_the_container_files(tmp_path):
    head = tmp_path / "heads/EAGLE3-LLaMA3.1-Instruct-8B"
    head.mkdir(parents=True)
    out = _render(tmp_path, "eagle3", engine="trtllm", draft_model=str(head),
                  trtllm_model_dir=_fake_container(tmp_path))
    assert sorted(p.name for p in (out / "1").iterdir()) == ["helpers.py", "model.py", "model.yaml"]
    spec = yaml.safe_load((out / "1/model.yaml").read_text())["speculative_config"]
    assert spec["speculative_model_dir"] == str(head)


def test_render_trtllm_without_container_says_what_to_copy(tmp_path, capsys):
    with pytest.raises(UserError) as err:
        _render(tmp_path, "mtp", engine="trtllm", trtllm_model_dir=tmp_path / "absent")
    assert err.value.exit_code != 0
    printed = capsys.readouterr().err
    assert "/app/all_models/llmapi/tensorrt_llm/1/model.py" in printed
    assert "/app/all_models/llmapi/tensorrt_llm/1/helpers.py" in printed
    assert str((tmp_path / "repo/tensorrt_llm/1").resolve()) in printed
    assert (tmp_path / "repo/tensorrt_llm/1/model.yaml").exists()  # the rest is rendered


def test_cli_repo_render(tmp_path, tiny_models, capsys):
    from specdec_guide.cli import main

    target, _ = tiny_models
    rc = main(["repo", "render", "--method", "ngram", "--model", str(target), "--out", str(tmp_path / "r")])
    assert rc == 0 and "specdec-guide triton up --repo" in capsys.readouterr().out
    rc = main(["repo", "render", "--method", "ngram", "--model", str(target), "--out", str(tmp_path / "r")])
    assert rc == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("specdec-guide repo: ") and "not empty" in err and "\n" not in err


def test_render_user_provided_snippet_makes_a_valid_self_contained_repository(tmp_path, tiny_models):
    """snippets/triton/render_user_provided.sh, as the user-provided page shows it."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, TARGET=str(tiny_models[0]),
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    (tmp_path / "scratch").mkdir()
    (tmp_path / "snippets").symlink_to(ROOT / "snippets")  # the page's cp reads ../snippets/
    for snippet in ("snippets/drafters/copy_drafter.sh", "snippets/triton/render_user_provided.sh"):
        done = subprocess.run(["bash", "-e", str(ROOT / snippet)], cwd=tmp_path / "scratch",
                              env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
    tmp_path = tmp_path / "scratch"
    assert done.returncode == 0, done.stderr
    model_dir = tmp_path / "repo_user_provided/tensorrt_llm/1"
    config = yaml.safe_load((model_dir / "model.yaml").read_text())
    assert config["triton_config"]["cpu_drafter"] == "prompt_lookup_drafter.py:PromptLookupDrafter"
    assert config["speculative_config"]["decoding_type"] == "UserProvided"
    assert (model_dir / "prompt_lookup_drafter.py").read_text() == (
        ROOT / "snippets/drafters/prompt_lookup_drafter.py").read_text()
    assert (model_dir / "model.py").is_file()
    checked = subprocess.run([sys.executable, "-m", "specdec_guide", "validate", str(tmp_path / "repo_user_provided")],
                             capture_output=True, text=True, timeout=120)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_cpu_render_defaults_to_the_real_model_and_its_draft(tmp_path, smollm2_dir):
    from specdec_guide.models.smollm2 import ensure_draft_checkpoint

    target = templates.render("draft_target", None, tmp_path / "r")
    spec = yaml.safe_load((target / "1" / "model.yaml").read_text())
    assert spec["model"] == str(smollm2_dir)
    assert spec["speculative_config"]["speculative_model_dir"] == str(ensure_draft_checkpoint())


def test_trtllm_render_still_needs_a_model(tmp_path):
    with pytest.raises(UserError, match="--model is required"):
        templates.render("ngram", None, tmp_path / "r", engine="trtllm")
