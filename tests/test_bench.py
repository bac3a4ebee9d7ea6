"""Benchmarking: AIPerf (with our endpoint plugin) against the real tritonserver, reading its
exports, and the request that genai-perf's TensorRT-LLM mode sends.

The AIPerf tests need ``.venv-aiperf`` (``make aiperf``; ``make test`` makes it first). The
others need only the guide's own environment.
"""

from __future__ import annotations

import json
import queue
import re
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import pytest

from specdec_guide.bench import results, run_aiperf
from specdec_guide.diagnostics import UserError
from stand_in import LATER_DRAFT_TARGET

ROOT = Path(__file__).resolve().parents[1]
SNIPPETS = ROOT / "snippets" / "bench"
PROMPTS = {
    "repetitive": ["abc abc abc abc abc", "def add(a, b):\n    return a + b\n\ndef sub(a, b):\n    return a - b\n"],
    "open": ["Q: What is speculative decoding?\nA:"],
}
MAX_TOKENS = 16


def _aiperf_missing() -> str | None:
    try:
        run_aiperf.aiperf_bin(ROOT)
    except UserError as err:
        return str(err)
    return None


needs_aiperf = pytest.mark.skipif(_aiperf_missing() is not None, reason=str(_aiperf_missing()))


@pytest.fixture(scope="module")
def server(stand_in_server):
    """The session's tritonserver (tests/stand_in.py). The AIPerf plugin's handling of per-step events
    and counters is what is tested, so it profiles LATER_DRAFT_TARGET, which streams per step with
    filled counters as a release after TensorRT-LLM PR #14079 / #17082 would (the pinned releases
    send one event and zeros: tests/test_stand_in_fidelity.py). Draft/Target, not NGram: NGram's
    pool is shared across requests (is_public_pool), so its counters depend on the order requests
    arrive in, while a draft model's depend on the prompt alone."""
    return stand_in_server


def _post(url: str, body: dict) -> tuple[int, dict]:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"{}")


def _generate(server, model: str, prompt: str) -> dict:
    status, body = _post(f"{server.http_url}/v2/models/{model}/generate", {
        "text_input": prompt, "sampling_param_max_tokens": MAX_TOKENS,
        "sampling_param_exclude_input_from_output": True, "sampling_param_return_perf_metrics": True})
    assert status == 200, body
    return body


# -- AIPerf end to end ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def aiperf(server, tiny_models, tmp_path_factory):
    """(results folder, AIPerf temp folders left behind): the page's AIPerf command against the
    session server's LATER_DRAFT_TARGET at concurrency 2 (one level: AIPerf writes into OUT itself;
    the notebook runs the sweep, which writes OUT/concurrency_<n>/)."""
    if (why := _aiperf_missing()) is not None:
        pytest.skip(why)
    out = tmp_path_factory.mktemp("aiperf")
    texts = [t for group in PROMPTS.values() for t in group]
    prompts = run_aiperf.write_prompts(out / "prompts.jsonl", texts, MAX_TOKENS)
    before = set(Path(tempfile.gettempdir()).glob("aiperf_mmap_*"))
    run_aiperf.profile(triton_http=server.http_address, model=LATER_DRAFT_TARGET, tokenizer=tiny_models[0],
                       prompts=prompts, out=out / "results", concurrency=(2,), requests=len(texts), timeout=480,
                       root=ROOT)
    return out / "results", set(Path(tempfile.gettempdir()).glob("aiperf_mmap_*")) - before


@pytest.fixture(scope="module")
def aiperf_run(aiperf):
    """The AIPerf run's results folder."""
    return aiperf[0]


@needs_aiperf
def test_aiperf_leaves_nothing_in_the_temp_dir(aiperf):
    """AIPerf 0.13.0 writes a memory-map folder per level into the temp dir and leaves it: run_aiperf
    gives it a temp dir of its own and removes it."""
    assert aiperf[1] == set()


