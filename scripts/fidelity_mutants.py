"""Break the CPU stand-in on purpose, one fact at a time, and check that its fidelity test fails.

A fidelity test asserts that the stand-in (src/specdec_guide/engine/, the launcher in triton.py)
answers as the pinned release, fact by fact of the behaviour record. A test that still passes when
the stand-in answers otherwise proves nothing: it asserts what Triton enforces by itself, or it
takes its expected value from the very record the stand-in reads (so both move together), or the
tracks it runs over hold the same values. Each :class:`Mutant` below is a small source patch (old
text -> new text) that makes the stand-in answer otherwise for one fact, with the tests that must
then fail. ``old`` must occur exactly once: when the source changes, the mutant must be kept
current (the run fails on a patch that no longer applies).

Each mutant is applied to a fresh copy of ``src/`` in a temporary folder, never to the working
tree, and only its tests run, with ``PYTHONPATH`` naming the copy. That reaches every process the
stand-in runs in: the test process imports the copy first (``PYTHONPATH`` comes before the editable
install's path entry), ``repo render`` copies the copy's engine/model.py into the model repository,
that model.py puts ``PYTHONPATH`` in front of the Python stub's path, and the engine host is a
``python -m`` child with the same environment. The canary mutants prove it once per run: one
breaks model.py (the stub), one the engine (the engine host), one the launcher (the test process).
Before the mutants, the same tests run once on an unpatched copy and must pass.

    python scripts/fidelity_mutants.py                 # every mutant (starts a tritonserver per mutant)
    python scripts/fidelity_mutants.py --list          # names, facts and tests
    python scripts/fidelity_mutants.py --check         # only: does every patch still apply?
    python scripts/fidelity_mutants.py NAME [NAME ...] # some mutants

Exit status: 0 when every mutant is killed; 1 when one survived, a patch no longer applies, or a
named test is gone; 2 when a named test fails on the unpatched copy (its mutants are left unjudged,
the others still run).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
FIDELITY = "tests/test_stand_in_fidelity.py"
LLMAPI = "tests/test_triton_llmapi.py"
MODEL_PY = "src/specdec_guide/engine/model.py"
CORE_PY = "src/specdec_guide/engine/core.py"
CONFIG_PY = "src/specdec_guide/engine/config.py"
REQUESTS_PY = "src/specdec_guide/engine/requests.py"
TRITON_PY = "src/specdec_guide/triton.py"
RECORD_110 = "src/specdec_guide/schemas/1.1.0/behaviour/triton_model.yaml"
LLM_RECORD_110 = "src/specdec_guide/schemas/1.1.0/behaviour/llm_api.yaml"
# The tracks the per-track fidelity tests run over (tests/registry.py reads the same registry), so that a new
# track's tests are among those each per-track mutant must fail.
TRACKS = tuple(t["id"] for t in yaml.safe_load(
    (ROOT / "src/specdec_guide/schemas/tracks.yaml").read_text(encoding="utf-8"))["tracks"])
SAMPLERS = ("TorchSampler-ngram", "TRTLLMSampler-trtllmsampler")


@dataclass(frozen=True)
class Edit:
    path: str  # relative to the repository root, under src/
    old: str
    new: str


@dataclass(frozen=True)
class Mutant:
    name: str
    fact: str
    answers: str  # what the stand-in answers under the mutant
    edits: tuple[Edit, ...]
    tests: tuple[str, ...]  # pytest node ids that must fail (or error) under it
    canary: bool = False  # proves that the copy is what runs in one of the stand-in's processes
    server: bool = True  # whether its tests start a tritonserver
    note: str = ""


def fid(test: str, *params: str) -> tuple[str, ...]:
    """Node ids of a test of tests/test_stand_in_fidelity.py, one per parameter id (none: the test)."""
    return tuple(f"{FIDELITY}::{test}[{p}]" for p in params) or (f"{FIDELITY}::{test}",)


def per_track(test: str, prefix: str = "") -> tuple[str, ...]:
    return fid(test, *(f"{prefix}{t}" for t in TRACKS))


def one(path: str, old: str, new: str) -> tuple[Edit, ...]:
    return (Edit(path, old, new),)


MUTANTS: tuple[Mutant, ...] = (
    # -- canaries: the copy runs where the stand-in runs ------------------------------------------
    Mutant("error-prefix", "llmapi_error_shape", "errors without the release's 'Error generating request: ' prefix",
           one(MODEL_PY, 'ERROR_PREFIX = "Error generating request: "', 'ERROR_PREFIX = "Request failed: "'),
           per_track("test_FACT_llmapi_error_shape_on_generate", "streaming-not-decoupled-")
           + per_track("test_FACT_llmapi_error_shape_on_generate", "max_tokens-0-")
           + per_track("test_FACT_llmapi_error_shape_code_on_infer"),
           canary=True, note="model.py runs in the Triton Python stub"),
    Mutant("top-p-zero-greedy", "llmapi_top_p_zero_refused", "top_p 0 decodes greedily",
           one(CORE_PY, '.get("top_p_zero") == "request_error":', '.get("top_p_zero") == "greedy":'),
           per_track("test_FACT_llmapi_top_p_zero_refused"),
           canary=True, note="the engine runs in the launcher's engine host"),
    Mutant("launcher-keeps-auto-complete", "launcher_disables_auto_complete",
           "the launcher leaves auto-complete on",
           one(TRITON_PY, 'behaviour.value("launcher_disables_auto_complete", True))',
               'behaviour.value("launcher_disables_auto_complete", True)) and False'),
           fid("test_FACT_launcher_disables_auto_complete"),
           canary=True, server=False, note="the launcher runs in the test process"),
    Mutant("track-ignored-by-model-py", "(per track) every fact model.py follows",
           "each model follows the default track's record, whatever track its model.yaml names",
           one(MODEL_PY, "self.release = _release_facts(cfg.track)", 'self.release = _release_facts("")'),
           ("tests/test_engine_model_py.py::test_each_model_follows_the_record_of_the_track_its_model_yaml_names",),
           server=False, note="the tracks' records agree on every fact the stand-in reads, so no served answer can "
           "tell; the test makes the record differ by track"),
    # -- streaming --------------------------------------------------------------------------------
    Mutant("streams-per-step", "llmapi_model_streams_per_step", "one event per decoding step",
           one(MODEL_PY, 'self.per_step = self.release["streams_per_step"] or', "self.per_step = True or"),
           per_track("test_FACT_llmapi_model_streams_per_step")
           + (f"{LLMAPI}::test_generate_stream_snippet_sends_what_the_release_sends",
              f"{LLMAPI}::test_tritonclient_grpc_stream_snippet")),
    Mutant("record-streams-per-step", "llmapi_model_streams_per_step",
           "the 1.1.0 record, and with it the stand-in, says one event per step",
           one(RECORD_110, "    value: false\n    source: [model_py_b35a, llm_generate_async_110",
               "    value: true\n    source: [model_py_b35a, llm_generate_async_110"),
           fid("test_FACT_llmapi_model_streams_per_step", "1.1.0")
           + (f"{LLMAPI}::test_generate_stream_snippet_sends_what_the_release_sends",
              f"{LLMAPI}::test_tritonclient_grpc_stream_snippet")),
    Mutant("decoupled-from-policy", "llmapi_decoupled_from_model_yaml",
           "the streaming check follows the policy Triton runs, not model.yaml",
           one(MODEL_PY, "self.decoupled = cfg.triton.decoupled", "self.decoupled = self.served_decoupled"),
           per_track("test_FACT_llmapi_decoupled_from_model_yaml")
           + (f"{LLMAPI}::test_launch_script_flag_ignores_triton_config",)),
    Mutant("stream-text-deltas", "llmapi_stream_text_is_cumulative", "each event carries only its step's text",
           one(CORE_PY, "text = self.decode(out)", "text = self.decode(step.tokens)"),
           fid("test_teaching_departures_only_when_asked_and_labelled")),
    # -- errors and the model's own checks ------------------------------------------------------
    Mutant("error-code-invalid-arg", "llmapi_error_shape", "errors with code INVALID_ARG (HTTP 400 on /infer)",
           one(MODEL_PY, '_error(f"{ERROR_PREFIX}{err}", "INTERNAL", self.text_dtype)',
               '_error(f"{ERROR_PREFIX}{err}", "INVALID_ARG", self.text_dtype)'),
           per_track("test_FACT_llmapi_error_shape_code_on_infer")),
    Mutant("streaming-unchecked", "llmapi_model_checks", "a streaming request to a non-decoupled model is served",
           one(MODEL_PY, "if parsed.streaming and not self.decoupled:", "if False:"),
           per_track("test_FACT_llmapi_error_shape_on_generate", "streaming-not-decoupled-")),
    Mutant("max-tokens-0-accepted", "llmapi_error_shape", "max_tokens 0 is served",
           one(REQUESTS_PY, '_int("sampling_param_max_tokens", get("sampling_param_max_tokens"), 1)',
               '_int("sampling_param_max_tokens", get("sampling_param_max_tokens"), 0)'),
           per_track("test_FACT_llmapi_error_shape_on_generate", "max_tokens-0-")),
    Mutant("text-input-2d-accepted", "llmapi_model_checks", "a batched model serves a [1, n] text_input",
           one(MODEL_PY, "if arr.ndim > 1:", "if False:"),
           fid("test_FACT_llmapi_model_checks_text_input_1d")),
    # -- request values ---------------------------------------------------------------------------
    Mutant("record-top-p-zero-greedy", "llmapi_top_p_zero_refused",
           "the 1.1.0 record, and with it the stand-in, says top_p 0 is greedy",
           one(RECORD_110, "value: {top_p_zero: request_error,", "value: {top_p_zero: greedy,"),
           fid("test_FACT_llmapi_top_p_zero_refused", "1.1.0")),
    Mutant("max-tokens-refused", "llmapi_max_tokens_clamped", "a max_tokens beyond the room is refused",
           one(CORE_PY, '.get("over_room") != "clamped":', '.get("over_room") == "clamped":'),
           per_track("test_FACT_llmapi_max_tokens_clamped")),
    Mutant("max-tokens-clamped-silently", "llmapi_max_tokens_clamped", "the clamp logs no warning",
           one(MODEL_PY, 'for warning in getattr(chunk, "warnings", ()):', "for warning in ():"),
           per_track("test_FACT_llmapi_max_tokens_clamped")),
    Mutant("record-max-tokens-refused", "llmapi_max_tokens_clamped",
           "the 1.1.0 record, and with it the stand-in, says an oversized max_tokens is refused",
           one(RECORD_110, "value: {over_room: clamped,", "value: {over_room: refused,"),
           fid("test_FACT_llmapi_max_tokens_clamped", "1.1.0")),
    Mutant("stop-strings-honoured", "llmapi_stop_strings_as_bytes", "sampling_param_stop stops the text",
           one(MODEL_PY, '.get("stop_elements") == "str":', '.get("stop_elements") != "str":'),
           per_track("test_FACT_llmapi_stop_strings_as_bytes")),
    Mutant("record-stop-strings-honoured", "llmapi_stop_strings_as_bytes",
           "the 1.1.0 record, and with it the stand-in, says the stop strings work",
           one(RECORD_110, "value: {stop_elements: bytes, outcome: request_error}",
               "value: {stop_elements: str, outcome: stops}"),
           fid("test_FACT_llmapi_stop_strings_as_bytes", "1.1.0")),
    # -- outputs and counters ---------------------------------------------------------------------
    Mutant("perf-output-missing", "llmapi_perf_outputs", "the last perf output is not sent",
           one(MODEL_PY, 'for name in self.release["perf_outputs"]:', 'for name in self.release["perf_outputs"][:-1]:'),
           per_track("test_FACT_llmapi_perf_outputs_and_counters_as_strings")),
    Mutant("record-perf-output-missing", "llmapi_perf_outputs",
           "the 1.1.0 record, and with it the stand-in, has no acceptance_rate output",
           one(RECORD_110, "last_token_time_ns, acceptance_rate, total_accepted_draft_tokens",
               "last_token_time_ns, total_accepted_draft_tokens"),
           fid("test_FACT_llmapi_perf_outputs_and_counters_as_strings", "1.1.0")),
    Mutant("counters-as-numbers", "llmapi_counters_as_strings", "perf outputs in their declared dtypes (numbers)",
           one(MODEL_PY, 'tensors.append(self._tensor("text_output", [str(metrics[name])], name=name))',
               "tensors.append(self._tensor(name, [metrics[name]]))"),
           per_track("test_FACT_llmapi_perf_outputs_and_counters_as_strings")),
    Mutant("kv-cache-reused", "llmapi_kv_cache_counter_values", "the stand-in's count reports every block reused",
           one(MODEL_PY, '"kv_cache_reused_block": 0,', '"kv_cache_reused_block": blocks,'),
           per_track("test_FACT_llmapi_kv_cache_counter_values")),
    Mutant("kv-cache-unlabelled", "llmapi_kv_cache_counter_values", "the load log does not say the count is its own",
           one(MODEL_PY, "reused), not the release's: \"", 'reused): "'),
           per_track("test_FACT_llmapi_kv_cache_counter_values")),
    Mutant("draft-counters-always-filled", "per_request_draft_counters_filled",
           "the draft counters are filled with TorchSampler too",
           one(MODEL_PY, 'return bool(value.get(sampler, value.get("TorchSampler", False)))', "return True"),
           per_track("test_FACT_per_request_draft_counters_filled", "TorchSampler-ngram-")),
    Mutant("draft-counters-never-filled", "per_request_draft_counters_filled",
           "the draft counters are zero with TRTLLMSampler too",
           one(MODEL_PY, "if not self.counters_filled:", "if True:"),
           per_track("test_FACT_per_request_draft_counters_filled", "TRTLLMSampler-trtllmsampler-")),
    Mutant("record-draft-counters-filled", "per_request_draft_counters_filled",
           "the 1.1.0 record, and with it the stand-in, says TorchSampler fills the counters",
           one(LLM_RECORD_110, "    value: {TorchSampler: false, TRTLLMSampler: true}\n    source: [pr_17082",
               "    value: {TorchSampler: true, TRTLLMSampler: true}\n    source: [pr_17082"),
           fid("test_FACT_per_request_draft_counters_filled", "TorchSampler-ngram-1.1.0")),
    Mutant("penalties-always-applied", "penalties_applied_by_sampler", "TorchSampler applies the penalties",
           one(CONFIG_PY, "applied = bool(value.get(sampler, False)) if isinstance(value, dict) else bool(value)",
               "applied = True"),
           per_track("test_FACT_penalties_applied_by_sampler", "TorchSampler-ngram-")),
    Mutant("penalties-never-applied", "penalties_applied_by_sampler", "TRTLLMSampler ignores the penalties",
           one(CONFIG_PY, "applied = bool(value.get(sampler, False)) if isinstance(value, dict) else bool(value)",
               "applied = False"),
           per_track("test_FACT_penalties_applied_by_sampler", "TRTLLMSampler-trtllmsampler-")),
    Mutant("record-penalties-applied", "penalties_applied_by_sampler",
           "the 1.1.0 record, and with it the stand-in, says TorchSampler applies the penalties",
           one(RECORD_110, '    value: {TorchSampler: false, TRTLLMSampler: true}\n    does_not_work: ["input:sampling_param_frequency',
               '    value: {TorchSampler: true, TRTLLMSampler: true}\n    does_not_work: ["input:sampling_param_frequency'),
           fid("test_FACT_penalties_applied_by_sampler", "TorchSampler-ngram-1.1.0")),
    Mutant("penalties-refused", "llmapi_penalties_honoured", "a request with penalties is refused",
           one(REQUESTS_PY, "penalties[penalty] = _float(name, get(name))",
               "raise RequestError(f'{name} is not supported')"),
           fid("test_FACT_penalties_applied_by_sampler", *(f"{s}-{t}" for s in SAMPLERS for t in TRACKS))),
    Mutant("cumulative-logprob-number", "llmapi_cumulative_logprob_value", "cumulative_logprob is a number",
           one(MODEL_PY, '[str(self.release["cumulative_logprob"])]', '["0.0"]'),
           per_track("test_FACT_llmapi_cumulative_logprob_value")),
    Mutant("record-cumulative-logprob-number", "llmapi_cumulative_logprob_value",
           "the 1.1.0 record, and with it the stand-in, says cumulative_logprob is a number",
           one(RECORD_110, '    value: "None"', '    value: "0.0"'),
           fid("test_FACT_llmapi_cumulative_logprob_value", "1.1.0")),
    Mutant("lead-cumulative-logprob-number", "llmapi_cumulative_logprob_value",
           "the fact is missing from the 1.1.0 record and its lead (RELEASE_FALLBACKS), which the stand-in "
           "follows, says a number",
           (Edit(RECORD_110, "  llmapi_cumulative_logprob_value:\n", "  llmapi_cumulative_logprob_value_gone:\n"),
            Edit(CONFIG_PY, '"llmapi_cumulative_logprob_value": "None",', '"llmapi_cumulative_logprob_value": "0.0",')),
           fid("test_FACT_llmapi_cumulative_logprob_value", "1.1.0")),
    # -- teaching departures ------------------------------------------------------------------------
    Mutant("departure-ignored", "(teaching) stream_per_step", "cpu_behaviour stream_per_step is not honoured",
           one(MODEL_PY, 'or "stream_per_step" in self.shows', "or False"),
           fid("test_teaching_departures_only_when_asked_and_labelled")),
    Mutant("departure-unlabelled", "(teaching) label", "the load log does not name the departures",
           one(MODEL_PY, "departures asked: {shown}", "{shown}"),
           fid("test_teaching_departures_only_when_asked_and_labelled")),
    # -- model.yaml per track, loading, the launcher ----------------------------------------------
    Mutant("track-ignored", "(per-track snapshot) speculative_model on 1.2.1",
           "every model.yaml is read as the default track's",
           one(CONFIG_PY, "    track = track_of(doc)\n", "    track = track_of(doc) and \"1.1.0\"\n"),
           fid("test_a_121_speculative_model_loads_on_the_121_track"),
           note="a model of the session server then fails to load: the test errors in its setup"),
    Mutant("schema-unchecked", "(per-track snapshot) speculative_model on 1.1.0",
           "a 1.1.0 model.yaml with speculative_model loads",
           one(CONFIG_PY, "    _schema_check(doc, doc.text, track)  #", "    pass  #"),
           fid("test_FACT_load_failures_with_the_launcher") + fid("test_FACT_load_failures_with_auto_complete")),
    Mutant("decoupled-defaulted", "llmapi_triton_config_required_keys",
           "initialize() defaults a missing triton_config.decoupled",
           one(MODEL_PY, 'if "decoupled" not in cfg.triton.present:', "if False:"),
           fid("test_FACT_load_failures_with_the_launcher")),
    Mutant("auto-complete-keys-defaulted", "llmapi_triton_config_required_keys",
           "auto_complete_config defaults missing triton_config keys",
           one(MODEL_PY, "            if not have:\n", "            if False:\n"),
           fid("test_FACT_load_failures_with_auto_complete")),
    Mutant("policy-not-forced", "auto_complete_policy_conflict_fails",
           "auto_complete_config leaves a conflicting policy in config.pbtxt alone",
           one(MODEL_PY, "auto_complete_model_config.set_model_transaction_policy(dict(decoupled=bool(settings.decoupled)))",
               "pass"),
           fid("test_FACT_load_failures_with_auto_complete")),
    Mutant("record-launcher-keeps-auto-complete", "launcher_disables_auto_complete",
           "the 1.1.0 record, and with it the launcher, says auto-complete stays on",
           one(RECORD_110, "    value: true\n    source: [launch_script_0a2e",
               "    value: false\n    source: [launch_script_0a2e"),
           fid("test_FACT_launcher_disables_auto_complete")
           + ("tests/test_stand_in_fidelity.py::test_the_record_says_what_the_fidelity_tests_expect[1.1.0]",),
           server=False),
    Mutant("record-121-top-p-zero-greedy", "llmapi_top_p_zero_refused",
           "the 1.2.1 record, and with it the stand-in's 1.2.1 models, says top_p 0 is greedy",
           one(RECORD_110.replace("1.1.0", "1.2.1"), "value: {top_p_zero: request_error,", "value: {top_p_zero: greedy,"),
           fid("test_FACT_llmapi_top_p_zero_refused", "1.2.1"),
           note="each track's case follows its own track's record"),
)


# -- running -------------------------------------------------------------------------------------
def by_name(names) -> list[Mutant]:
    known = {m.name: m for m in MUTANTS}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise SystemExit(f"unknown mutant(s): {', '.join(unknown)} (--list names them)")
    return [known[n] for n in names] if names else list(MUTANTS)


#: Copied for each run (the tests must match the source they test); the rest is linked.
COPIED = ("src", "tests")
NOT_LINKED = (".git", ".mutation")


def copy_tree(dest: Path, origin: Path = ROOT) -> Path:
    """A copy of the checkout at ``dest``: src/ and tests/ copied (bytecode left out), every other
    top-level entry linked (the package reads data beside src/, model_repo_templates/ for one).
    Returns ``dest``."""
    dest.mkdir(parents=True)
    for name in COPIED:
        shutil.copytree(origin / name, dest / name, symlinks=True,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"))
    for entry in ROOT.iterdir():
        if entry.name not in COPIED + NOT_LINKED:
            (dest / entry.name).symlink_to(entry)
    return dest


def stale_edits(mutant: Mutant, root: Path = ROOT) -> list[str]:
    """What keeps the mutant from applying to the files under ``root`` (empty: it applies)."""
    problems = []
    for edit in mutant.edits:
        if not edit.path.startswith("src/"):
            problems.append(f"{edit.path}: a mutant patches the stand-in's source (src/) only")
            continue
        path = root / edit.path
        text = path.read_text(encoding="utf-8") if path.is_file() else ""
        count = text.count(edit.old)
        if count != 1:
            problems.append(f"{edit.path}: {edit.old!r} occurs {count} times (the mutant must be kept current)")
    return problems


def apply(mutant: Mutant, root: Path) -> None:
    """Apply the mutant to the copy under ``root`` (a folder holding src/)."""
    for edit in mutant.edits:
        path = root / edit.path
        path.write_text(path.read_text(encoding="utf-8").replace(edit.old, edit.new, 1), encoding="utf-8")


def env_for(root: Path) -> dict[str, str]:
    # Run from inside a test (the CPU tier's check), the inner pytest is not an xdist worker.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_XDIST", "PYTEST_CURRENT"))}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(root / "src"), env.get("PYTHONPATH", "")) if p)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def imported_from(root: Path) -> str:
    """Where the package is imported from with the copy on PYTHONPATH (must be the copy)."""
    done = subprocess.run([sys.executable, "-c", "import specdec_guide; print(specdec_guide.__file__)"],
                          cwd=root, env=env_for(root), capture_output=True, text=True, timeout=120)
    return done.stdout.strip() or done.stderr.strip()


_OUTCOME = re.compile(r"^(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS) (\S+::\S+)")


@dataclass
class Run:
    outcomes: dict[str, str] = field(default_factory=dict)
    rc: int = 0
    seconds: float = 0.0
    tail: str = ""


def run_tests(root: Path, tests, timeout: float) -> Run:
    """Run only ``tests`` in the copy at ``root``, in one process, the copy's src/ on PYTHONPATH;
    the outcome of each node id."""
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rA", "--no-header",
           "-o", "addopts=", *tests]
    t0 = time.monotonic()
    try:
        done = subprocess.run(cmd, cwd=root, env=env_for(root), capture_output=True, text=True, timeout=timeout)
        out, rc = done.stdout + done.stderr, done.returncode
    except subprocess.TimeoutExpired as err:
        out, rc = f"{err.stdout or ''}{err.stderr or ''}\ntimed out after {timeout:g}s", 124
    lines = out.splitlines()
    reasons = [line for line in lines if line.startswith("E ")][:12]  # pytest's "E   " lines: why a test failed
    run = Run(rc=rc, seconds=time.monotonic() - t0, tail="\n".join(reasons + lines[-30:]))
    for line in out.splitlines():
        if m := _OUTCOME.match(line):
            run.outcomes[m.group(2)] = m.group(1)
    return run


def collected(root: Path, tests) -> set[str]:
    """The node ids pytest collects from the files ``tests`` name (one unknown id would stop a run)."""
    files = sorted({t.split("::")[0] for t in tests})
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--collect-only",
                           "-o", "addopts=", *files], cwd=root, env=env_for(root), capture_output=True, text=True,
                          timeout=300)
    return {line.strip() for line in done.stdout.splitlines() if "::" in line}


def verdict(mutant: Mutant, run: Run) -> tuple[str, str]:
    """('killed' | 'survived' | 'missing', detail). Killed: every named test failed or errored."""
    got = {t: run.outcomes.get(t) for t in mutant.tests}
    missing = [t for t, o in got.items() if o is None]
    if missing:
        return "missing", f"no outcome for {', '.join(missing)} (renamed? pytest rc {run.rc})"
    passed = [t for t, o in got.items() if o not in ("FAILED", "ERROR")]
    if passed:
        return "survived", "passed under the mutant: " + ", ".join(passed)
    errored = [t for t, o in got.items() if o == "ERROR"]
    return "killed", ("errored (setup): " + ", ".join(errored)) if errored else "failed"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="mutants to run (default: all)")
    parser.add_argument("--list", action="store_true", help="list the mutants and their tests")
    parser.add_argument("--check", action="store_true", help="only check that every patch applies")
    parser.add_argument("--no-server", action="store_true", help="only the mutants whose tests start no server")
    parser.add_argument("--no-baseline", action="store_true", help="skip the unpatched run of the tests")
    parser.add_argument("--timeout", type=float, default=900, help="seconds per pytest run")
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args(argv)
    mutants = [m for m in by_name(args.names) if not (args.no_server and m.server)]

    if args.list:
        for m in mutants:
            print(f"{m.name}  [{m.fact}]  {m.answers}\n    " + "\n    ".join(m.tests))
        return 0
    if args.check:
        stale = {m.name: p for m in mutants if (p := stale_edits(m))}
        for name, problems in stale.items():
            print(f"STALE     {name}: " + "; ".join(problems))
        print(f"{len(mutants) - len(stale)} of {len(mutants)} mutants apply")
        return 1 if stale else 0

    t_start = time.monotonic()
    results: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="fidelity-mutants-") as tmp:
        # One snapshot for the whole run: others may edit the checkout meanwhile, and every mutant
        # must differ from the baseline by its own patch only.
        snapshot = copy_tree(Path(tmp) / "snapshot")
        stale = {m.name: p for m in mutants if (p := stale_edits(m, snapshot))}
        for name, problems in stale.items():
            print(f"STALE     {name}: " + "; ".join(problems), flush=True)
        runnable = [m for m in mutants if m.name not in stale]
        known = collected(snapshot, [t for m in runnable for t in m.tests])
        for m in runnable:
            if gone := [t for t in m.tests if t not in known]:
                results[m.name] = {"status": "missing", "detail": "no such test: " + ", ".join(gone)}
                print(f"MISSING   {m.name}: {results[m.name]['detail']}", flush=True)
        runnable = [m for m in runnable if m.name not in results]
        base = copy_tree(Path(tmp) / "baseline", snapshot)
        where = imported_from(base)
        if not where.startswith(str(base / "src")):
            print(f"the copy does not win: specdec_guide is imported from {where}")
            return 2
        if not args.no_baseline:
            tests = list(dict.fromkeys(t for m in runnable for t in m.tests))
            run = run_tests(base, tests, args.timeout)
            bad = {t: run.outcomes.get(t, "no outcome") for t in tests if run.outcomes.get(t) != "PASSED"}
            print(f"baseline: {len(tests) - len(bad)} of {len(tests)} tests pass unpatched ({run.seconds:.0f}s)",
                  flush=True)
            if bad:  # a mutant of a test that fails unpatched cannot be judged; the others still can
                for t, o in bad.items():
                    print(f"  {o}: {t}")
                print("    " + run.tail.replace("\n", "\n    "), flush=True)
                for m in runnable:
                    if set(m.tests) & set(bad):
                        results[m.name] = {"status": "unjudged", "detail": "a named test fails unpatched"}
                runnable = [m for m in runnable if m.name not in results]
        shutil.rmtree(base)
        for m in runnable:
            root = copy_tree(Path(tmp) / m.name, snapshot)
            apply(m, root)
            run = run_tests(root, m.tests, args.timeout)
            status, detail = verdict(m, run)
            results[m.name] = {"status": status, "detail": detail, "seconds": round(run.seconds, 1),
                               "fact": m.fact, "tests": list(m.tests), "canary": m.canary}
            print(f"{status.upper():9} {m.name} ({run.seconds:.0f}s): {detail}", flush=True)
            if status != "killed" or "errored" in detail:
                print("    " + run.tail.replace("\n", "\n    "), flush=True)
            shutil.rmtree(root)
    for name in stale:
        results[name] = {"status": "stale", "detail": "; ".join(stale[name])}
    counts = {s: sum(r["status"] == s for r in results.values())
              for s in ("killed", "survived", "missing", "stale", "unjudged")}
    canaries = [n for n, r in results.items() if r.get("canary") and r["status"] != "killed"]
    print(f"{counts['killed']} killed, {counts['survived']} survived, "
          f"{counts['missing']} missing tests, {counts['unjudged']} unjudged, "
          f"{counts['stale']} stale patches; {time.monotonic() - t_start:.0f}s in all")
    if canaries:
        print(f"canary not killed ({', '.join(canaries)}): the copy may not be what runs; judge no survivor")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    if counts["unjudged"]:
        return 2
    return 0 if counts["killed"] == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
