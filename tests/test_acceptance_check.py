"""snippets/acceptance/check_acceptance.py, the reader's acceptance check, against real servers.

- The CPU stand-in of the llmapi model as the pinned releases answer: counters unfilled and one
  streamed event, so the script must say no measure is available (exit 3) and why.
- The stand-in's later-release model (filled counters, one event per step): both measures apply and
  must agree with each other, and the counters with what the server itself returns.
- A stand-in of trtllm-serve whose /metrics records have the fields of the iteration statistics
  (a JSON list of iteration statistics, drained when read; tests/fake_trtllm_serve.py): the
  iteration measure's arithmetic.
The script is standard library only: a reader copies it without this package.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
import threading
import urllib.request
from pathlib import Path

import pytest
import stored_output

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "snippets" / "acceptance" / "check_acceptance.py"
# The output the quick start shows (make regen WHAT=test-outputs stores a fresh one: stored_output.py).
SHOWN = ROOT / "snippets" / "acceptance" / "output" / "check_acceptance_triton.out"


def _run(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=timeout)


def test_the_script_needs_nothing_but_the_standard_library():
    tree = ast.parse(SCRIPT.read_text())
    names = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    names |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert names <= set(sys.stdlib_module_names) | {"__future__"}, names


def test_on_the_pinned_releases_behaviour_it_says_no_measure_is_available(stand_in_server):
    """The command the calculator page shows, against the stand-in's model as the release serves it
    (the template's own model, named as the container names it)."""
    # The quick start's step, as written, against the stand-in's draft_target model.
    step = (ROOT / "snippets" / "quickstart" / "check_triton.sh").read_text()
    assert "python3 /workspace/check_acceptance.py --triton http://localhost:8000 --max-draft-len 4" in step
    step = step.replace("/workspace/check_acceptance.py", str(SCRIPT)).replace(
        "--triton http://localhost:8000", f"--triton {stand_in_server.http_url} --model draft_target")
    done = subprocess.run(["bash", "-c", step], capture_output=True, text=True, timeout=300)
    assert done.returncode == 3, done.stdout + done.stderr
    assert "counters: not available: drafted 0, accepted 0 on every request" in done.stdout
    assert "steps: not available: one event for 64 tokens" in done.stdout
    assert "no acceptance measure is available" in done.stdout
    # What the page shows: the same run, with the stand-in's port and model name as a reader's would be.
    shown = done.stdout.replace(stand_in_server.http_url, "http://localhost:8000")
    shown = shown.replace("model draft_target,", "model tensorrt_llm,")
    stored_output.check(SHOWN, shown)


def _release_models() -> list[str]:
    """The stand-in's model of every CPU method, as the default track serves it with its default sampler."""
    from stand_in import fidelity_name

    from registry import default_track

    return [fidelity_name(default_track(), "ngram"), "draft_target", "user_provided"]


@pytest.mark.parametrize("model", _release_models())
def test_every_method_as_the_pinned_release_serves_it_has_no_measure_on_triton(stand_in_server, model):
    done = _run("--triton", stand_in_server.http_url, "--model", model, "--max-draft-len", "4", "--max-tokens", "8")
    assert done.returncode == 3, done.stdout + done.stderr
    assert "drafted 0, accepted 0 on every request" in done.stdout and "one event for 8 tokens" in done.stdout


def test_ngram_with_trtllmsampler_is_measured_by_its_counters(stand_in_server):
    """The behaviour record says TRTLLMSampler fills the per-request counters on the pinned releases
    (per_request_draft_counters_filled): the session's ngram model asks for it."""
    done = _run("--triton", stand_in_server.http_url, "--model", "ngram", "--max-draft-len", "4", "--max-tokens", "16",
                "--prompt", "a b c d a b c d a b c d a b c d")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1].startswith("measured by counters: "), done.stdout


