"""One request to the CPU engine, checked field by field under the llmapi model's input names, and
the :class:`Chunk` the engine answers it with after each step.

Triton already enforces each input's declared dtype; this module guards what it cannot: ranges
(``sampling_param_max_tokens`` of 0 or -1), scalars sent as lists, an empty prompt, and
the one feature the CPU engine does not emulate (best_of > 1). Frequency and presence penalties
are parsed into the :class:`SamplingConfig`; the engine applies them where the release's sampler
does. Each problem is a
:class:`RequestError` whose message names the input; ``model.py`` sends it in the release's shape
("Error generating request: ...", INTERNAL), where TensorRT-LLM's SamplingParams would speak.

What the release does with a value only once the request is enqueued is the engine's
(:meth:`specdec_guide.engine.core.Engine.check`, by the track's behaviour record): a
``max_tokens`` beyond the model's room is clamped (``llmapi_max_tokens_clamped``), ``top_p`` 0
is refused (``llmapi_top_p_zero_refused``), and the stop entries are tokenized as they came,
so the bytes a Triton STRING tensor holds fail the request (``llmapi_stop_strings_as_bytes``).
This module therefore keeps ``top_p`` 0 and the stop entries as sent.

Defaults follow the container's llmapi model.py: an absent input is not passed to
``SamplingParams``, so ``max_tokens`` is SamplingParams' 32 and the prompt is echoed
(``exclude_input_from_output`` false). With no temperature/top_k/top_p the engine decodes
greedily.

No torch at import: a Triton model's stub parses requests and reads chunks while the engine runs
in the engine host's process (:mod:`specdec_guide.engine.host`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping

from specdec_guide.speculation_types import SamplingConfig, SpecStats

DEFAULT_MAX_TOKENS = 32  # SamplingParams.max_tokens default at 1.1.0 (schemas/1.1.0/llm_api.yaml)
MAX_SEED = 2**64 - 1  # sampling_param_seed is UINT64

# Every input of the 1.1.0 llmapi config.pbtxt (schemas/1.1.0/triton.yaml); others are ignored by
# Triton before they reach the model, so an unknown name here is a programming error upstream.
INPUT_NAMES = (
    "text_input", "streaming", "sampling_param_best_of", "sampling_param_temperature", "sampling_param_top_k",
    "sampling_param_top_p", "sampling_param_frequency_penalty", "sampling_param_presence_penalty",
    "sampling_param_max_tokens", "sampling_param_stop", "sampling_param_seed",
    "sampling_param_exclude_input_from_output", "sampling_param_return_perf_metrics", "return_finish_reason",
    "return_stop_reason", "return_cumulative_logprob", "stop",
)


# Inputs that are lists; every other input must hold one value (the release's own scalar check).
LIST_INPUTS = ("text_input", "sampling_param_stop")


@dataclass
class Chunk:
    """The state of a request after one target step (or at its end)."""

    text: str  # output text so far: prompt echo (unless excluded) + generated text
    token_ids: list[int]  # generated token ids so far
    finished: bool = False
    finish_reason: str | None = None  # "length" or "stop" once finished
    stop_reason: str | None = None  # the stop string that ended it, if any
    stats: SpecStats = field(default_factory=SpecStats)
    arrival_time_ns: int = 0
    first_token_time_ns: int = 0
    last_token_time_ns: int = 0
    prompt_tokens: int = 0  # the prompt's length in tokens (the KV-cache counters count it)
    warnings: tuple[str, ...] = ()  # what the release logs for this request (a clamped max_tokens)

    @property
    def acceptance_rate(self) -> float:
        return self.stats.acceptance_rate

    @property
    def total_accepted_draft_tokens(self) -> int:
        return self.stats.accepted_tokens

    @property
    def total_draft_tokens(self) -> int:
        return self.stats.drafted_tokens


class RequestError(ValueError):
    """A request the engine refuses; the message is sent back to the client as is."""


@dataclass(frozen=True)
class GenerateRequest:
    prompt: str
    max_tokens: int = DEFAULT_MAX_TOKENS
    streaming: bool = False
    sampling: SamplingConfig = SamplingConfig()
    #: The stop entries as sent (str, or the bytes of a Triton STRING tensor): the engine hands
    #: them to its tokenizer as SamplingParams does (llmapi_stop_strings_as_bytes).
    stop: tuple[str | bytes, ...] = ()
    exclude_input_from_output: bool = False
    return_perf_metrics: bool = False
    return_finish_reason: bool = False
    return_stop_reason: bool = False
    return_cumulative_logprob: bool = False
    extra: dict = field(default_factory=dict, compare=False)  # unknown names, kept for diagnostics


def _scalar(name: str, value: Any) -> Any:
    """Unwrap a one-element list/array (Triton sends dims [1]); refuse anything longer."""
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        value = value.tolist()
    while isinstance(value, (list, tuple)):
        if len(value) != 1:
            raise RequestError(f"{name}: expected one value, got {len(value)}")
        value = value[0]
    return value


def _bool(name: str, value: Any) -> bool:
    value = _scalar(name, value)
    if not isinstance(value, bool):
        raise RequestError(f"{name}: expected true or false, got {value!r}")
    return value


def _int(name: str, value: Any, low: int, high: int | None = None) -> int:
    value = _scalar(name, value)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise RequestError(f"{name}: expected an integer, got {value!r}")
    if value < low or (high is not None and value > high):
        bound = f">= {low}" if high is None else f"between {low} and {high}"
        raise RequestError(f"{name} must be {bound}, got {value}")
    return value


def _float(name: str, value: Any) -> float:
    value = _scalar(name, value)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise RequestError(f"{name}: expected a finite number, got {value!r}")
    return float(value)


def _text(name: str, value: Any) -> str:
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            raise RequestError(f"{name}: not valid UTF-8") from None
    if not isinstance(value, str):
        raise RequestError(f"{name}: expected a string, got {value!r}")
    return value


def _strings(name: str, value: Any) -> list[str | bytes]:
    """A list of str or bytes, flattened ([1, n] tensors arrive as nested lists), each kept as sent."""
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        value = value.tolist()
    if isinstance(value, (str, bytes)):
        value = [value]
    if not isinstance(value, (list, tuple)):
        raise RequestError(f"{name}: expected a list of strings, got {value!r}")
    flat: list[str | bytes] = []
    for item in value:
        if isinstance(item, (list, tuple)):
            flat.extend(_strings(name, item))
        elif isinstance(item, (str, bytes)):
            flat.append(item)
        else:
            raise RequestError(f"{name}: expected a string, got {item!r}")
    return flat


def _texts(name: str, value: Any) -> list[str]:
    return [_text(name, item) for item in _strings(name, value)]


def parse_request(fields: Mapping[str, Any]) -> GenerateRequest:
    """Build a :class:`GenerateRequest` from input name -> value (Python or numpy values)."""
    if "text_input" not in fields or fields["text_input"] is None:
        raise RequestError("text_input is missing from the request")
    prompts = _texts("text_input", fields["text_input"])
    if not prompts:
        raise RequestError("text_input is empty")
    # Like the container's model.py: one prompt per request, the first element.
    prompt = prompts[0]
    if not prompt:
        raise RequestError("text_input is an empty string; the engine needs at least one prompt token")

    get = fields.get
    best_of = get("sampling_param_best_of")
    if best_of is not None and _int("sampling_param_best_of", best_of, 1) != 1:
        raise RequestError("sampling_param_best_of > 1 is not emulated by the CPU reference engine")
    # Passed on unchecked, as the release's helpers pass them to SamplingParams; whether they act is
    # the sampler's business (the engine follows penalties_applied_by_sampler).
    penalties = {}
    for penalty in ("frequency_penalty", "presence_penalty"):
        name = f"sampling_param_{penalty}"
        if get(name) is not None:
            penalties[penalty] = _float(name, get(name))

    max_tokens = DEFAULT_MAX_TOKENS
    if get("sampling_param_max_tokens") is not None:
        max_tokens = _int("sampling_param_max_tokens", get("sampling_param_max_tokens"), 1)

    temperature = top_p = None
    top_k = 0
    if get("sampling_param_temperature") is not None:
        temperature = _float("sampling_param_temperature", get("sampling_param_temperature"))
        if temperature < 0:
            raise RequestError(f"sampling_param_temperature must be >= 0, got {temperature}")
    if get("sampling_param_top_k") is not None:
        top_k = _int("sampling_param_top_k", get("sampling_param_top_k"), 0)
    if get("sampling_param_top_p") is not None:
        top_p = _float("sampling_param_top_p", get("sampling_param_top_p"))
        if not 0.0 <= top_p <= 1.0:
            raise RequestError(f"sampling_param_top_p must be in [0, 1], got {top_p}")
        # 0 is kept: what the release does with it is the engine's (llmapi_top_p_zero_refused).
    seed = None
    if get("sampling_param_seed") is not None:
        seed = _int("sampling_param_seed", get("sampling_param_seed"), 0, MAX_SEED)
    if temperature is None:
        # Nothing set: greedy. Only top_k/top_p set: sample at temperature 1 within the cut.
        temperature = 1.0 if (top_k > 1 or (top_p is not None and top_p < 1.0)) else 0.0
    sampling = SamplingConfig(temperature=temperature, top_k=top_k, top_p=1.0 if top_p is None else top_p, seed=seed,
                              **penalties)

    stop: list[str | bytes] = []
    if get("sampling_param_stop") is not None:
        # As sent, like the release's helpers (they hand the tensor itself to SamplingParams).
        stop = _strings("sampling_param_stop", get("sampling_param_stop"))

    def flag(name: str) -> bool:
        return get(name) is not None and _bool(name, get(name))

    return GenerateRequest(
        prompt=prompt,
        max_tokens=max_tokens,
        streaming=flag("streaming"),
        sampling=sampling,
        stop=tuple(stop),
        exclude_input_from_output=flag("sampling_param_exclude_input_from_output"),
        return_perf_metrics=flag("sampling_param_return_perf_metrics"),
        return_finish_reason=flag("return_finish_reason"),
        return_stop_reason=flag("return_stop_reason"),
        return_cumulative_logprob=flag("return_cumulative_logprob"),
        extra={k: v for k, v in fields.items() if k not in INPUT_NAMES},
    )
