"""The guide's Triton flow end to end: templates -> `repo render --engine cpu` -> real tritonserver.

One server serves every runnable method for the whole module (a server's start imports torch and
transformers in its engine host, and loads each model: seconds of CPU on 2 cores). The guide's
snippet files under snippets/triton/ are executed as they are, with TRITON_HTTP_PORT /
TRITON_GRPC_PORT pointing at this server.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import yaml
from processes import descendants, procs
from release_answers import answer
from stand_in import NO_POLICY, POLICY, SYNC

from specdec_guide import templates
from specdec_guide.releases.tracks import Registry
from specdec_guide.diagnostics import UserError
from specdec_guide.triton import TritonServer, free_ports
from registry import default_track, methods

pytestmark = pytest.mark.triton
ROOT = Path(__file__).resolve().parents[1]
SNIPPETS = ROOT / "snippets" / "triton"
DRAFTER = ROOT / "snippets" / "drafters" / "prompt_lookup_drafter.py"
SPECULATIVE = tuple(methods(on=default_track(), cpu_engine=True, speculative=True))
# Repetitive and non-repetitive prompts: lookup-based drafters hit on the first kind only.
PROMPTS = [
    # The snippets' prompt: SmolLM2's chat template around a question.
    "<|im_start|>user\nWhat is the capital of France?<|im_end|>\n<|im_start|>assistant\n",
    "The quick brown fox jumps over the lazy dog. The quick brown",
    "def add(a, b):\n    return a + b\n\ndef sub(a, b):\n    return a - b\n\ndef mul(a, b):\n",
    "Q: What is speculative decoding?\nA:",
    "abc abc abc abc abc",
]
MAX_TOKENS = 32  # as the snippets ask
GENERATE_SH_PROMPT = PROMPTS[0].replace("France", "Germany")  # generate.sh asks another question


@pytest.fixture(scope="module")
def server(stand_in_server):
    """The session's tritonserver (tests/stand_in.py): tensorrt_llm (baseline, decoupled, the name
    the snippets use), ngram, draft_target, user_provided (decoupled) and SYNC (decoupled: false)."""
    return stand_in_server


def _post(url: str, body, timeout: float = 120) -> tuple[int, str]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


def generate(server, model: str, prompt: str, **params) -> dict:
    body = {"text_input": prompt, "sampling_param_max_tokens": MAX_TOKENS,
            "sampling_param_exclude_input_from_output": True, **params}
    status, text = _post(f"{server.http_url}/v2/models/{model}/generate", body)
    assert status == 200, text
    return json.loads(text)


def _metric(response: dict, name: str) -> float:
    value = response[name]
    return float(value[0] if isinstance(value, list) else value)  # the llmapi model sends strings


def _run_snippet(server, name: str, **env) -> str:
    path = SNIPPETS / name
    cmd = ["bash", "-e", str(path)] if path.suffix == ".sh" else [sys.executable, str(path)]
    env = dict(os.environ, TRITON_HTTP_PORT=str(server.http_port), TRITON_GRPC_PORT=str(server.grpc_port), **env)
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"{name} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


# -- the guide's snippets ---------------------------------------------------------------------
def test_health_snippet(server):
    out = _run_snippet(server, "health.sh")
    assert "server ready" in out and "model ready" in out


def test_generate_snippet(server):
    out = json.loads(_run_snippet(server, "generate.sh"))
    assert out["model_name"] == "tensorrt_llm"
    expected = generate(server, "tensorrt_llm", GENERATE_SH_PROMPT)["text_output"]
    assert out["text_output"] == expected and expected


def test_generate_metrics_snippet_on_the_baseline_reports_no_drafts(server):
    out = json.loads(_run_snippet(server, "generate_metrics.sh"))
    assert _metric(out, "total_draft_tokens") == 0 and _metric(out, "total_accepted_draft_tokens") == 0
    # As TensorRT-LLM's llmapi model sends them: text_output's dtype, so JSON strings.
    assert all(isinstance(out[k], str) for k in ("total_draft_tokens", "total_accepted_draft_tokens", "acceptance_rate"))


def test_generate_stream_snippet_sends_what_the_release_sends(server):
    out = _run_snippet(server, "generate_stream.sh")
    events = [json.loads(line[len("data: "):]) for line in out.splitlines() if line.startswith("data: ")]
    assert all("error" not in e for e in events), out
    # The pinned releases pass `streaming` into generate_async's lora_request slot: one event, the
    # whole text (behaviour fact llmapi_model_streams_per_step; per-step after TRT-LLM PR #14079).
    # The stand-in reads that fact from the record: the expected answer is the tests' own entry.
    assert (len(events) > 1) == answer(default_track(), "llmapi_model_streams_per_step"), out
    final = generate(server, "tensorrt_llm", PROMPTS[0])["text_output"]
    assert events[-1]["text_output"] == final


def test_tritonclient_http_snippet_needs_a_non_decoupled_model(server):
    out = _run_snippet(server, "client_http.py", TRITON_MODEL=SYNC)
    expected = generate(server, "tensorrt_llm", PROMPTS[0])["text_output"]
    assert f"text_output: {expected}\n" in out
    # The same client against a decoupled model: Triton refuses /infer, as the snippet says.
    done = subprocess.run([sys.executable, str(SNIPPETS / "client_http.py")], capture_output=True, text=True,
                          env=dict(os.environ, TRITON_HTTP_PORT=str(server.http_port)), timeout=60)
    assert done.returncode != 0 and "doesn't support models with decoupled transaction policy" in done.stderr


def test_tritonclient_grpc_stream_snippet(server):
    for model in ("tensorrt_llm", "ngram"):
        rows = [json.loads(line) for line in _run_snippet(server, "client_grpc_stream.py", TRITON_MODEL=model).splitlines()]
        assert (len(rows) > 1) == answer(default_track(), "llmapi_model_streams_per_step"), rows
        final = generate(server, "tensorrt_llm", PROMPTS[0])["text_output"]
        assert rows[-1]["text_output"] == final
        assert all(final.startswith(row["text_output"]) for row in rows)  # cumulative, not deltas
        counters = ("total_draft_tokens", "total_accepted_draft_tokens", "acceptance_rate")
        # Every row carries the counters so far, as strings, and they never go down.
        assert all(isinstance(row[k], str) for row in rows for k in counters), rows
        drafted = [int(row["total_draft_tokens"]) for row in rows]
        assert drafted == sorted(drafted)


def test_tritonclient_grpc_unary_on_the_non_decoupled_model(server):
    import numpy as np
    import tritonclient.grpc as grpcclient

    client = grpcclient.InferenceServerClient(server.grpc_address)
    text = grpcclient.InferInput("text_input", [1], "BYTES")
    text.set_data_from_numpy(np.array([PROMPTS[1].encode()], dtype=np.object_))
    limit = grpcclient.InferInput("sampling_param_max_tokens", [1], "INT32")
    limit.set_data_from_numpy(np.array([MAX_TOKENS], dtype=np.int32))
    excl = grpcclient.InferInput("sampling_param_exclude_input_from_output", [1], "BOOL")
    excl.set_data_from_numpy(np.array([True]))
    result = client.infer(SYNC, [text, limit, excl])
    assert result.as_numpy("text_output")[0].decode() == generate(server, "tensorrt_llm", PROMPTS[1])["text_output"]
    with pytest.raises(Exception, match="decoupled"):
        client.infer("tensorrt_llm", [text, limit, excl])


# -- speculative decoding: exactness and metrics ----------------------------------------------
@pytest.mark.parametrize("method", SPECULATIVE)
def test_greedy_output_is_identical_to_the_baseline(server, method):
    for prompt in PROMPTS:
        base = generate(server, "tensorrt_llm", prompt)["text_output"]
        spec = generate(server, method, prompt)["text_output"]
        assert spec == base, f"{method} differs on {prompt!r}"


@pytest.mark.parametrize("method", SPECULATIVE)
def test_acceptance_metrics_are_present_and_consistent(server, method):
    """Filled on `ngram` (TRTLLMSampler), zeros on the others (auto: TorchSampler), as the release."""
    filled = method == "ngram"
    drafted_total = 0
    for prompt in PROMPTS:
        out = generate(server, method, prompt, sampling_param_return_perf_metrics=True)
        drafted, accepted = _metric(out, "total_draft_tokens"), _metric(out, "total_accepted_draft_tokens")
        rate = _metric(out, "acceptance_rate")
        assert 0 <= accepted <= drafted
        assert rate == pytest.approx(accepted / drafted if drafted else 0.0, abs=1e-3)
        drafted_total += drafted
    assert (drafted_total > 0) == filled, f"{method}: {drafted_total} draft tokens counted"
    out = generate(server, method, PROMPTS[0])
    assert "total_draft_tokens" not in out  # only when asked for, as the llmapi model does


# -- bad requests -----------------------------------------------------------------------------
# Rejected by the CPU engine (model.py), after Triton accepted the JSON, in the release's shape:
# "Error generating request: ..." with code INTERNAL (llmapi_error_shape). The CPU tritonserver
# (2.51) answers any model error on /generate with 400; the container's status there is not settled
# (llmapi_error_http_status_generate), so the pages tell readers to read the message.
ENGINE_REJECTS = [
    {"sampling_param_max_tokens": 0},
    {"sampling_param_max_tokens": -5},
    # 2**32 - 1 wraps to -1 on its way to the INT32 input (below)
    {"sampling_param_max_tokens": 4_294_967_295},
]
# Rejected by tritonserver before the model sees them. Triton 2.51 (our CPU server) answers a
# missing input with 400 but a JSON value it cannot convert to the input's type with 500.
TRITON_REJECTS = [
    ({"drop_text_input": True}, 400, "missing required input(s) ['text_input']"),
    ({"sampling_param_max_tokens": 1.5}, 500, "Unable to parse"),
    ({"sampling_param_max_tokens": "ten"}, 500, "Unable to parse"),
    ({"text_input": 42}, 500, "Unable to parse"),
    ({"sampling_param_temperature": "hot"}, 500, "Unable to parse"),
    ({"streaming": "yes"}, 500, "Unable to parse"),
]


def _bad(server, endpoint: str, fields: dict) -> tuple[int, str]:
    body = {"text_input": PROMPTS[2], **fields}
    if body.pop("drop_text_input", False):
        del body["text_input"]
    return _post(f"{server.http_url}/v2/models/tensorrt_llm/{endpoint}", body)


@pytest.mark.parametrize("fields", ENGINE_REJECTS, ids=lambda f: f"max_tokens={f['sampling_param_max_tokens']}")
@pytest.mark.parametrize("endpoint", ["generate", "generate_stream"])
def test_engine_rejects_bad_values_in_the_release_shape_and_keeps_serving(server, endpoint, fields):
    status, text = _bad(server, endpoint, fields)
    assert status == 400, text
    error = json.loads(text[len("data: "):] if text.startswith("data: ") else text)["error"]
    assert error.startswith("Error generating request: ") and "sampling_param_max_tokens" in error
    assert generate(server, "tensorrt_llm", PROMPTS[2])["text_output"]


@pytest.mark.parametrize("fields, status, message", TRITON_REJECTS, ids=lambda v: json.dumps(v) if isinstance(v, dict) else str(v))
def test_triton_rejects_malformed_requests_with_a_message(server, fields, status, message):
    got, text = _bad(server, "generate", fields)
    assert got == status and message in json.loads(text)["error"], (got, text)
    assert generate(server, "tensorrt_llm", PROMPTS[2])["text_output"]


def test_int32_overflow_wraps_silently_before_the_model_sees_it(server):
    # Triton's JSON -> INT32 conversion keeps the low 32 bits: 99999999999 arrives as 1215752191,
    # which the release clamps to the room after the prompt (llmapi_max_tokens_clamped): the
    # server log's warning names a number the client never sent. (A prompt near the tiny model's
    # 1024 positions keeps that room short.)
    status, text = _bad(server, "generate", {"text_input": "abc " * 248, "sampling_param_max_tokens": 99_999_999_999})
    assert status == 200, text
    assert "sampling_param_max_tokens=1215752191 is larger than the room after the prompt" in server.log()
    status, text = _bad(server, "generate", {"sampling_param_max_tokens": 4_294_967_295})
    assert status == 400 and "sampling_param_max_tokens must be >= 1, got -1" in text


def test_plain_max_tokens_is_silently_ignored(server):
    """The upstream pitfall: only input names reach the model; `max_tokens` is a request parameter."""
    body = {"text_input": PROMPTS[2], "sampling_param_exclude_input_from_output": True}
    status, default = _post(f"{server.http_url}/v2/models/tensorrt_llm/generate", body)
    status2, ignored = _post(f"{server.http_url}/v2/models/tensorrt_llm/generate", {**body, "max_tokens": 3})
    assert status == status2 == 200
    assert json.loads(ignored)["text_output"] == json.loads(default)["text_output"]
    assert len(json.loads(ignored)["text_output"]) > 3  # one token per byte: > 3 chars is > 3 tokens


def test_invalid_json_body(server):
    status, text = _post(f"{server.http_url}/v2/models/tensorrt_llm/generate", b"{not json")
    assert status >= 400 and "failed to parse the request JSON" in text


def test_streaming_flag_on_a_non_decoupled_model_is_refused(server):
    status, text = _post(f"{server.http_url}/v2/models/{SYNC}/generate",
                         {"text_input": "hi", "streaming": True, "sampling_param_max_tokens": 4})
    assert status == 400 and "Error generating request: Streaming is only supported in decoupled mode." in text


# -- load under concurrency -------------------------------------------------------------------
def test_32_concurrent_clients_10_requests_each(server):
    errors: list[str] = []
    results: dict[tuple[int, int], str] = {}
    models = ["tensorrt_llm", *SPECULATIVE]

    def client(i: int) -> None:
        for j in range(10):
            model = models[(i + j) % len(models)]
            body = {"text_input": PROMPTS[(i + j) % len(PROMPTS)], "sampling_param_max_tokens": 6,
                    "sampling_param_exclude_input_from_output": True}
            try:
                status, text = _post(f"{server.http_url}/v2/models/{model}/generate", body, timeout=300)
            except Exception as err:  # noqa: BLE001 - every failure is reported below
                errors.append(f"{model}: {err!r}")
                continue
            if status != 200:
                errors.append(f"{model}: {status} {text}")
            else:
                results[(i, j)] = json.loads(text)["text_output"]

    threads = [threading.Thread(target=client, args=(i,)) for i in range(32)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    assert not errors, errors[:5]
    assert len(results) == 320
    # Same prompt, same answer, whichever method and however busy the server was.
    by_prompt: dict[int, set[str]] = {}
    for (i, j), text in results.items():
        by_prompt.setdefault((i + j) % len(PROMPTS), set()).add(text)
    assert all(len(texts) == 1 for texts in by_prompt.values()), by_prompt
    assert server.proc.poll() is None


# -- models that must not load ----------------------------------------------------------------
def test_models_that_cannot_load_fail_with_file_and_reason(tmp_path, tiny_models):
    """EAGLE-3 / MTP (need TensorRT-LLM) and an unknown decoding_type, in one server start.
    Only the three serve (each model that loads costs its engine's load): model.py comes from a
    baseline rendered beside the repository."""
    target, _ = tiny_models
    repo = tmp_path / "repo"
    baseline = templates.render("baseline", model=str(target), out=tmp_path / "rendered")
    for name, method in (("eagle3", "eagle3"), ("mtp", "mtp"), ("unknown", "ngram")):
        # Render refuses eagle3/mtp for the CPU engine; copy them by hand, as a reader might.
        model = repo / name
        (model / "1").mkdir(parents=True)
        config = (templates.template_dir(method) / "config.pbtxt").read_text()
        (model / "config.pbtxt").write_text(config.replace('name: "tensorrt_llm"', f'name: "{name}"'))
        text = (templates.template_dir(method) / "1/model.yaml").read_text()
        text = text.replace("${MODEL}", str(target)).replace("${DRAFT_MODEL}", str(target))
        if name == "unknown":
            text = text.replace("decoding_type: NGram", "decoding_type: Ngram3000")
        (model / "1/model.yaml").write_text(text)
        (model / "1/model.py").write_bytes((baseline / "1/model.py").read_bytes())
    assert sorted(p.name for p in repo.iterdir()) == ["eagle3", "mtp", "unknown"]
    server = TritonServer(repo, timeout=180)
    try:
        with pytest.raises(UserError) as err:
            server.start()
    finally:
        server.stop()  # also when the start unexpectedly succeeded
    first = str(err.value).splitlines()[0]
    assert "model 'eagle3' failed to load" in first and "EAGLE-3" in first
    assert "model 'mtp' failed to load" in first and "MTP" in first
    assert "model 'unknown' failed to load" in first and "Ngram3000" in first
    assert f"{repo / 'unknown/1/model.yaml'}:" in first  # the file (and line) of the bad key
    assert server.proc is None and not server.shm_files()


def test_malformed_rendered_config_pbtxt_fails_with_line_and_column(tmp_path, tiny_models):
    target, _ = tiny_models
    model = templates.render("baseline", model=str(target), out=tmp_path / "repo")
    config = model / "config.pbtxt"
    config.write_text(config.read_text().replace("data_type: TYPE_BOOL", "data_type: TYPE_BOOLEAN", 1))
    with pytest.raises(UserError) as err:
        TritonServer(tmp_path / "repo", timeout=60).start()
    bad_line = next(i for i, t in enumerate(config.read_text().splitlines(), 1) if "TYPE_BOOLEAN" in t)
    first = str(err.value).splitlines()[0]
    m = re.search(re.escape(str(config)) + r":(\d+):(\d+): (.*)", first)
    assert m and 'Unknown enumeration value of "TYPE_BOOLEAN" for field "data_type"' in m.group(3), first
    # protobuf reports the position after the bad value: here, the next line's first token.
    assert int(m.group(1)) in (bad_line, bad_line + 1)


def test_rendered_model_yaml_is_what_the_engine_reads(server):
    doc = yaml.safe_load((server.repo / "user_provided/1/model.yaml").read_text())
    assert doc["triton_config"]["cpu_drafter"] == "prompt_lookup_drafter.py:PromptLookupDrafter"
    assert (server.repo / "user_provided/1/prompt_lookup_drafter.py").is_file()


# -- the reader's own start-up path -------------------------------------------------------------
def test_page_flow_tiny_models_render_serve_generate(stand_in_server, tmp_path, tiny_models):
    """render.sh, serve.sh, generate.sh in a fresh folder as the guide's page shows them, on the
    tiny target (TARGET) to stay fast; only the ports are moved, through the environment.
    (tests/test_page_walk.py follows the whole page on the real model.)"""
    env = dict(os.environ, SPECDEC_ENGINE_THREADS="1", TARGET=str(tiny_models[0]))
    for snippet in ("render.sh",):
        done = subprocess.run(["bash", "-e", str(SNIPPETS / snippet)], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=180)
        assert done.returncode == 0, f"{snippet}: {done.stderr}"
    assert (tmp_path / "repo_ngram/tensorrt_llm/1/model.yaml").is_file()
    http, grpc, metrics = free_ports(3)
    env.update(TRITON_HTTP_PORT=str(http), TRITON_GRPC_PORT=str(grpc), TRITON_METRICS_PORT=str(metrics))
    proc = subprocess.Popen(["bash", "-e", str(SNIPPETS / "serve.sh")], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    tree: list[int] = []
    try:
        seen = []
        for line in proc.stdout:
            seen.append(line)
            if line.startswith("Ctrl-C"):
                break
        assert f"http://127.0.0.1:{http}" in "".join(seen), "".join(seen) + proc.stderr.read()
        out = subprocess.run(["bash", "-e", str(SNIPPETS / "generate.sh")], capture_output=True, text=True,
                             env=dict(os.environ, TRITON_HTTP_PORT=str(http)), timeout=60)
        assert out.returncode == 0, out.stderr
        # NGram behind the name tensorrt_llm: greedy, so the baseline's text exactly.
        assert json.loads(out.stdout)["text_output"] == generate(stand_in_server, "tensorrt_llm", GENERATE_SH_PROMPT)["text_output"]
        tree = descendants(proc.pid)  # `triton up`, tritonserver, the model's stub, the engine host, its engine
        # The engine is forked from the host without exec: both run `-m specdec_guide.engine.host`.
        forked = [pid for pid in tree if b"specdec_guide.engine.host" in Path(f"/proc/{pid}/cmdline").read_bytes()]
        parent = {pid: ppid for pid, ppid, _ in procs()}
        hosts = [pid for pid in forked if parent.get(pid) not in forked]
        assert len(hosts) == 1 and [pid for pid in forked if parent.get(pid) == hosts[0]], (tree, forked)
        assert len(tree) >= 5
    finally:
        os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C in the terminal sends to bash and `triton up`
        try:
            rc = proc.wait(timeout=60)
        except subprocess.TimeoutExpired:  # not stopped in order: still take it all down (tritonserver
            os.killpg(proc.pid, signal.SIGKILL)  # dies with `triton up`: PR_SET_PDEATHSIG), then fail
            proc.wait()
            raise
    stderr = proc.stderr.read()
    assert rc == 0 and "stopping tritonserver" in stderr, stderr
    # An orderly stop leaves nothing alive: not the server, its stubs, the engine host or its engines
    # (a killed process may still be a zombie until PID 1 reaps it: dead all the same).
    alive = {pid for pid, _, _ in procs()}
    assert not [pid for pid in tree if pid in alive]
    assert not [f for f in Path("/dev/shm").iterdir() if any(f.name.startswith(f"specdec{pid}x") for pid in tree)]


def test_launch_script_flag_ignores_triton_config(server, tmp_path, tiny_models):
    """TRT-LLM's launch_triton_server.py passes --disable-auto-complete-config (and so does our
    launcher by default); with a config.pbtxt that has no policy (as upstream's llmapi folder ships
    it), model.yaml's triton_config (decoupled: true) never reaches Triton, and validate says so.
    The release's model.py still checks streaming against model.yaml, so a streaming request is
    accepted, and answered once. A rendered repository carries the policy in config.pbtxt.
    On the session server: NO_POLICY is the baseline without the policy, tensorrt_llm as rendered."""
    from specdec_guide.validate.runner import validate_paths

    target, _ = tiny_models
    rendered = templates.render("baseline", model=str(target), out=tmp_path / "repo", name="rendered")
    model = templates.render("baseline", model=str(target), out=tmp_path / "repo", force=True)
    policy = "model_transaction_policy {\n  decoupled: true\n}\n"
    assert policy == POLICY and policy in (rendered / "config.pbtxt").read_text()
    (model / "config.pbtxt").write_text((model / "config.pbtxt").read_text().replace(policy, ""))
    report = validate_paths([model / "config.pbtxt"], root=tmp_path, is_verified=lambda p: True)
    assert [d.message for d in report.diagnostics if "launch_triton_server.py" in d.message], report.diagnostics
    # The served copies are these two files.
    assert (server.repo / "tensorrt_llm/config.pbtxt").read_text() == (rendered / "config.pbtxt").read_text().replace(
        'name: "rendered"', 'name: "tensorrt_llm"')
    served_no_policy = (server.repo / NO_POLICY / "config.pbtxt").read_text()
    assert served_no_policy == (model / "config.pbtxt").read_text().replace('name: "tensorrt_llm"', f'name: "{NO_POLICY}"')
    srv = server
    assert not srv.auto_complete
    for name, decoupled in (("tensorrt_llm", True), (NO_POLICY, False)):
        with urllib.request.urlopen(f"{srv.http_url}/v2/models/{name}/config", timeout=30) as r:
            config = json.loads(r.read())
        assert bool(config.get("model_transaction_policy", {}).get("decoupled", False)) is decoupled, name
    status, text = _post(f"{srv.http_url}/v2/models/{NO_POLICY}/generate_stream",
                         {"text_input": "hi", "streaming": True, "sampling_param_max_tokens": 4})
    assert status == 200 and text.count("data: ") == 1 and "error" not in text, text
    assert Registry().resolve(None).behaviour.value("llmapi_decoupled_from_model_yaml")
    assert (f"{srv.repo / NO_POLICY / '1' / 'model.yaml'}: triton_config.decoupled is True but Triton runs the model "
            "with decoupled=False") in srv.log()
    status, text = _post(f"{srv.http_url}/v2/models/tensorrt_llm/generate_stream",
                         {"text_input": "hi", "streaming": True, "sampling_param_max_tokens": 4})
    assert status == 200 and text.count("data: ") == 1 and "error" not in text, text
