"""AIPerf endpoint plugin for Triton's ``llmapi`` model (``/v2/models/<name>/generate[_stream]``).

This module runs inside AIPerf's own virtual environment (``make aiperf``), never in the guide's
main one: it imports ``aiperf``. AIPerf finds it through the ``aiperf.plugins`` entry point in
pyproject.toml, which names ``specdec_guide/bench/plugins.yaml``; the endpoint type is
``triton_llmapi``.

Why a plugin and not AIPerf's built-in ``template`` endpoint: the ``llmapi`` model streams the
text *so far* in every event (``CompletionOutput.text`` of TensorRT-LLM, and our CPU engine does
the same), while AIPerf adds events up as deltas. Left alone, output length and inter-token
latency come out wrong. This endpoint turns each cumulative event into the new text only.

The request carries exactly the model's inputs (config.pbtxt): ``text_input``,
``sampling_param_max_tokens`` (from AIPerf's per-request output length, else ``max_tokens`` in
``--extra-inputs``), ``sampling_param_exclude_input_from_output`` (so the prompt is not echoed
and counted as output), ``sampling_param_return_perf_metrics`` (the acceptance counters) and
``streaming`` on the ``/generate_stream`` route. Any other ``--extra-inputs`` key is sent as is,
so a reader can add ``sampling_param_temperature`` and the like.
"""

from __future__ import annotations

from typing import Any

from aiperf.common.models import ParsedResponse, RequestInfo
from aiperf.endpoints.base_endpoint import BaseEndpoint

DEFAULT_MAX_TOKENS = 32  # SamplingParams.max_tokens default of TensorRT-LLM 1.1.0, as the model would use
# Keys this endpoint interprets itself instead of sending.
_OWN_KEYS = ("max_tokens",)


class TritonLlmapiEndpoint(BaseEndpoint):
    """``text_input`` / ``sampling_param_*`` requests; cumulative ``text_output`` events made deltas."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        extra = dict(self.model_endpoint.endpoint.extra or {})
        self._max_tokens = int(extra.get("max_tokens", DEFAULT_MAX_TOKENS))
        self._extra = {k: v for k, v in extra.items() if k not in _OWN_KEYS}

    def format_payload(self, request_info: RequestInfo) -> dict[str, Any]:
        if not request_info.turns:
            raise ValueError("the triton_llmapi endpoint needs one turn per request")
        turn = request_info.turns[-1]
        texts = [t for content in turn.texts for t in content.contents]
        if not texts:
            raise ValueError("the triton_llmapi endpoint needs a text prompt")
        payload: dict[str, Any] = {
            "text_input": texts[0] if len(texts) == 1 else "\n".join(texts),
            "sampling_param_max_tokens": int(turn.max_tokens or self._max_tokens),
            "sampling_param_exclude_input_from_output": True,
            "sampling_param_return_perf_metrics": True,
        }
        if self.model_endpoint.endpoint.streaming:
            payload["streaming"] = True
        payload.update(self._extra)
        if turn.extra_body:
            payload.update(turn.extra_body)
        return payload

    def parse_response(self, response) -> ParsedResponse | None:
        """One event or body -> its ``text_output`` (the whole text so far, when streaming)."""
        text = self._text_output(response)
        data = self.make_text_response_data(text) if text is not None else None
        return ParsedResponse(perf_ns=response.perf_ns, data=data) if data is not None else None

    def extract_response_data(self, record) -> list[ParsedResponse]:
        """All events of one request, each reduced to the text it adds to the previous one.

        An event whose text does not extend the previous one (a server that sends deltas) is
        taken as a delta; an event that adds nothing is dropped, so it is not counted as a token.
        """
        if record._parsed_responses_cache is not None:
            return record._parsed_responses_cache
        parsed: list[ParsedResponse] = []
        so_far = ""
        for response in record.responses:
            text = self._text_output(response)
            if text is None:
                continue
            if text.startswith(so_far):
                delta, so_far = text[len(so_far):], text
            else:
                delta, so_far = text, so_far + text
            if delta:
                parsed.append(ParsedResponse(perf_ns=response.perf_ns, data=self.make_text_response_data(delta)))
        record._parsed_responses_cache = parsed
        return parsed

    @staticmethod
    def _text_output(response) -> str | None:
        body = response.get_json()
        if not isinstance(body, dict) or "error" in body:
            return None
        value = body.get("text_output")
        if isinstance(value, list):  # a batched model answers [text]
            value = value[0] if value else None
        return value if isinstance(value, str) else None
