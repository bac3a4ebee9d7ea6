"""Triton Python-backend adapter for the guide's CPU stand-in of TensorRT-LLM's ``llmapi`` model.

``specdec-guide repo render --engine cpu`` copies this file to ``<repo>/<model>/1/model.py``,
next to ``1/model.yaml``; it stands where the container's llmapi ``model.py`` stands and answers
the same inputs and outputs (``config.pbtxt``). It stays thin on purpose: the engine lives in the
installed ``specdec_guide`` package, this file only translates tensors. Behind the guide's launcher
(``specdec-guide triton up``) the engine runs in a process forked by the launcher's engine host, so
that torch and transformers are imported once per server, not once per model (engine/host.py).

It answers as the release of the track ``model.yaml`` names (``# specdec-guide: trtllm=<id>``,
written by ``repo render``; else the default track), from that track's behaviour record
(``schemas/<track>/behaviour/triton_model.yaml`` and ``llm_api.yaml``, read by id):

- streaming: one response with the whole text, because the pinned releases pass ``streaming`` into
  generate_async's ``lora_request`` slot (``llmapi_model_streams_per_step``: false); the check
  'Streaming is only supported in decoupled mode.' uses model.yaml's ``triton_config.decoupled``
  (``llmapi_decoupled_from_model_yaml``), not the policy Triton runs;
- errors: every failure is one final response 'Error generating request: <reason>' with code
  INTERNAL, HTTP 500 (``llmapi_error_shape``); the reasons are the stand-in's own words where the
  release's would come from TensorRT-LLM's SamplingParams or executor;
- request values, as the release treats them once they reach the LLM (the engine's ``check``):
  ``sampling_param_stop`` is handed on as Triton gives it, bytes, and tokenizing bytes fails the
  request with the tokenizer's own error (``llmapi_stop_strings_as_bytes``); a
  ``sampling_param_max_tokens`` beyond the room after the prompt is clamped to it, with a warning in
  the server log (``llmapi_max_tokens_clamped``); ``sampling_param_top_p`` 0 is refused
  (``llmapi_top_p_zero_refused``);
- loading: ``triton_config``, its ``decoupled`` and (with auto-complete) ``max_batch_size`` are read
  without defaults, so a file without them fails with a KeyError; with auto-complete the policy and
  max_batch_size are set unconditionally, so a config.pbtxt that disagrees stops the load
  (``llmapi_triton_config_required_keys``, ``auto_complete_policy_conflict_fails``);
- outputs: with perf metrics, five ``kv_cache_*`` counters, four timestamps and three
  speculative-decoding counters in every response, as strings (``llmapi_perf_outputs``,
  ``llmapi_counters_as_strings``); the KV-cache counters are the stand-in's own count (its cache in
  32-token blocks, the TensorRT-LLM default, never reused), not the release's, which the record does
  not settle (``llmapi_kv_cache_counter_values``): the load log says so;
- draft counters: zero where the release leaves them unfilled (``per_request_draft_counters_filled``);
- penalties: ``sampling_param_frequency_penalty`` / ``presence_penalty`` are accepted; they change the
  output only where the release's sampler applies them (``penalties_applied_by_sampler``: with
  ``sampler_type: TRTLLMSampler`` and NGram or Draft/Target, by ``penalty_formula``; the default
  TorchSampler ignores them); the load log says which;
- ``cumulative_logprob``: with ``return_cumulative_logprob`` the release's value, the string "None"
  (it never asks for log probs: ``llmapi_cumulative_logprob_value``).

Departures only when asked, in ``triton_config.cpu_behaviour`` (config.TEACHING_BEHAVIOURS):
``stream_per_step`` (one event per step, as after PR #14079; needs a decoupled model) and
``filled_draft_counters`` (the engine's real counts, as after PR #17082). The load log names the
track and every departure; an output a page shows from such a model says so in its stored file's
first line (the Python backend of the CPU tritonserver, 2.51, cannot attach response parameters).

Not imitated (the stand-in cannot): best_of > 1 is refused in the release's error shape instead of
being applied.
"""

