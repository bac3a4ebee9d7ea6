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
`make regen WHAT=test-outputs:tests/test_quickstart.py` stores a fresh one (tests/stored_output.py).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
import stored_output
import yaml
from processes import children, procs, until

from specdec_guide import pagewalk, templates
from specdec_guide.site.hooks import expand_markers
from specdec_guide.triton import TritonServer
from registry import registry

ROOT = Path(__file__).resolve().parents[1]
SNIPPETS = ROOT / "snippets" / "quickstart"
PAGE = ROOT / "docs" / "speculative_decoding" / "quickstart.md"
TRACKS = {t.id: t for t in registry().tracks}
FIRST = next(iter(TRACKS))  # the default track: the one the stand-in run follows
# The per-track steps, one file per track (snippets/quickstart/<track>/), shown as the page's tabs.
DOCKER_RUN = {t: SNIPPETS / t / "docker_run.sh" for t in TRACKS}
MODEL_YAML = {t: SNIPPETS / t / "model_yaml.sh" for t in TRACKS}
MODEL_YAML_EAGLE3 = {t: SNIPPETS / t / "model_yaml_eagle3.sh" for t in TRACKS}
GPU_NOTEBOOKS = ROOT / "snippets" / "gpu_notebooks"
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
    assert TRACKS[track].container in words, f"{DOCKER_RUN[track]}: not the image of track {track}"
    assert words[words.index("--gpus") + 1] == "all"
    assert any(w.startswith("--shm-size=") for w in words)
    ports = {words[i + 1] for i, w in enumerate(words) if w == "-p"}
    # HTTP, gRPC, metrics: the launcher's defaults, on the host's loopback only (no authentication)
    assert ports == {"127.0.0.1:8000:8000", "127.0.0.1:8001:8001", "127.0.0.1:8002:8002"}
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
    assert words[cp + 2] == f"{_container_llmapi(FIRST)}/." and words[cp + 3] == f"{CONTAINER_REPO}/"
    assert {_container_llmapi(t) for t in TRACKS} == {_container_llmapi(FIRST)}  # one copy step for every track


@pytest.mark.parametrize("track", sorted(MODEL_YAML))
def test_model_yaml_tabs_differ_only_in_their_track(track):
    text = MODEL_YAML[track].read_text()
    assert f"# specdec-guide: trtllm={track}" in text
    other = MODEL_YAML[FIRST].read_text().replace(f"trtllm={FIRST}", f"trtllm={track}")
    assert text == other  # the NGram keys are the same in both releases; the image is what changes


@pytest.mark.parametrize("track", sorted(MODEL_YAML_EAGLE3))
def test_eagle3_model_yaml_tabs_differ_only_in_their_track(track):
    text = MODEL_YAML_EAGLE3[track].read_text()
    assert f"# specdec-guide: trtllm={track}" in text
    assert text == MODEL_YAML_EAGLE3[FIRST].read_text().replace(f"trtllm={FIRST}", f"trtllm={track}")


def _download_dir() -> str:
    m = re.search(r"snapshot_download\('([^']+)', local_dir='([^']+)'\)", (SNIPPETS / "download_eagle3.sh").read_text())
    assert m, "download_eagle3.sh: no snapshot_download(repo, local_dir=...) call"
    return m.group(1), m.group(2)


def test_eagle3_model_yaml_reads_the_downloaded_head_and_matches_ngrams_serving_keys(tmp_path):
    head, local = _download_dir()
    assert head == "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B" and local.startswith("/root/.cache/huggingface/")
    eagle = yaml.safe_load(_model_yaml_body(MODEL_YAML_EAGLE3[FIRST]))
    ngram = yaml.safe_load(_model_yaml_body(MODEL_YAML[FIRST]))
    spec = eagle["speculative_config"]
    # A local directory, the one the download step fills: 1.1.0 does not download a hub id as the head.
    assert spec["decoding_type"] == "Eagle" and spec["speculative_model_dir"] == local, spec
    # Two-model, the form both releases' feature tables list for Llama 3.1 8B (see Versions and keys), with the
    # overlap scheduler off as their EAGLE 3 example sets it; one-model is the release's default, so it is written out.
    assert spec["eagle3_one_model"] is False and eagle["disable_overlap_scheduler"] is True
    for key in ("model", "backend", "tensor_parallel_size", "triton_config", "disable_overlap_scheduler"):
        assert eagle[key] == ngram[key], key  # same target and the same policy as the NGram tab
    # The step itself: written where the llmapi model reads it, and valid YAML once written.
    repo = tmp_path / "workspace/repo"
    (repo / "tensorrt_llm/1").mkdir(parents=True)
    _run(MODEL_YAML_EAGLE3[FIRST], {CONTAINER_REPO: str(repo)})
    assert yaml.safe_load((repo / "tensorrt_llm/1/model.yaml").read_text()) == eagle