def _generate(url: str, model: str, prompt: str, max_tokens: int) -> dict:
    body = {"text_input": prompt, "sampling_param_max_tokens": max_tokens,
            "sampling_param_exclude_input_from_output": True, "sampling_param_return_perf_metrics": True}
    req = urllib.request.Request(f"{url}/v2/models/{model}/generate", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=120) as r:
        return json.loads(r.read())


def test_on_a_later_release_the_counters_and_the_steps_agree(stand_in_server):
    from stand_in import LATER_DRAFT_TARGET

    url, prompt = stand_in_server.http_url, "a b c d e f g a b c d e f g a b c d"
    done = _run("--triton", url, "--model", LATER_DRAFT_TARGET, "--max-draft-len", "4", "--max-tokens", "12",
                "--prompt", prompt)
    assert done.returncode == 0, done.stdout + done.stderr
    # The counters the server itself returns for the same request (Draft/Target: the prompt alone decides)
    out = _generate(url, LATER_DRAFT_TARGET, prompt, 12)
    drafted, accepted = int(float(out["total_draft_tokens"])), int(float(out["total_accepted_draft_tokens"]))
    assert drafted > 0
    assert f"measured by counters: {accepted} of {drafted} draft tokens accepted over 1 requests" in done.stdout
    # The step measure, forced by a server whose counters it cannot use: the same model streamed per step.
    from importlib.util import module_from_spec, spec_from_file_location

    spec = spec_from_file_location("check_acceptance", SCRIPT)
    mod = module_from_spec(spec)
    spec.loader.exec_module(mod)
    line = mod.triton_steps(url, LATER_DRAFT_TARGET, (prompt,), 12, 4)
    length = float(line.split("acceptance length ")[1].split()[0])
    # Counters: each generation step yields its accepted drafts plus one token: the same acceptance length.
    steps_after_first = round((12 - 1 - accepted) / 1)  # tokens after the first, less the accepted ones
    assert steps_after_first > 0
    assert length == pytest.approx((12 - 1) / steps_after_first, abs=0.01), (line, accepted)


@pytest.fixture
def fake_serve():
    from fake_trtllm_serve import Handler
    from loopback import served

    with served(Handler) as url:
        yield url


def test_trtllm_serve_iterations_give_tokens_per_step(fake_serve):
    done = _run("--openai", fake_serve, "--model", "m", "--max-draft-len", "4", "--prompt", "p", timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    # (16 - 1) / (6 - 1) = 3.00 tokens per step after the first; (3 - 1) / 4 = 0.5
    assert "16 tokens in 6 iterations" in done.stdout and "acceptance length 3.00" in done.stdout, done.stdout
    assert "acceptance rate 0.500" in done.stdout and "10 of 20 draft tokens accepted (0.500)" in done.stdout


def test_an_unreachable_server_is_one_line_and_status_2():
    done = _run("--triton", "http://127.0.0.1:9", "--max-draft-len", "4", timeout=60)
    assert done.returncode == 2 and "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("args, message", [
    (["--openai", "localhost", "--model", "m"], "starts with http:// or https://"),
])
def test_a_url_without_a_scheme_is_refused(args, message):
    done = _run(*args, "--max-draft-len", "4", timeout=60)
    assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr, done


def test_a_port_that_is_not_http_is_one_line_not_a_traceback():
    """Triton's gRPC port (8001 in step 1) answers bytes that are not HTTP: one line, status 2."""
    import socket

    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    port = srv.getsockname()[1]

    def answer():
        conn, _ = srv.accept()
        conn.recv(1024)
        conn.sendall(b"\x00\x00\x18\x04\x00\x00\x00\x00\x00")  # an HTTP/2 (gRPC) SETTINGS frame
        conn.close()

    threading.Thread(target=answer, daemon=True).start()
    try:
        done = _run("--triton", f"http://127.0.0.1:{port}", "--max-draft-len", "4", timeout=60)
    finally:
        srv.close()
    assert done.returncode == 2 and "Traceback" not in done.stderr, done
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