from __future__ import annotations

import json
import math
import os
import threading
import traceback
from pathlib import Path

import sys

import numpy as np
import triton_python_backend_utils as pb_utils

# The Python backend stub embeds its interpreter without reading PYTHONPATH, so the package would
# come from the virtualenv's own install; a checkout run with PYTHONPATH=src serves its own engine.
for _entry in reversed([p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]):
    if _entry not in sys.path:
        sys.path.insert(0, _entry)

CONFIG_NAME_ENV = "LLM_CONFIG_PATH"  # same override as the container's model.py
DEFAULT_CONFIG_NAME = "model.yaml"
ERROR_PREFIX = "Error generating request: "  # the release's wrapping (llmapi_error_shape)
TOKENS_PER_BLOCK = 32  # KvCacheConfig.tokens_per_block default (schemas/<track>/llm_api.yaml)


def _config_path(model_dir: Path) -> Path:
    return model_dir / os.environ.get(CONFIG_NAME_ENV, DEFAULT_CONFIG_NAME)


def _error(message: str, code_name: str = "INTERNAL", text_output_dtype=np.object_):
    code = getattr(pb_utils.TritonError, code_name, None)
    err = pb_utils.TritonError(message, code) if code is not None else pb_utils.TritonError(message)
    # Like the release, an error response also carries text_output "N/A" (clients see the error).
    tensor = pb_utils.Tensor("text_output", np.asarray(["N/A"], dtype=text_output_dtype))
    return pb_utils.InferenceResponse(output_tensors=[tensor], error=err)


def _missing_key(path: Path, key: str, where: str) -> KeyError:
    # The release's model.py indexes triton_config[...] and fails with a bare KeyError; the log line
    # says which file and why, so a reader of the Triton log is not left with "'decoupled'" alone.
    pb_utils.Logger.log_error(f"[specdec cpu stand-in] {path}: {key} is missing; the release's model.py reads "
                              f"it without a default in {where}, so the model fails to load (KeyError)")
    return KeyError(key.rsplit(".", 1)[-1])


