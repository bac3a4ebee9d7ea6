"""Triton Python-backend adapter for the guide's CPU reference engine (the llmapi contract).

``specdec-guide repo render --engine cpu`` copies this file to ``<repo>/<model>/1/model.py``,
next to ``1/model.yaml``; it stands where TensorRT-LLM's llmapi ``model.py`` stands in the
container and answers the same inputs and outputs (``config.pbtxt``). It stays thin on purpose:
the engine lives in the installed ``specdec_guide`` package, this file only translates tensors.

Behaviour kept from the container's model.py: ``triton_config`` in model.yaml sets
max_batch_size and decoupled (auto_complete_config); one prompt per request; the prompt is echoed
unless ``sampling_param_exclude_input_from_output``; streaming needs decoupled mode and each
streamed response carries the text so far; finish/stop reasons are sent as strings when asked.

The response format follows the llmapi ``model.py`` read at TensorRT-LLM commit b35ac1b6 (main,
version 1.2.0rc2, before 1.2.1) and again at 044a90d2 (2026): identical ``_create_response`` in
both. The perf-metric outputs came with TensorRT-LLM PR #5554 (merged 2025-06-27, before 1.1.0;
its example response shows string values). The 1.1.0 and 1.2.1 release commits themselves could
not be read (schemas/1.1.0/triton.yaml says why), so nothing here differs per release:
- ``text_output`` is ``CompletionOutput.text``, the whole text generated so far, in every streamed
  response (cumulative, not a delta: a client that concatenates events duplicates text);
- with ``sampling_param_return_perf_metrics`` every response, each streamed one included, carries
  the counters, built with text_output's dtype (TYPE_STRING): JSON and tritonclient see strings
  ("12", "0.75") although config.pbtxt declares INT32/FP32/INT64 for them.
Differences: kv_cache_* and cumulative_logprob are not sent (no paged KV cache, no logprobs here);
bad requests get INVALID_ARG (HTTP 400) rather than a generic error.
"""

from __future__ import annotations

import json
import os
import threading
import traceback
from pathlib import Path

import numpy as np
import triton_python_backend_utils as pb_utils

CONFIG_NAME_ENV = "LLM_CONFIG_PATH"  # same override as the container's model.py
DEFAULT_CONFIG_NAME = "model.yaml"


def _config_path(model_dir: Path) -> Path:
    return model_dir / os.environ.get(CONFIG_NAME_ENV, DEFAULT_CONFIG_NAME)


def _error(message: str, code_name: str = "INVALID_ARG"):
    code = getattr(pb_utils.TritonError, code_name, None)
    err = pb_utils.TritonError(message, code) if code is not None else pb_utils.TritonError(message)
    return pb_utils.InferenceResponse(output_tensors=[], error=err)