def test_the_validator_passes_the_eagle3_tab_and_flags_a_hub_id_head_on_1_1_0(tmp_path):
    from specdec_guide.cli import main

    assert main(["validate", str(MODEL_YAML_EAGLE3["1.1.0"])]) == 0
    planted = tmp_path / "model_yaml_eagle3.sh"
    head, local = _download_dir()
    planted.write_text(MODEL_YAML_EAGLE3["1.1.0"].read_text().replace(f"speculative_model_dir: {local}",
                                                                     f"speculative_model_dir: {head}"))
    assert main(["validate", str(planted)]) != 0


def test_wait_ready_stops_when_no_tritonserver_is_left(tmp_path):
    # No server on the port and a pgrep that finds nothing: the loop must end at once, saying where the log is.
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "pgrep").write_text("#!/bin/sh\nexit 1\n")
    (fake / "pgrep").chmod(0o755)
    done = subprocess.run(["bash", str(SNIPPETS / "wait_ready.sh")], capture_output=True, text=True, timeout=30,
                          env=dict(os.environ, PATH=f"{fake}:{os.environ['PATH']}", TRITON_HTTP_PORT="9"))
    assert "tritonserver is not running" in done.stderr and "log" in done.stderr, done
    assert "is ready" not in done.stdout
    text = (SNIPPETS / "wait_ready.sh").read_text()
    assert re.search(r"for \w+ in \$\(seq \d+\)", text), "the wait must be bounded"


def test_gpu_notebook_box_mounts_the_clone_installs_it_and_runs_a_notebook():
    words = _words(GPU_NOTEBOOKS / "container_run.sh")
    assert words[:2] == ["docker", "run"] and words[words.index("--gpus") + 1] == "all"
    from specdec_guide.notebooks import read_meta

    notebook_image = read_meta(ROOT / "notebooks/04_ngram.py")["container"]  # from its track in tracks.yaml
    assert notebook_image in words, "not the image the notebooks name"
    mounts = [words[i + 1] for i, w in enumerate(words) if w == "-v"]
    assert "$PWD:/guide" in mounts and any(m.endswith(":/root/.cache/huggingface") for m in mounts), mounts
    assert words[words.index("-w") + 1] == "/guide"
    ports = [words[i + 1] for i, w in enumerate(words) if w == "-p"]
    setup = _words(GPU_NOTEBOOKS / "container_setup.sh")
    assert setup[:7] == ["python3", "-m", "pip", "install", "--no-deps", "-e", "/guide"]
    makefile = (ROOT / "Makefile").read_text()
    for pin in (w for w in setup if "==" in w and not w.startswith("jupyterlab")):
        assert pin in makefile, f"{pin}: not the version make test-gpu installs"
    run = _words(GPU_NOTEBOOKS / "run_notebook.sh")
    assert "--nbmake" in run and (ROOT / run[-1]).is_file(), run
    lab = _words(GPU_NOTEBOOKS / "jupyter_lab.sh")
    port = next(w.split("=")[1] for w in lab if w.startswith("--port="))
    # Inside the container Jupyter listens on every interface so that Docker can forward to it; the host
    # publishes it on its loopback only.
    assert f"127.0.0.1:{port}:{port}" in ports and "--ip=0.0.0.0" in lab
    home = (ROOT / "docs/index.md").read_text()
    for name in ("container_run.sh", "container_setup.sh", "run_notebook.sh", "jupyter_lab.sh"):
        assert f'"snippets/gpu_notebooks/{name}"' in home, name


def _model_yaml_body(path: Path) -> str:
    m = re.search(r"<<'YAML'\n(.*?)\nYAML\n", path.read_text(), re.S)
    assert m, f"{path}: no model.yaml heredoc"
    return m.group(1)


def test_model_yaml_and_config_pbtxt_agree_on_decoupled():
    doc = yaml.safe_load(_model_yaml_body(MODEL_YAML[FIRST]))
    assert doc["triton_config"]["decoupled"] is True
    assert "decoupled: true" in (SNIPPETS / "decoupled.sh").read_text()