class TritonPythonModel:
    @classmethod
    def auto_complete_config(cls, auto_complete_model_config):
        """As the release: set the policy and max_batch_size from model.yaml, unconditionally."""
        from specdec_guide.engine.config import load_triton_settings

        path = _config_path(Path(__file__).resolve().parent)
        settings = load_triton_settings(path)
        for key in ("triton_config", "triton_config.decoupled", "triton_config.max_batch_size"):
            have = settings.section if key == "triton_config" else key.split(".")[1] in settings.present
            if not have:
                raise _missing_key(path, key, "auto_complete_config")
        # pb_utils raises ValueError when config.pbtxt already says otherwise: the load stops there.
        auto_complete_model_config.set_model_transaction_policy(dict(decoupled=bool(settings.decoupled)))
        auto_complete_model_config.set_max_batch_size(int(settings.max_batch_size))
        return auto_complete_model_config

    def initialize(self, args):
        from specdec_guide.engine.config import TEACHING_BEHAVIOURS, ConfigError, load_config

        self.logger = pb_utils.Logger
        model_config = json.loads(args["model_config"])
        repo, version = args.get("model_repository"), args.get("model_version")
        model_dir = Path(repo) / str(version) if repo and version else Path(__file__).resolve().parent
        if not _config_path(model_dir).is_file():
            model_dir = Path(__file__).resolve().parent
        path = _config_path(model_dir)
        self.output_dtypes = {
            o["name"]: pb_utils.triton_string_to_numpy(o["data_type"]) for o in model_config.get("output", [])
        }
        self.text_dtype = self.output_dtypes.get("text_output", np.object_)
        # What Triton runs (config.pbtxt, or auto-complete's result): decides how responses travel.
        self.served_decoupled = pb_utils.using_decoupled_model_transaction_policy(model_config)
        self.batched = int(model_config.get("max_batch_size", 0)) > 0
        try:
            cfg = load_config(path)
        except ConfigError as err:
            # Raised as a plain one-liner: Triton logs it as the reason the model failed to load.
            raise pb_utils.TritonModelException(str(err)) from None
        # Read before the model is built, as the release's model.py pops triton_config before it
        # creates the LLM (and a file that fails here fails without importing torch).
        if not cfg.triton.section:
            raise _missing_key(path, "triton_config", "initialize")
        if "decoupled" not in cfg.triton.present:
            raise _missing_key(path, "triton_config.decoupled", "initialize")
        from specdec_guide.engine.host import engine_for

        try:
            # In a process forked by the launcher's engine host when it runs one (engine/host.py:
            # torch and transformers are imported there once), else in this stub.
            self.engine = engine_for(cfg, path)
        except ConfigError as err:
            raise pb_utils.TritonModelException(str(err)) from None
        # The release's own flag is model.yaml's value, whatever Triton runs (llmapi_decoupled_from_model_yaml).
        self.decoupled = cfg.triton.decoupled
        self.release = _release_facts(cfg.track)
        self.shows = cfg.triton.cpu_behaviour
        self.per_step = self.release["streams_per_step"] or "stream_per_step" in self.shows
        self.counters_filled = "filled_draft_counters" in self.shows or _counters_filled(
            self.release["counters_filled"], cfg.sampler_type)
        if cfg.triton.decoupled != self.served_decoupled:
            self.logger.log_warn(f"{path}: triton_config.decoupled is {cfg.triton.decoupled} but Triton runs the model "
                                 f"with decoupled={self.served_decoupled} (config.pbtxt; the container's launcher "
                                 "disables auto-complete): the release checks streaming against model.yaml")
        if "stream_per_step" in self.shows and not self.served_decoupled:
            self.logger.log_warn(f"{path}: cpu_behaviour stream_per_step needs Triton to run the model decoupled; "
                                 "config.pbtxt says otherwise, so streamed requests get one response")
        spec = cfg.speculative.decoding_type if cfg.speculative else "none"
        shown = "; ".join(f"{b}: {TEACHING_BEHAVIOURS[b]}" for b in self.shows) or "none (answers as the release)"
        self.logger.log_info(f"[specdec cpu stand-in] TensorRT-LLM track {cfg.track} (llmapi model.py of that "
                             f"release); departures asked: {shown}; model={cfg.model} speculative={spec} "
                             f"decoupled={self.decoupled} ignored_keys={list(cfg.ignored_keys)}")
        self.logger.log_info(f"[specdec cpu stand-in] {self.engine.penalties_note}")
        kv = self.release["kv_cache_counters"]
        self.logger.log_info("[specdec cpu stand-in] kv_cache_* outputs: the stand-in's own count (its cache in "
                             f"{TOKENS_PER_BLOCK}-token blocks, every block new, none reused), not the release's: "
                             + ("its values are not settled (llmapi_kv_cache_counter_values)" if kv is None else
                                f"the record describes them ({kv!r}) and the stand-in does not compute them yet"))
        for note in self.release["unconfirmed"]:
            self.logger.log_info(f"[specdec cpu stand-in] followed an unconfirmed fact: {note}")
        self._lock = threading.Lock()  # the engine runs one request at a time

    # -- requests ------------------------------------------------------------------------
    def execute(self, requests):
        responses = []
        with self._lock:
            for request in requests:
                sender = request.get_response_sender() if self.served_decoupled else None
                result = self._serve_one(request, sender)
                if not self.served_decoupled:
                    responses.append(result)
        return None if self.served_decoupled else responses

    def _serve_one(self, request, sender):
        """Decoupled: send every response through ``sender``. Otherwise return the one response."""
        from specdec_guide.engine.requests import RequestError, parse_request

        final = pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL
        fields = {}
        try:
            fields = self._read_inputs(request)
            if fields.get("sampling_param_stop") is not None and \
                    (self.release["stop_strings"] or {}).get("stop_elements") == "str":
                # A record that says the model decodes the tensor: strings reach SamplingParams.
                fields["sampling_param_stop"] = [s.decode("utf-8", "replace") if isinstance(s, bytes) else s
                                                 for s in fields["sampling_param_stop"]]
            # Else as the release's helpers: the tensor's elements as Triton gives them, bytes.
            if fields.get("stop") is not None and bool(np.asarray(fields["stop"]).reshape(-1)[:1].any()):
                return self._finish(sender, self._stop_response(request))
            parsed = parse_request(fields)
            if parsed.streaming and not self.decoupled:
                raise RequestError("Streaming is only supported in decoupled mode.")
            if sender is None or not (parsed.streaming and self.per_step):
                # The release's path for every request, streamed or not: one response at the end.
                chunk = self.engine.complete(parsed)
                self._log_warnings(chunk)
                return self._finish(sender, self._response(chunk, parsed))
            chunks = self.engine.generate(parsed)
            first = True
            for chunk in chunks:
                if first:
                    self._log_warnings(chunk)
                    first = False
                if self._cancelled(sender):
                    chunks.close()
                    return self._finish(sender, _error("Request cancelled by client", "CANCELLED", self.text_dtype))
                sender.send(self._response(chunk, parsed), flags=final if chunk.finished else 0)
            return None
        except Exception as err:  # the release wraps every failure alike (llmapi_error_shape)
            if not isinstance(err, RequestError):
                self.logger.log_error(f"[specdec cpu stand-in] request failed: {traceback.format_exc()}")
                if fields.get("sampling_param_stop"):
                    self.logger.log_error("[specdec cpu stand-in] the request had sampling_param_stop: the release "
                                          "hands its entries to SamplingParams as bytes, which the tokenizer "
                                          "refuses (llmapi_stop_strings_as_bytes); cut the text on the client")
            return self._finish(sender, _error(f"{ERROR_PREFIX}{err}", "INTERNAL", self.text_dtype))

    def _log_warnings(self, chunk) -> None:
        # What the release logs for the request (a clamped max_tokens: llmapi_max_tokens_clamped).
        for warning in getattr(chunk, "warnings", ()):
            self.logger.log_warn(f"[specdec cpu stand-in] {warning}")

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

    def _stop_response(self, request):
        # The container's model.py cancels in-flight requests with the same Triton request id; this
        # engine has none in flight (one request at a time), so only the replies are imitated.
        if not request.request_id():
            return _error("A request id must be provided for request cancellation", "INTERNAL", self.text_dtype)
        return _error("Request cancelled by client", "CANCELLED", self.text_dtype)

    @staticmethod
    def _read_inputs(request) -> dict:
        from specdec_guide.engine.requests import INPUT_NAMES, LIST_INPUTS, RequestError

        fields = {}
        for name in INPUT_NAMES:
            tensor = pb_utils.get_input_tensor_by_name(request, name)
            if tensor is None:
                continue
            arr = tensor.as_numpy()
            if name == "text_input":
                if arr.ndim > 1:
                    # The release's own check; with max_batch_size > 0 Triton adds a batch
                    # dimension, so a batched llmapi model refuses every request (llmapi_model_checks).
                    raise RequestError("The current implementation only supports text_input being a 1D tensor.")
            elif name not in LIST_INPUTS and arr.size != 1:
                raise RequestError(f"Expected a scalar tensor for tensor {name}")  # the release's own check
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

    @staticmethod
    def _kv_cache_counters(chunk) -> dict:
        # The stand-in's own cache, counted as TensorRT-LLM counts blocks: every block is new, none reused.
        tokens = chunk.prompt_tokens + len(chunk.token_ids)
        blocks = math.ceil(tokens / TOKENS_PER_BLOCK)
        return {"kv_cache_reused_block": 0, "kv_cache_hit_rate": 0.0, "kv_cache_alloc_new_blocks": blocks,
                "kv_cache_alloc_total_blocks": blocks, "kv_cache_missed_block": blocks}

    def _response(self, chunk, req):
        tensors = [self._tensor("text_output", [chunk.text])]
        wanted = {"finish_reason": req.return_finish_reason, "stop_reason": req.return_stop_reason}
        values = {"finish_reason": str(chunk.finish_reason), "stop_reason": str(chunk.stop_reason)}
        for name, on in wanted.items():
            if on and name in self.output_dtypes:
                tensors.append(self._tensor(name, [values[name]]))
        if req.return_cumulative_logprob and "cumulative_logprob" in self.output_dtypes:
            # As text whatever config.pbtxt declares (FP32): the release sends str() of the field.
            tensors.append(self._tensor("text_output", [str(self.release["cumulative_logprob"])],
                                        name="cumulative_logprob"))
        if req.return_perf_metrics or self.engine.config.return_perf_metrics:
            drafts = (chunk.acceptance_rate, chunk.total_accepted_draft_tokens, chunk.total_draft_tokens)
            if not self.counters_filled:
                drafts = (0.0, 0, 0)  # what the release returns (per_request_draft_counters_filled)
            metrics = {
                **self._kv_cache_counters(chunk),
                "arrival_time_ns": chunk.arrival_time_ns,
                "first_scheduled_time_ns": chunk.arrival_time_ns,  # no queue: scheduled on arrival
                "first_token_time_ns": chunk.first_token_time_ns,
                "last_token_time_ns": chunk.last_token_time_ns,
                "acceptance_rate": drafts[0],
                "total_accepted_draft_tokens": drafts[1],
                "total_draft_tokens": drafts[2],
            }
            for name in self.release["perf_outputs"]:
                if name in metrics and name in self.output_dtypes:
                    # As text, whatever config.pbtxt declares: the llmapi model builds these tensors
                    # with text_output's dtype, and Triton serializes the values with str().
                    tensors.append(self._tensor("text_output", [str(metrics[name])], name=name))
        return pb_utils.InferenceResponse(output_tensors=tensors)

    def finalize(self):
        engine, self.engine = getattr(self, "engine", None), None
        if hasattr(engine, "close"):  # the engine host's process for this model ends with it
            engine.close()


