"""engine/model.py (the Triton adapter) against a stand-in for triton_python_backend_utils.

The real server is exercised by tests/test_triton_llmapi.py; this file checks the adapter's
branches quickly and without a server: decoupled or not, streaming, errors, the stop input.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import types
from pathlib import Path

import numpy as np
import pytest
import yaml

import specdec_guide
from registry import registry, tracks

ENGINE_MODEL_PY = Path(specdec_guide.__file__).parent / "engine" / "model.py"
SNAPSHOT = Path(specdec_guide.__file__).parent / "schemas" / "1.1.0" / "triton.yaml"
NP = {"TYPE_STRING": np.object_, "TYPE_FP32": np.float32, "TYPE_INT32": np.int32, "TYPE_INT64": np.int64,
      "TYPE_BOOL": np.bool_, "TYPE_UINT64": np.uint64}


def fake_pb_utils() -> types.ModuleType:
    pb = types.ModuleType("triton_python_backend_utils")

    class TritonError:
        UNKNOWN, INTERNAL, NOT_FOUND, INVALID_ARG, UNAVAILABLE, UNSUPPORTED, ALREADY_EXISTS, CANCELLED = range(8)

        def __init__(self, message, code=None):
            self.message, self.code = message, code

    class InferenceResponse:
        def __init__(self, output_tensors=(), error=None):
            self.outputs = {t.name: t.arr for t in output_tensors}
            self.error = error

    class Tensor:
        def __init__(self, name, arr):
            self.name, self.arr = name, arr

        def as_numpy(self):
            return self.arr

    class Logger:
        lines: list[str] = []
        log_info = log_warn = log_error = staticmethod(lambda msg: Logger.lines.append(msg))

    pb.TritonError, pb.InferenceResponse, pb.Tensor, pb.Logger = TritonError, InferenceResponse, Tensor, Logger
    pb.TritonModelException = type("TritonModelException", (Exception,), {})
    pb.TRITONSERVER_RESPONSE_COMPLETE_FINAL = 1
    pb.get_input_tensor_by_name = lambda request, name: request.inputs.get(name)
    pb.triton_string_to_numpy = lambda s: NP[s]
    pb.using_decoupled_model_transaction_policy = lambda cfg: cfg["model_transaction_policy"]["decoupled"]
    return pb


class Sender:
    def __init__(self):
        self.sent = []

    def send(self, response, flags=0):
        self.sent.append((response, flags))

    def is_cancelled(self):
        return False


class Request:
    def __init__(self, request_id="", **fields):
        self._id = request_id
        self.inputs = {}
        for name, value in fields.items():
            arr = np.array([v.encode() if isinstance(v, str) else v for v in np.atleast_1d(value)],
                           dtype=np.object_ if isinstance(np.atleast_1d(value)[0], str) else None)
            self.inputs[name] = types.SimpleNamespace(as_numpy=lambda a=arr: a)
        self.sender = Sender()

    def request_id(self):
        return self._id

    def get_response_sender(self):
        return self.sender


class AutoComplete:
    def __init__(self):
        self.config = {"max_batch_size": 0}

    def as_dict(self):
        return dict(self.config)

    def set_max_batch_size(self, n):
        self.config["max_batch_size"] = n

    def set_model_transaction_policy(self, policy):
        self.config["model_transaction_policy"] = policy


def load_model_py(tmp_path, monkeypatch, model_yaml: str):
    pb = fake_pb_utils()
    monkeypatch.setitem(__import__("sys").modules, "triton_python_backend_utils", pb)
    version_dir = tmp_path / "tensorrt_llm" / "1"
    version_dir.mkdir(parents=True)
    shutil.copyfile(ENGINE_MODEL_PY, version_dir / "model.py")
    (version_dir / "model.yaml").write_text(model_yaml)
    spec = importlib.util.spec_from_file_location(f"model_py_{id(tmp_path)}", version_dir / "model.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, pb, version_dir


def start(module, version_dir, decoupled: bool):
    outputs = yaml.safe_load(SNAPSHOT.read_text())["llmapi_model"]["outputs"]
    config = {"max_batch_size": 0, "model_transaction_policy": {"decoupled": decoupled},
              "output": [{"name": o["name"], "data_type": o["data_type"]} for o in outputs]}
    model = module.TritonPythonModel()
    model.initialize({"model_config": json.dumps(config), "model_repository": str(version_dir.parent),
                      "model_version": "1"})
    return model


@pytest.fixture
def ngram_yaml(tiny_models):
    target, _ = tiny_models
    return (f"model: {target}\nbackend: pytorch\nspeculative_config:\n  decoding_type: NGram\n"
            "  max_draft_len: 4\n  max_matching_ngram_size: 2\ntriton_config:\n  max_batch_size: 0\n"
            "  decoupled: DECOUPLED\n")


def text(response) -> str:
    return response.outputs["text_output"][0].decode()


def test_auto_complete_copies_triton_config(tmp_path, monkeypatch, ngram_yaml):
    module, _, _ = load_model_py(tmp_path, monkeypatch, ngram_yaml.replace("DECOUPLED", "true"))
    config = module.TritonPythonModel.auto_complete_config(AutoComplete()).config
    assert config == {"max_batch_size": 0, "model_transaction_policy": {"decoupled": True}}


def test_non_decoupled_answers_each_request_once(tmp_path, monkeypatch, ngram_yaml):
    module, pb, vdir = load_model_py(tmp_path, monkeypatch, ngram_yaml.replace("DECOUPLED", "false"))
    model = start(module, vdir, decoupled=False)
    good = Request(text_input="abc abc abc " * 3, sampling_param_max_tokens=np.int32(8),
                   sampling_param_return_perf_metrics=True, return_finish_reason=True)
    zero = Request(text_input="abc", sampling_param_max_tokens=np.int32(0))
    stream = Request(text_input="abc", streaming=True)
    logprob = Request(text_input="abc abc abc", sampling_param_max_tokens=np.int32(4), return_cumulative_logprob=True,
                      sampling_param_presence_penalty=np.float32(2.0))
    ok, bad, refused, with_logprob = model.execute([good, zero, stream, logprob])
    # llmapi_cumulative_logprob_value: the release never asks for log probs, so it sends str(None), as text.
    assert with_logprob.error is None
    assert with_logprob.outputs["cumulative_logprob"].dtype == np.object_
    assert with_logprob.outputs["cumulative_logprob"][0] == b"None"
    assert ok.error is None and text(ok).startswith("abc abc abc")
    assert ok.outputs["finish_reason"][0] == b"length"
    # As the llmapi model sends them: text_output's dtype (strings), whatever config.pbtxt declares,
    # the five kv_cache_* counters included (the stand-in's own cache: new blocks, none reused).
    assert ok.outputs["acceptance_rate"].dtype == np.object_
    assert ok.outputs["total_draft_tokens"].dtype == np.object_
    assert ok.outputs["kv_cache_reused_block"][0] == b"0"
    # Prompt and output in 32-token blocks (the prompt alone fills more than one).
    prompt_tokens = len(model.engine.encode("abc abc abc " * 3))
    assert prompt_tokens > module.TOKENS_PER_BLOCK
    blocks = -(-(prompt_tokens + 8) // module.TOKENS_PER_BLOCK)
    assert [int(ok.outputs[k][0]) for k in ("kv_cache_alloc_new_blocks", "kv_cache_alloc_total_blocks",
                                            "kv_cache_missed_block")] == [blocks] * 3
    # The pinned releases leave the draft counters unfilled with TorchSampler (auto): zeros.
    assert [ok.outputs[k][0] for k in ("total_draft_tokens", "total_accepted_draft_tokens")] == [b"0", b"0"]
    assert "cumulative_logprob" not in ok.outputs
    # Every failure in the release's shape: INTERNAL, "Error generating request: ...".
    assert bad.error.code == pb.TritonError.INTERNAL
    assert bad.error.message.startswith("Error generating request: ") and "sampling_param_max_tokens" in bad.error.message
    assert refused.error.message == "Error generating request: Streaming is only supported in decoupled mode."


def test_decoupled_streams_as_the_release_one_response(tmp_path, monkeypatch, ngram_yaml):
    module, pb, vdir = load_model_py(tmp_path, monkeypatch, ngram_yaml.replace("DECOUPLED", "true"))
    model = start(module, vdir, decoupled=True)
    streamed = Request(text_input="abc abc abc", streaming=True, sampling_param_max_tokens=np.int32(10))
    single = Request(text_input="abc abc abc", sampling_param_max_tokens=np.int32(10))
    missing = Request(sampling_param_max_tokens=np.int32(3))
    assert model.execute([streamed, single, missing]) is None
    [(once, flag)] = streamed.sender.sent  # streaming went into generate_async's lora_request slot
    [(only, flag2)] = single.sender.sent
    assert flag == flag2 == 1 and text(once) == text(only)
    [(err, flag)] = missing.sender.sent
    assert flag == 1 and err.error.message == "Error generating request: text_input is missing from the request"


def test_stream_per_step_only_when_asked(tmp_path, monkeypatch, ngram_yaml):
    yaml_text = ngram_yaml.replace("DECOUPLED", "true") + "  cpu_behaviour: [stream_per_step]\n"
    module, pb, vdir = load_model_py(tmp_path, monkeypatch, yaml_text)
    model = start(module, vdir, decoupled=True)
    streamed = Request(text_input="abc abc abc", streaming=True, sampling_param_max_tokens=np.int32(10))
    model.execute([streamed])
    flags = [f for _, f in streamed.sender.sent]
    assert len(flags) > 1 and flags[-1] == 1 and set(flags[:-1]) == {0}
    texts = [text(r) for r, _ in streamed.sender.sent]
    assert all(b.startswith(a) for a, b in zip(texts, texts[1:]))  # cumulative, as the release's text_output
    assert any("departures asked: stream_per_step" in line for line in pb.Logger.lines)


def test_missing_triton_config_keys_fail_as_the_release(tmp_path, monkeypatch, ngram_yaml):
    yaml_text = ngram_yaml.replace("  decoupled: DECOUPLED\n", "")
    module, pb, vdir = load_model_py(tmp_path, monkeypatch, yaml_text)
    with pytest.raises(KeyError, match="decoupled"):
        start(module, vdir, decoupled=False)
    with pytest.raises(KeyError, match="decoupled"):
        module.TritonPythonModel.auto_complete_config(AutoComplete())


def test_stop_input_replies_like_the_container(tmp_path, monkeypatch, ngram_yaml):
    module, pb, vdir = load_model_py(tmp_path, monkeypatch, ngram_yaml.replace("DECOUPLED", "true"))
    model = start(module, vdir, decoupled=True)
    anonymous, named = Request(text_input="x", stop=True), Request("req-1", text_input="x", stop=True)
    model.execute([anonymous, named])
    assert "request id must be provided" in anonymous.sender.sent[0][0].error.message
    assert named.sender.sent[0][0].error.code == pb.TritonError.CANCELLED


def test_bad_model_yaml_fails_initialize_with_path_line_col(tmp_path, monkeypatch, ngram_yaml):
    module, pb, vdir = load_model_py(tmp_path, monkeypatch,
                                     ngram_yaml.replace("DECOUPLED", "true").replace("NGram", "Eagle"))
    with pytest.raises(pb.TritonModelException) as info:
        start(module, vdir, decoupled=True)
    assert str(info.value).startswith(f"{vdir / 'model.yaml'}:4:18: EAGLE-3 needs TensorRT-LLM on a GPU")


@pytest.mark.parametrize("track", tracks())
def test_the_stand_in_knows_the_inputs_and_max_tokens_default_of_each_tracks_llmapi_model(track):
    """The stand-in's request parser (engine/requests.py) has one list of inputs for every track: a track
    whose llmapi model has other inputs or another max_tokens default (a new release's snapshot) fails here
    until the parser follows it."""
    from specdec_guide.engine.requests import DEFAULT_MAX_TOKENS, INPUT_NAMES

    t = registry().resolve(track)
    assert sorted(i["name"] for i in t.triton["llmapi_model"]["inputs"]) == sorted(INPUT_NAMES)
    # Its max_tokens default too (a request without sampling_param_max_tokens).
    default = t.classes()["SamplingParams"]["fields"]["max_tokens"]["default"]
    assert default == DEFAULT_MAX_TOKENS


def test_each_model_follows_the_record_of_the_track_its_model_yaml_names(tmp_path, monkeypatch, ngram_yaml):
    """Every fact the stand-in reads holds the same value in each track's record, so no served answer shows
    whether a model follows its own track's record or the default one's. Here the record is made to differ
    by track on one fact (streaming per step on the last track only), and each track's model must follow
    its own."""
    from specdec_guide.engine import config as engine_config

    real, differs_on = engine_config.release_fact, tracks()[-1]
    assert len(tracks()) > 1, "one track: nothing to tell apart"

    def record(track, fact_id):
        if fact_id == "llmapi_model_streams_per_step":
            return track == differs_on, "confirmed"
        return real(track, fact_id)

    monkeypatch.setattr(engine_config, "release_fact", record)
    events = {}
    for track in tracks():
        yaml_text = f"# specdec-guide: trtllm={track}\n" + ngram_yaml.replace("DECOUPLED", "true")
        module, _, vdir = load_model_py(tmp_path / track, monkeypatch, yaml_text)
        model = start(module, vdir, decoupled=True)
        streamed = Request(text_input="abc abc abc", streaming=True, sampling_param_max_tokens=np.int32(6))
        model.execute([streamed])
        events[track] = len(streamed.sender.sent)
    assert {t: n > 1 for t, n in events.items()} == {t: t == differs_on for t in tracks()}, events