@needs_aiperf
def test_aiperf_runs_each_concurrency_level_without_errors(aiperf_run):
    assert results.run_dirs(aiperf_run) == [aiperf_run]
    runs = [results.summary(d) for d in results.run_dirs(aiperf_run)]
    assert [r.concurrency for r in runs] == [2]
    for r in runs:
        assert r.requests == 3 and r.errors == 0
        assert r.ttft_ms > 0 and r.itl_ms >= 0 and r.output_tokens_per_s > 0 and r.requests_per_s > 0
        # On an idle machine the tiny model's steps can come so close together that AIPerf reads
        # several events in one chunk (ITL 0, TTFT = latency); that the events were per step is
        # shown by the responses AIPerf recorded for each request.
        assert r.latency_ms >= r.ttft_ms
    profiled = [row for _, row in results.profiled_records(aiperf_run)]
    assert profiled and all(len(row.get("responses") or []) > 1 for row in profiled), \
        [len(row.get("responses") or []) for row in profiled]


@needs_aiperf
def test_aiperf_paces_its_requests_and_still_keeps_the_concurrency_in_flight(aiperf_run):
    """With --concurrency alone AIPerf 0.13.0 takes its concurrency-burst path, whose loop polls for
    a free slot without sleeping (a busy core). The command's constant rate puts it on the paced
    path; the requests in flight still reach the level and never pass it."""
    log = (aiperf_run / "logs" / "aiperf.log").read_text()
    assert "Creating interval generator: pattern=constant, rate=1000.0" in log, log[-2000:]
    spans = [(row["metadata"]["request_start_ns"], row["metadata"]["request_end_ns"])
             for _, row in results.profiled_records(aiperf_run)]
    assert len(spans) == 3
    in_flight = max(sum(1 for s, e in spans if s <= start < e) for start, _ in spans)
    assert in_flight == 2, spans