def test_the_page_shows_each_step_in_order():
    """In the page as rendered (its track-tabs markers expanded): each step, a tab per track where it
    differs between releases, in the order a reader runs them."""
    page = expand_markers(PAGE.read_text(), "quickstart.md", ROOT, registry())
    per_track = {"docker_run.sh", "model_yaml.sh", "model_yaml_eagle3.sh"}
    order = ["docker_run.sh", "copy_repo.sh", "model_yaml.sh", "download_eagle3.sh", "model_yaml_eagle3.sh",
             "decoupled.sh", "launch.sh", "wait_ready.sh",
             "generate.sh", "output/generate.out", "stop.sh"]
    at = [page.find(f'"snippets/quickstart/{FIRST + "/" if name in per_track else ""}{name}"') for name in order]
    assert -1 not in at and at == sorted(at), dict(zip(order, at))
    for name in per_track:
        for track, t in TRACKS.items():
            assert f'"snippets/quickstart/{track}/{name}"' in page, (track, name)
            assert page.count(f'=== "{t.tab_label}"') == len(per_track), track


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
        _run(MODEL_YAML[FIRST], paths)
        _run(SNIPPETS / "decoupled.sh", paths)
    assert not (repo / "llmapi").exists() and (repo / "tensorrt_llm/1/model.py").is_file()
    assert not re.search(r"^\s*model_transaction_policy", config.read_text(), re.M)  # the image's copy: as shipped
    assert len(re.findall(r"^model_transaction_policy", (repo / "tensorrt_llm/config.pbtxt").read_text(), re.M)) == 1
    model_yaml = repo / "tensorrt_llm/1/model.yaml"
    written = yaml.safe_load(model_yaml.read_text())
    assert written == yaml.safe_load(_model_yaml_body(MODEL_YAML[FIRST]))
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
        assert srv.host_proc is not None, "a CPU-engine model is served without an engine host"
        host = srv.host_proc.pid
        engines = children(host)
        assert len(engines) == 1  # the one model's engine, forked by the host
    # An orderly stop (the block's end) ends the engine host and its engine as well.
    assert not Path(f"/proc/{host}").exists()
    assert until(lambda: not set(engines) & {pid for pid, _, _ in procs()}), "an engine outlived stop()"
    assert migrated["text_output"], migrated  # no stop strings: the release fails on them (llmapi_stop_strings_as_bytes)
    assert isinstance(migrated["total_draft_tokens"], str), migrated  # counters come back as strings
    answer = json.loads(out)
    assert answer["model_name"] == "tensorrt_llm" and answer["text_output"], answer
    # By shape (keys, value types): the answer's words change from run to run.
    stored_output.check(SNIPPETS / "output/generate.out", out if out.endswith("\n") else out + "\n",
                        same=lambda fresh, stored: pagewalk.shape(fresh) == pagewalk.shape(stored))


def test_the_quick_start_is_the_home_pages_first_link_and_first_in_the_nav():
    home = (ROOT / "docs/index.md").read_text()
    first = re.search(r"\]\(([^)#]+)", home)
    assert first and first.group(1) == "speculative_decoding/quickstart.md", first
    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text())["nav"]
    pages = [p for item in nav for p in (item.values() if isinstance(item, dict) else [item])]
    start = pages[1]  # after Home
    assert isinstance(start, list) and next(iter(start[0].values())) == "speculative_decoding/quickstart.md", start


def _published_ports(path: Path) -> list[str]:
    """Every port mapping (``-p``/``--publish`` with a value of digits, dots and colons) in a shell
    snippet: ``mkdir -p DIR`` and the like are not port mappings."""
    words = _words(path)
    out = [words[i + 1] for i, w in enumerate(words[:-1]) if w in ("-p", "--publish")]
    out += [w.split("=", 1)[1] for w in words if w.startswith("--publish=")]
    return [v for v in out if re.fullmatch(r"[\d.:]+", v)]