def _counters_filled(value, sampler_type: str) -> bool:
    """``per_request_draft_counters_filled`` for this file's sampler (a bool or {sampler: bool})."""
    if isinstance(value, dict):
        # auto picks TorchSampler on the PyTorch backend of the pinned releases (not read: unconfirmed).
        sampler = "TorchSampler" if sampler_type in ("auto", "", None) else sampler_type
        return bool(value.get(sampler, value.get("TorchSampler", False)))
    return bool(value)


def _release_facts(track: str) -> dict:
    """The facts this adapter follows, from the track's behaviour record, with the fallbacks used
    while a fact is missing from it (each fallback is logged as unconfirmed)."""
    from specdec_guide.engine.config import release_fact

    out = {"unconfirmed": []}
    for key, fact_id in (("streams_per_step", "llmapi_model_streams_per_step"),
                         ("perf_outputs", "llmapi_perf_outputs"),
                         ("counters_filled", "per_request_draft_counters_filled"),
                         ("cumulative_logprob", "llmapi_cumulative_logprob_value"),
                         ("stop_strings", "llmapi_stop_strings_as_bytes"),
                         ("kv_cache_counters", "llmapi_kv_cache_counter_values"),
                         # Followed by the engine (Engine.check); read here for the load log.
                         ("max_tokens_clamped", "llmapi_max_tokens_clamped"),
                         ("top_p_zero", "llmapi_top_p_zero_refused")):
        value, confidence = release_fact(track, fact_id)  # the record's, else its lead (RELEASE_FALLBACKS)
        out[key] = value
        if confidence != "confirmed" and confidence != "likely":
            out["unconfirmed"].append(f"{fact_id}={value!r} on {track}: {confidence}")
    return out