@needs_aiperf
def test_streamed_text_is_counted_once(aiperf_run, server, tiny_models):
    """The llmapi model streams the text so far; the plugin must count each token once: AIPerf's
    output length per request equals the token count of the same request's /generate answer."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny_models[0])
    run = results.run_dirs(aiperf_run)[0]
    raw = [json.loads(line) for line in (run / results.RAW).read_text().splitlines()]
    per_request = {json.loads(line)["metadata"]["x_request_id"]: json.loads(line)["metrics"]
                   for line in (run / results.PER_REQUEST).read_text().splitlines()}
    assert raw
    for row in raw:
        assert len(row["responses"]) > 1, "not streamed"
        prompt = row["payload"]["text_input"]
        expected = len(tok(_generate(server, LATER_DRAFT_TARGET, prompt)["text_output"], add_special_tokens=False)["input_ids"])
        assert per_request[row["metadata"]["x_request_id"]]["output_sequence_length"]["value"] == expected


@needs_aiperf
def test_acceptance_from_the_raw_export_matches_the_models_counters(aiperf_run, server):
    run = results.run_dirs(aiperf_run)[0]
    got = results.acceptance(run, PROMPTS)
    for name, texts in PROMPTS.items():
        direct = [_generate(server, LATER_DRAFT_TARGET, t) for t in texts]
        assert got[name].requests == len(texts)
        assert got[name].drafted == sum(int(float(d["total_draft_tokens"])) for d in direct)
        assert got[name].accepted == sum(int(float(d["total_accepted_draft_tokens"])) for d in direct)
        assert got[name].acceptance_length == pytest.approx(
            got[name].output_tokens / (got[name].output_tokens - got[name].accepted))
    assert sum(a.accepted for a in got.values()) > 0, "the tiny draft never agreed: the test shows nothing"


# -- reading exports (no AIPerf needed) -------------------------------------------------------
def _fake_run(folder: Path, events: list[dict], osl: int = 10, prompt: str = "p") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    raw = {"metadata": {"x_request_id": "r1", "benchmark_phase": "profiling"}, "payload": {"text_input": prompt},
           "responses": [{"perf_ns": i, "packets": [{"name": "data", "value": json.dumps(e)}]}
                         for i, e in enumerate(events)]}
    (folder / results.RAW).write_text(json.dumps(raw) + "\n")
    (folder / results.PER_REQUEST).write_text(json.dumps(
        {"metadata": {"x_request_id": "r1"}, "metrics": {"output_sequence_length": {"value": osl}}}) + "\n")
    return folder


def test_acceptance_takes_the_last_counters_and_derives_the_length(tmp_path):
    # TensorRT-LLM's model sends the counters as strings; the last event holds the request's totals.
    run = _fake_run(tmp_path, [{"text_output": "a", "total_draft_tokens": "0", "total_accepted_draft_tokens": "0"},
                               {"text_output": "ab", "total_draft_tokens": "8", "total_accepted_draft_tokens": "6"}])
    got = results.acceptance(run)["all"]
    assert (got.requests, got.output_tokens, got.drafted, got.accepted) == (1, 10, 8, 6)
    assert got.acceptance_rate == pytest.approx(0.75)
    assert got.acceptance_length == pytest.approx(10 / 4)  # 10 tokens in 10 - 6 = 4 target steps


def test_a_warm_up_request_is_left_out_of_the_acceptance(tmp_path):
    # AIPerf marks a --warmup-request-count request's record with benchmark_phase "warmup".
    run = _fake_run(tmp_path, [{"text_output": "ab", "total_draft_tokens": "8", "total_accepted_draft_tokens": "6"}])
    profiled = json.loads((run / results.RAW).read_text())
    warm = {**profiled, "metadata": {"x_request_id": "w1", "benchmark_phase": "warmup"},
            "responses": [{"perf_ns": 0, "packets": [{"name": "data", "value": json.dumps(
                {"text_output": "x", "total_draft_tokens": "4", "total_accepted_draft_tokens": "4"})}]}]}
    (run / results.RAW).write_text(json.dumps(warm) + "\n" + json.dumps(profiled) + "\n")
    got = results.acceptance(run)["all"]
    assert (got.requests, got.drafted, got.accepted) == (1, 8, 6)
    assert [n for n, _ in results.profiled_records(run)] == [2]


def test_a_request_without_counters_is_reported_with_its_line(tmp_path):
    run = _fake_run(tmp_path, [{"text_output": "a"}])
    with pytest.raises(UserError, match=r"profile_export_raw.jsonl:1:1: no total_draft_tokens.*return_perf_metrics"):
        results.acceptance(run)


def test_a_folder_without_aiperf_results_is_a_clear_error(tmp_path):
    with pytest.raises(UserError, match="no AIPerf results"):
        results.run_dirs(tmp_path)


def test_without_the_aiperf_venv_the_error_says_how_to_make_it(tmp_path, monkeypatch):
    monkeypatch.setenv(run_aiperf.ENV_VAR, str(tmp_path / "nowhere"))
    with pytest.raises(UserError, match="run `make aiperf`"):
        run_aiperf.aiperf_bin(ROOT)


# -- genai-perf's TensorRT-LLM mode against the llmapi model -----------------------------------
# genai-perf 0.0.16 (`--service-kind triton --backend tensorrtllm`) has perf_analyzer send the
# inputs of the inflight_batcher_llm model: text_input, max_tokens, exclude_input_in_output and,
# with --streaming, stream. The llmapi model calls them text_input, sampling_param_max_tokens,
# sampling_param_exclude_input_from_output and streaming.
GENAI_PERF_TRTLLM_INPUTS = (("max_tokens", "INT32", np.int32, 16), ("exclude_input_in_output", "BOOL", bool, True),
                            ("stream", "BOOL", bool, True))


def _grpc_stream_error(server, extra_inputs) -> str:
    """Send text_input plus ``extra_inputs`` as perf_analyzer does (gRPC streaming infer: the
    model is decoupled) and return the error Triton answers with."""
    import tritonclient.grpc as grpcclient

    text = grpcclient.InferInput("text_input", [1], "BYTES")
    text.set_data_from_numpy(np.array([b"abc abc abc"], dtype=np.object_))
    inputs = [text]
    for name, dtype, np_type, value in extra_inputs:
        t = grpcclient.InferInput(name, [1], dtype)
        t.set_data_from_numpy(np.array([value], dtype=np_type))
        inputs.append(t)
    answers: queue.Queue = queue.Queue()
    client = grpcclient.InferenceServerClient(server.grpc_address)
    client.start_stream(callback=lambda result, error: answers.put(error or result))
    try:
        client.async_stream_infer("tensorrt_llm", inputs)
        answer = answers.get(timeout=60)
    finally:
        client.stop_stream()
        client.close()
    return str(answer)


def test_genai_perf_tensorrtllm_inputs_are_refused_by_the_llmapi_model(server):
    """Triton refuses an input the model does not declare before the model runs. With several
    unknown inputs it names one of them (not necessarily the first sent)."""
    assert _grpc_stream_error(server, GENAI_PERF_TRTLLM_INPUTS[:1]) == \
        "unexpected inference input 'max_tokens' for model 'tensorrt_llm'"
    assert re.fullmatch(r"unexpected inference input '(max_tokens|exclude_input_in_output|stream)' "
                        r"for model 'tensorrt_llm'", _grpc_stream_error(server, GENAI_PERF_TRTLLM_INPUTS))


def test_max_tokens_in_a_generate_request_is_silently_ignored(server):
    """The same names over the generate extension: no error, and no effect. Keys that are not
    inputs become request parameters, so the answer has the default length and echoes the prompt."""
    prompt = "abc abc abc"
    status, trap = _post(f"{server.http_url}/v2/models/tensorrt_llm/generate",
                         {"text_input": prompt, "max_tokens": 4, "exclude_input_in_output": True})
    assert status == 200, trap
    status, right = _post(f"{server.http_url}/v2/models/tensorrt_llm/generate",
                          {"text_input": prompt, "sampling_param_max_tokens": 4,
                           "sampling_param_exclude_input_from_output": True})
    assert status == 200, right
    from specdec_guide.engine.requests import DEFAULT_MAX_TOKENS

    assert trap["text_output"].startswith(prompt)  # echoed: exclude_input_in_output was ignored
    default = _generate_len(server, prompt, DEFAULT_MAX_TOKENS)
    assert trap["text_output"] == prompt + default  # max_tokens ignored: the default 32 tokens
    assert len(right["text_output"]) < len(default)


def _generate_len(server, prompt: str, n: int) -> str:
    status, body = _post(f"{server.http_url}/v2/models/tensorrt_llm/generate", {
        "text_input": prompt, "sampling_param_max_tokens": n, "sampling_param_exclude_input_from_output": True})
    assert status == 200, body
    return body["text_output"]


# -- predicting the speed-up (the page's worked examples) --------------------------------------
def _predict_speedup(*args: str) -> str:
    """What ``python3 predict_speedup.py ARGS`` prints: the script run as ``__main__`` with its
    argv, in this process (a new interpreter would import torch again: a CPU second per run).
    A SystemExit or an exception fails the calling test."""
    import contextlib
    import io
    import runpy
    import sys

    script = SNIPPETS / "predict_speedup.py"
    argv, sys.argv = sys.argv, [str(script), *args]
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            runpy.run_path(str(script), run_name="__main__")
    finally:
        sys.argv = argv
    return out.getvalue()


@pytest.mark.parametrize("args, expected", [
    (("3.36", "4", "0"), ("per-token acceptance a = 0.800", "drafts 4: 0.590", "predicted speed-up: 3.36x")),
    (("2.0", "4", "0.24"), ("predicted speed-up: 1.02x",)),
    (("3.0", "4", "0.24"), ("predicted speed-up: 1.53x",)),
])
def test_predict_speedup_snippet(args, expected):
    printed = _predict_speedup(*args)
    for line in expected:
        assert line in printed, printed


def test_the_pages_draft_cost_is_the_stored_runs_and_its_examples_are_the_scripts():
    """Reading the numbers types the draft's cost (and the two times it comes from) of the stored H200
    run, and each `predict_speedup.py` example it quotes prints what the page says."""
    import re

    run = json.loads((ROOT / "benchmarks/results/verify_cost.json").read_text())
    target = next(r["ms"] for r in run["target"] if r["batch"] == 1 and r["q"] == 1)
    draft = next(r["ms"] for r in run["draft"] if r["batch"] == 1)
    page = (ROOT / "docs/speculative_decoding/reading_the_numbers.md").read_text()
    cost = f"{draft / target:.2f}"
    assert f"took {cost} of a Llama-3.1-8B-shaped pass at batch 1" in page
    assert f"({draft:.2f} ms against {target:.2f} ms" in page
    examples = re.findall(r"`python3 predict_speedup.py ([\d.]+) (\d+) ([\d.]+)` gives ([\d.]+x)", page)
    assert len(examples) >= 2 and any(c == cost for _, _, c, _ in examples), examples
    for length, k, c, said in examples:
        printed = _predict_speedup(length, k, c)
        assert f"predicted speed-up: {said}" in printed, (length, k, c, printed)


def test_per_token_acceptance_inverts_the_tokens_per_step_formula():
    from specdec_guide.speculation import expected_tokens_per_step, per_token_acceptance_from_length

    for a in (0.0, 0.3, 0.8, 0.99):
        assert per_token_acceptance_from_length(expected_tokens_per_step(a, 4), 4) == pytest.approx(a, abs=1e-6)
    with pytest.raises(ValueError, match="between 1 and draft_len"):
        per_token_acceptance_from_length(6.0, 4)


def test_a_sweep_is_read_in_numeric_concurrency_order(tmp_path):
    for c in (16, 4, 1):
        (tmp_path / f"concurrency_{c}").mkdir()
        (tmp_path / f"concurrency_{c}" / results.SUMMARY).write_text(json.dumps(
            {"input_config": {"phases": [{"kind": "profiling", "concurrency": c}]}, "request_count": {"avg": 3}}))
    dirs = results.run_dirs(tmp_path)
    assert [d.name for d in dirs] == ["concurrency_1", "concurrency_4", "concurrency_16"]
    assert [results.summary(d).concurrency for d in dirs] == [1, 4, 16]


def test_a_summary_reads_request_latency_beside_ttft_and_itl(tmp_path):
    """What the benchmarking notebook shows for the pinned release: with one event per request
    TTFT equals request latency and AIPerf's ITL is 0; the reader keeps all three apart."""
    (tmp_path / results.SUMMARY).write_text(json.dumps({
        "input_config": {"phases": [{"kind": "profiling", "concurrency": 1}]}, "request_count": {"avg": 4},
        "time_to_first_token": {"avg": 512.0}, "request_latency": {"avg": 640.0}, "inter_token_latency": {"avg": 0.0}}))
    s = results.summary(tmp_path)
    assert (s.ttft_ms, s.latency_ms, s.itl_ms) == (512.0, 640.0, 0.0)