class TritonPythonModel:
    @classmethod
    def auto_complete_config(cls, auto_complete_model_config):
        """Copy triton_config.{decoupled,max_batch_size} from model.yaml into the model config."""
        from specdec_guide.engine.config import load_triton_settings

        settings = load_triton_settings(_config_path(Path(__file__).resolve().parent))
        current = auto_complete_model_config.as_dict()
        if not current.get("max_batch_size"):
            auto_complete_model_config.set_max_batch_size(int(settings.max_batch_size))
        if "model_transaction_policy" not in current or not current["model_transaction_policy"]:
            auto_complete_model_config.set_model_transaction_policy(dict(decoupled=bool(settings.decoupled)))
        return auto_complete_model_config

    def initialize(self, args):
        from specdec_guide.engine.config import ConfigError
        from specdec_guide.engine.core import Engine

        self.logger = pb_utils.Logger
        model_config = json.loads(args["model_config"])
        repo, version = args.get("model_repository"), args.get("model_version")
        model_dir = Path(repo) / str(version) if repo and version else Path(__file__).resolve().parent
        if not _config_path(model_dir).is_file():
            model_dir = Path(__file__).resolve().parent
        path = _config_path(model_dir)
        # The effective policy, not model.yaml's: a server started with --disable-auto-complete-config
        # keeps config.pbtxt's values, and streaming must follow what Triton actually does.
        self.decoupled = pb_utils.using_decoupled_model_transaction_policy(model_config)
        self.batched = int(model_config.get("max_batch_size", 0)) > 0
        self.output_dtypes = {
            o["name"]: pb_utils.triton_string_to_numpy(o["data_type"]) for o in model_config.get("output", [])
        }
        try:
            self.engine = Engine.from_yaml(path)
        except ConfigError as err:
            # Raised as a plain one-liner: Triton logs it as the reason the model failed to load.
            raise pb_utils.TritonModelException(str(err)) from None
        cfg = self.engine.config
        if cfg.triton.decoupled != self.decoupled:
            self.logger.log_warn(f"{path}: triton_config.decoupled is {cfg.triton.decoupled} but the server runs "
                                 f"the model with decoupled={self.decoupled} (auto-complete disabled?)")
        spec = cfg.speculative.decoding_type if cfg.speculative else "none"
        self.logger.log_info(f"[specdec cpu engine] model={cfg.model} speculative={spec} decoupled={self.decoupled} "
                             f"ignored_keys={list(cfg.ignored_keys)}")
        self._lock = threading.Lock()  # the engine runs one request at a time

    # -- requests ------------------------------------------------------------------------
    def execute(self, requests):
        from specdec_guide.engine.requests import INPUT_NAMES

        responses = []
        with self._lock:
            for request in requests:
                sender = request.get_response_sender() if self.decoupled else None
                result = self._serve_one(request, sender, INPUT_NAMES)
                if not self.decoupled:
                    responses.append(result)
        return None if self.decoupled else responses

    def _serve_one(self, request, sender, input_names):
        """Decoupled: send every response through ``sender``. Otherwise return the one response."""
        from specdec_guide.engine.requests import RequestError, parse_request

        final = pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL
        try:
            fields = self._read_inputs(request, input_names)
            if fields.get("stop") is not None and bool(np.asarray(fields["stop"]).reshape(-1)[:1].any()):
                return self._finish(sender, self._stop_response(request))
            parsed = parse_request(fields)
            if parsed.streaming and not self.decoupled:
                raise RequestError("Streaming is only supported in decoupled mode.")
            chunks = self.engine.generate(parsed)
            if sender is None or not parsed.streaming:
                chunk = None
                for chunk in chunks:
                    pass
                return self._finish(sender, self._response(chunk, parsed))
            for chunk in chunks:
                if self._cancelled(sender):
                    chunks.close()
                    return self._finish(sender, _error("Request cancelled by client", "CANCELLED"))
                sender.send(self._response(chunk, parsed), flags=final if chunk.finished else 0)
            return None
        except RequestError as err:
            return self._finish(sender, _error(str(err)))
        except Exception as err:  # a bug or a drafter failure: keep serving, say what happened
            self.logger.log_error(f"[specdec cpu engine] request failed: {traceback.format_exc()}")
            return self._finish(sender, _error(f"Error generating request: {type(err).__name__}: {err}", "INTERNAL"))

    @staticmethod
    def _finish(sender, response):
        # Decoupled: an error after streamed chunks still ends the stream with the final flag.
        if sender is None:
            return response
        sender.send(response, flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)
        return None

    @staticmethod
    def _cancelled(sender) -> bool:
        try:
            return bool(sender.is_cancelled())
        except Exception:  # older stubs have no is_cancelled
            return False

    @staticmethod
    def _stop_response(request):
        # The container's model.py cancels in-flight requests with the same Triton request id; this
        # engine has none in flight (one request at a time), so only the replies are imitated.
        if not request.request_id():
            return _error("A request id must be provided for request cancellation")
        return _error("Request cancelled by client", "CANCELLED")

    @staticmethod
    def _read_inputs(request, input_names) -> dict:
        fields = {}
        for name in input_names:
            tensor = pb_utils.get_input_tensor_by_name(request, name)
            if tensor is None:
                continue
            arr = tensor.as_numpy()
            if name == "text_input" and arr.ndim > 1 and arr.shape[-1] != 1 and arr.shape[0] == 1:
                arr = arr[0]  # [1, n] from a batched model: one request's prompts
            fields[name] = arr.reshape(-1).tolist()
        return fields

    # -- responses -----------------------------------------------------------------------
    def _tensor(self, dtype_of: str, values: list, name: str | None = None):
        """An output tensor ``name`` (default ``dtype_of``) in the dtype config.pbtxt gives ``dtype_of``."""
        name = name or dtype_of
        dtype = self.output_dtypes.get(dtype_of, np.object_)
        if dtype == np.object_ or dtype is None:
            arr = np.array([v.encode("utf-8") if isinstance(v, str) else v for v in values], dtype=np.object_)
        else:
            arr = np.array(values, dtype=dtype)
        if self.batched:
            arr = arr.reshape(1, -1)
        return pb_utils.Tensor(name, arr)

    def _response(self, chunk, req):
        tensors = [self._tensor("text_output", [chunk.text])]
        wanted = {
            "finish_reason": req.return_finish_reason,
            "stop_reason": req.return_stop_reason,
        }
        values = {"finish_reason": str(chunk.finish_reason), "stop_reason": str(chunk.stop_reason)}
        for name, on in wanted.items():
            if on and name in self.output_dtypes:
                tensors.append(self._tensor(name, [values[name]]))
        if req.return_perf_metrics or self.engine.config.return_perf_metrics:
            metrics = {
                "acceptance_rate": chunk.acceptance_rate,
                "total_accepted_draft_tokens": chunk.total_accepted_draft_tokens,
                "total_draft_tokens": chunk.total_draft_tokens,
                "arrival_time_ns": chunk.arrival_time_ns,
                "first_scheduled_time_ns": chunk.arrival_time_ns,  # no queue: scheduled on arrival
                "first_token_time_ns": chunk.first_token_time_ns,
                "last_token_time_ns": chunk.last_token_time_ns,
            }
            for name, value in metrics.items():
                if name in self.output_dtypes:
                    # As text, whatever config.pbtxt declares: the llmapi model builds these tensors
                    # with text_output's dtype, and Triton serializes the values with str().
                    tensors.append(self._tensor("text_output", [str(value)], name=name))
        return pb_utils.InferenceResponse(output_tensors=tensors)

    def finalize(self):
        self.engine = None
