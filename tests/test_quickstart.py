"""The GPU quick start (docs/speculative_decoding/quickstart.md), as far as a CPU can follow it.

Its `docker run` and `launch_triton_server.py` need the container and a GPU: they are checked
statically (`specdec-guide validate` checks the launcher's flags and the model.yaml written by the
heredoc against each track's snapshot; the tests below check what the validator does not know:
the image of each track, the ports, the cache mount, the container's paths). The steps that run
inside the container on files (copy the llmapi repository, write model.yaml, add the decoupled
policy to config.pbtxt) and the requests run here for real, on the CPU stand-in: a copy of the
llmapi repository as our templates imitate it, served with the launcher's
--disable-auto-complete-config, so Triton reads only config.pbtxt as it does in the container.

The output the page shows (snippets/quickstart/output/generate.out) comes from this test's run:
`SPECDEC_WRITE_OUTPUTS=1 pytest tests/test_quickstart.py -k stand_in` stores it.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import urllib.request
from pathlib import Path

import pytest
import yaml

from specdec_guide import pagewalk, templates
from specdec_guide.triton import TritonServer

ROOT = Path(__file__).resolve().parents[1]
SNIPPETS = ROOT / "snippets" / "quickstart"
PAGE = ROOT / "docs" / "speculative_decoding" / "quickstart.md"
TRACKS = {t["id"]: t for t in yaml.safe_load((ROOT / "src/specdec_guide/schemas/tracks.yaml").read_text())["tracks"]}
DOCKER_RUN = {"1.1.0": SNIPPETS / "docker_run.sh", "1.2.1": SNIPPETS / "docker_run_1.2.1.sh"}
MODEL_YAML = {"1.1.0": SNIPPETS / "model_yaml.sh", "1.2.1": SNIPPETS / "model_yaml_1.2.1.sh"}
CONTAINER_REPO = "/workspace/repo"


def _words(path: Path) -> list[str]:
    text = "\n".join(ln for ln in path.read_text().splitlines() if not ln.lstrip().startswith("#"))
    return shlex.split(text.replace("\\\n", " "))


def _container_llmapi(track: str) -> str:
    """Where the track's snapshot says the image keeps the llmapi repository (its parent folder)."""
    triton = yaml.safe_load((ROOT / f"src/specdec_guide/schemas/{track}/triton.yaml").read_text())
    return str(Path(triton["llmapi_model"]["container_path"]).parent)


@pytest.mark.parametrize("track", sorted(DOCKER_RUN))
def test_docker_run_starts_the_tracks_image_with_gpus_ports_cache_and_token(track):
    words = _words(DOCKER_RUN[track])
    assert words[:2] == ["docker", "run"]
    assert TRACKS[track]["container"] in words, f"{DOCKER_RUN[track].name}: not the image of track {track}"
    assert words[words.index("--gpus") + 1] == "all"
    assert any(w.startswith("--shm-size=") for w in words)
    ports = {words[i + 1] for i, w in enumerate(words) if w == "-p"}
    assert ports == {"8000:8000", "8001:8001", "8002:8002"}  # HTTP, gRPC, metrics: the launcher's defaults
    mounts = [words[i + 1] for i, w in enumerate(words) if w == "-v"]
    # The target side must be absolute: docker does not expand "~" (upstream's doc writes ~ there).
    assert any(m.split(":")[1] == "/root/.cache/huggingface" for m in mounts), mounts
    assert words[words.index("-e") + 1] == "HF_TOKEN"  # passed from the host's environment, not typed
    # The container is named, and the stop step stops that name.
    name = words[words.index("--name") + 1]
    assert _words(SNIPPETS / "stop.sh") == ["docker", "stop", name]


def test_the_repository_is_copied_from_where_the_image_keeps_it():
    words = _words(SNIPPETS / "copy_repo.sh")
    cp = words.index("cp")
    assert words[cp + 2] == f"{_container_llmapi('1.1.0')}/." and words[cp + 3] == f"{CONTAINER_REPO}/"
    assert _container_llmapi("1.1.0") == _container_llmapi("1.2.1")


@pytest.mark.parametrize("track", sorted(MODEL_YAML))
def test_model_yaml_tabs_differ_only_in_their_track(track):
    text = MODEL_YAML[track].read_text()
    assert f"# specdec-guide: trtllm={track}" in text
    other = MODEL_YAML["1.1.0"].read_text().replace("trtllm=1.1.0", f"trtllm={track}")
    assert text == other  # the NGram keys are the same in both releases; the image is what changes


def _model_yaml_body(path: Path) -> str:
    m = re.search(r"<<'YAML'\n(.*?)\nYAML\n", path.read_text(), re.S)
    assert m, f"{path}: no model.yaml heredoc"
    return m.group(1)


def test_model_yaml_and_config_pbtxt_agree_on_decoupled():
    doc = yaml.safe_load(_model_yaml_body(MODEL_YAML["1.1.0"]))
    assert doc["triton_config"]["decoupled"] is True
    assert "decoupled: true" in (SNIPPETS / "decoupled.sh").read_text()