def test_no_copied_docker_run_publishes_a_port_on_every_host_interface():
    """Triton, trtllm-serve and JupyterLab have no authentication: a copied command publishes to the
    host's loopback (127.0.0.1:HOST:CONTAINER), never HOST:CONTAINER (every interface)."""
    shells = [p for p in (ROOT / "snippets").rglob("*.sh") if "docker run" in p.read_text()]
    assert len(shells) >= 4 and sum(len(_published_ports(p)) for p in shells) >= 13, shells
    problems = [f"{p.relative_to(ROOT)}: -p {v}" for p in shells for v in _published_ports(p)
                if not v.startswith("127.0.0.1:")]
    assert not problems, "\n".join(problems)
    # Notebook cells run commands too (a page shows its commands from snippets/, checked above; its
    # prose may name -p 8000:8000 as what not to copy).
    for notebook in (ROOT / "notebooks").glob("*.py"):
        assert not re.search(r"-p\s+\d+:\d+", notebook.read_text()), f"{notebook}: a port published on every interface"


def test_the_acceptance_step_serves_the_same_keys_and_measures_through_trtllm_serve(tmp_path):
    """Step 6 as written, with trtllm-serve, pkill and pgrep stood in by programs on PATH: Triton is
    stopped first, trtllm-serve gets the YAML it wrote, and check_acceptance.py measures through /metrics
    (tests/fake_trtllm_serve.py: records with the iteration statistics' fields, draft counts at 0 as on 1.1.0)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    bin_dir, work = tmp_path / "bin", tmp_path / "workspace"
    bin_dir.mkdir()
    work.mkdir()
    (work / "check_acceptance.py").write_text((ROOT / "snippets/acceptance/check_acceptance.py").read_text())
    calls = tmp_path / "calls"
    fake = ROOT / "tests" / "fake_trtllm_serve.py"
    (bin_dir / "trtllm-serve").write_text(f'#!/bin/sh\necho "trtllm-serve $*" >> {calls}\nexec {sys.executable} {fake} "$@"\n')
    for name in ("pkill", "pgrep", "nvidia-smi"):
        (bin_dir / name).write_text(f'#!/bin/sh\necho "{name} $*" >> {calls}\nexit 1\n')
    for f in bin_dir.iterdir():
        f.chmod(0o755)
    step = (SNIPPETS / "check_serve.sh").read_text().replace("/workspace/", f"{work}/").replace(":8000", f":{port}")
    step = step.replace("--port 8000", f"--port {port}").replace("python3 ", f"{sys.executable} ")
    done = subprocess.run(["bash", "-c", step], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", FAKE_SPEC_COUNTS="0"))
    assert done.returncode == 0, done.stdout + done.stderr
    log = calls.read_text().splitlines()
    # Triton goes first, and its launcher and backend processes with it
    assert log[:4] == ["pkill -x tritonserver", "pgrep -x tritonserver", "pgrep -x mpirun",
                       "pgrep -f [t]riton_python_backend_stub"], log
    serve = next(line for line in log if line.startswith("trtllm-serve "))
    assert f"--extra_llm_api_options {work}/serve_check.yaml" in serve and "--host 127.0.0.1" in serve
    written = yaml.safe_load((work / "serve_check.yaml").read_text())
    model_yaml = yaml.safe_load(_model_yaml_body(MODEL_YAML[FIRST]))
    assert written["enable_iter_perf_stats"] is True
    assert written["speculative_config"] == model_yaml["speculative_config"]  # the same keys as model.yaml
    assert written["disable_overlap_scheduler"] == model_yaml["disable_overlap_scheduler"]
    # two built-in prompts, each 16 tokens in 6 iterations: (32 - 2) / (12 - 2) = 3.00 tokens per step after the first
    assert "measured by iterations: 32 tokens in 12 iterations from /metrics over 2 requests" in done.stdout, done.stdout
    assert "acceptance length 3.00" in done.stdout and "acceptance rate 0.500" in done.stdout, done.stdout
    assert "specDecodingStats" not in done.stdout  # 1.1.0 leaves the draft counts at 0: no line for them


def test_the_check_script_goes_into_the_quick_starts_container():
    """Step 6's copy names the container step 1 starts and the path step 6 runs the script from."""
    words = _words(SNIPPETS / "copy_check.sh")
    name = _words(DOCKER_RUN[FIRST])[_words(DOCKER_RUN[FIRST]).index("--name") + 1]
    assert words == ["docker", "cp", "check_acceptance.py", f"{name}:/workspace/check_acceptance.py"], words
    for step in ("check_triton.sh", "check_serve.sh"):
        assert "python3 /workspace/check_acceptance.py" in (SNIPPETS / step).read_text(), step