def test_prompt_sets_template_only_the_chat_set_and_feed_both_tools(tmp_path):
    from specdec_guide.bench import prompts

    class Tok:
        chat_template = "x"

        def apply_chat_template(self, messages, tokenize, add_generation_prompt):
            assert not tokenize and add_generation_prompt
            return f"<user>{messages[0]['content']}</user><assistant>"

    sets = prompts.rendered_sets(Tok())
    assert sets["code-editing"] == list(prompts.CODE_EDITING)  # plain text, as an editor sends it
    assert sets["chat"] == [f"<user>{q}</user><assistant>" for q in prompts.CHAT]
    texts = sets["code-editing"] + sets["chat"]
    bench = [json.loads(line) for line in prompts.write_trtllm_bench_dataset(tmp_path / "d.jsonl", texts, 7)
             .read_text().splitlines()]
    aiperf = [json.loads(line) for line in run_aiperf.write_prompts(tmp_path / "p.jsonl", texts, 7)
              .read_text().splitlines()]
    assert [b["prompt"] for b in bench] == [a["text"] for a in aiperf] == texts
    assert {b["output_tokens"] for b in bench} == {a["output_length"] for a in aiperf} == {7}
    assert [b["task_id"] for b in bench] == list(range(len(texts)))


def test_the_notebooks_stored_printout_of_the_command_is_the_snippet_today():
    """The benchmarking notebook prints the page's AIPerf command; its run stamp covers the notebook's
    code, not the snippet file, so an edit of the snippet without `make regen` would leave the site
    showing the old command."""
    import nbformat

    notebook = nbformat.read(ROOT / "notebooks" / "08_benchmarking.ipynb", as_version=4)
    printing = [cell for cell in notebook.cells if cell.cell_type == "code"
                and cell.source.strip() == "print((ROOT / run_aiperf.SNIPPET).read_text())"]
    assert len(printing) == 1, "the notebook's cell that prints the AIPerf command is gone or doubled"
    shown = "".join(out.get("text", "") for out in printing[0].outputs if out.get("output_type") == "stream")
    assert shown == (ROOT / run_aiperf.SNIPPET).read_text() + "\n", "re-run it: make regen WHAT=notebooks:08_benchmarking"