def test_the_page_shows_each_step_in_order():
    page = PAGE.read_text()
    order = ["docker_run.sh", "copy_repo.sh", "model_yaml.sh", "decoupled.sh", "launch.sh", "wait_ready.sh",
             "generate.sh", "output/generate.out", "stop.sh"]
    at = [page.find(f'"snippets/quickstart/{name}"') for name in order]
    assert -1 not in at and at == sorted(at), dict(zip(order, at))


def _run(snippet: Path, replace: dict[str, str], env: dict | None = None, timeout: float = 120) -> str:
    text = snippet.read_text()
    for old, new in replace.items():
        text = text.replace(old, new)
    done = subprocess.run(["bash", "-e", "-c", text], capture_output=True, text=True, timeout=timeout,
                          env=dict(os.environ, **(env or {})))
    assert done.returncode == 0, f"{snippet.name}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.mark.triton
def test_the_container_steps_and_the_request_on_the_stand_in(tmp_path, smollm2_dir):
    target = smollm2_dir  # a real small model, so the stored answer reads as an answer
    # The image's llmapi repository, as the stand-in imitates it: shipped model.yaml not decoupled,
    # and no model_transaction_policy in config.pbtxt (the snapshot: model.py sets it by auto-complete).
    app = tmp_path / "app/all_models/llmapi"
    templates.render("baseline", model=str(target), out=app, decoupled=False)
    config = app / "tensorrt_llm/config.pbtxt"
    config.write_text(re.sub(r"\nmodel_transaction_policy\s*\{[^}]*\}\n", "\n", config.read_text()))
    repo = tmp_path / "workspace/repo"
    paths = {"/app/all_models/llmapi": str(app), CONTAINER_REPO: str(repo)}

    for _ in range(2):  # a reader may run the file steps twice: no nested copy, no second policy
        _run(SNIPPETS / "copy_repo.sh", paths)
        _run(SNIPPETS / "model_yaml.sh", paths)
        _run(SNIPPETS / "decoupled.sh", paths)
    assert not (repo / "llmapi").exists() and (repo / "tensorrt_llm/1/model.py").is_file()
    assert not re.search(r"^\s*model_transaction_policy", config.read_text(), re.M)  # the image's copy: as shipped
    assert len(re.findall(r"^model_transaction_policy", (repo / "tensorrt_llm/config.pbtxt").read_text(), re.M)) == 1
    model_yaml = repo / "tensorrt_llm/1/model.yaml"
    written = yaml.safe_load(model_yaml.read_text())
    assert written == yaml.safe_load(_model_yaml_body(MODEL_YAML["1.1.0"]))
    # The one change for a CPU: SmolLM2-135M instead of the 8B model the page names.
    model_yaml.write_text(model_yaml.read_text().replace(f"model: {written['model']}", f"model: {target}"))

    with TritonServer(repo, timeout=180, extra_args=("--disable-auto-complete-config",),
                      env={"SPECDEC_ENGINE_THREADS": "1"}) as srv:
        env = {"TRITON_HTTP_PORT": str(srv.http_port)}
        assert "tensorrt_llm is ready" in _run(SNIPPETS / "wait_ready.sh", {}, env)
        with urllib.request.urlopen(f"{srv.http_url}/v2/models/tensorrt_llm/config", timeout=30) as r:
            served = json.loads(r.read())
        # With auto-complete off, only the policy added to config.pbtxt makes the model decoupled.
        assert served.get("model_transaction_policy", {}).get("decoupled") is True, served
        out = _run(SNIPPETS / "generate.sh", {}, env)
        # The migration page's "after" request, on the same server (same model name, stand-in).
        migrated = json.loads(_run(ROOT / "snippets/migration/request_llmapi.sh", {}, env))
    assert migrated["text_output"] and "\n\n" not in migrated["text_output"], migrated  # stopped at the stop string
    assert isinstance(migrated["total_draft_tokens"], str), migrated  # counters come back as strings
    answer = json.loads(out)
    assert answer["model_name"] == "tensorrt_llm" and answer["text_output"], answer
    stored = SNIPPETS / "output/generate.out"
    if os.environ.get("SPECDEC_WRITE_OUTPUTS"):
        stored.write_text(out if out.endswith("\n") else out + "\n")
    assert pagewalk.shape(out) == pagewalk.shape(stored.read_text()), "the page's answer has another shape"


def test_the_quick_start_is_the_home_pages_first_link_and_first_in_the_nav():
    home = (ROOT / "docs/index.md").read_text()
    first = re.search(r"\]\(([^)#]+)", home)
    assert first and first.group(1) == "speculative_decoding/quickstart.md", first
    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text())["nav"]
    pages = [p for item in nav for p in (item.values() if isinstance(item, dict) else [item])]
    start = pages[1]  # after Home
    assert isinstance(start, list) and next(iter(start[0].values())) == "speculative_decoding/quickstart.md", start
