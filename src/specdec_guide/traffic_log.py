"""Logged traffic -> (prompt tokens, output tokens): the input of ``specdec-guide estimate``.

One JSON object per line (JSONL). Three shapes are recognised per line, by their keys:

``prompt`` / ``messages`` + ``output``  (ours)
    ``prompt`` is the raw text the server received (as Triton's ``text_input``); ``messages`` a
    chat conversation instead. ``output`` is the generated text without the prompt. Optional:
    ``finish_reason`` (``"stop"``: the model ended with its end-of-sequence token; ``"length"``:
    the token budget ran out), ``max_tokens``, and ``output_ids`` (the generated token ids, when
    the log has them: the replay is then exact whatever the tokenizer does with the text).

``request`` + ``response``  (an OpenAI chat-completion or completion exchange)
    ``request.messages`` (chat) or ``request.prompt`` (completion); the output is
    ``response.choices[0].message.content`` (chat) or ``response.choices[0].text``;
    ``choices[0].finish_reason`` and ``request.max_tokens`` / ``max_completion_tokens``.

``text_input`` + ``text_output``  (Triton ``/generate`` JSON; also nested as ``request``/``response``)
    The inputs as sent (``sampling_param_max_tokens``, ``sampling_param_exclude_input_from_output``)
    and the response fields. TensorRT-LLM's llmapi model echoes the prompt in ``text_output``
    unless ``sampling_param_exclude_input_from_output`` is true: the echo is removed when present.

How text becomes tokens (what the server does before the model sees it):

- a raw prompt: ``tokenizer(prompt, add_special_tokens=True)`` -- TensorRT-LLM tokenizes a text
  prompt with ``SamplingParams.add_special_tokens`` (default true); the CPU engine does the same;
- a chat: ``tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)``,
  then ``tokenizer(text, add_special_tokens=False)``, as an OpenAI-compatible server renders a
  chat request (the template already holds the special tokens; the request's own
  ``add_special_tokens``, ``add_generation_prompt`` and ``chat_template_kwargs`` are honoured);
- the output: ``tokenizer(output, add_special_tokens=False)``, plus the end-of-sequence id when
  the request finished with ``"stop"``. Decoding then re-encoding is not always the identity
  (a model may emit a non-canonical split): ``output_ids`` in the log avoids the question.

Every problem is a :class:`~specdec_guide.diagnostics.UserError` ``path:line: message``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from specdec_guide.diagnostics import UserError, read_json


@dataclass
class LoggedRequest:
    """One logged request, as tokens."""

    where: str  # "path:line"
    prompt_ids: list[int]
    output_ids: list[int]  # the generated tokens; ends with EOS when the model stopped by itself
    max_tokens: int | None  # the request's budget when the log says it
    finish_reason: str | None
    logged: tuple[int, int] | None = None  # the server's own (total_draft_tokens, total_accepted_draft_tokens)


@dataclass
class _Texts:
    """A record before tokenization."""

    prompt: str | None = None
    messages: list | None = None
    chat_options: dict | None = None
    output: str | None = None
    output_ids: list[int] | None = None
    finish_reason: str | None = None
    max_tokens: int | None = None
    logged: tuple[int, int] | None = None


def _guides_tokenizer(folder: Path) -> bool:
    """True for a folder the guide converted (its stamp) that still holds what the conversion wrote:
    a llama config and a tokenizer config naming ``TokenizersBackend`` without custom code, which
    transformers 5's AutoTokenizer loads with that class. Anything else, or an edited copy, is left
    to AutoTokenizer. Only ``model_type`` of the config is read: a config that AutoTokenizer's own
    config check would refuse (a field of the wrong type) still gives the tokenizer here."""
    from specdec_guide.models.smollm2 import is_complete

    if not is_complete(folder):
        return False
    config, tokenizer = read_json(folder / "config.json") or {}, read_json(folder / "tokenizer_config.json") or {}
    return (config.get("model_type") == "llama" and tokenizer.get("tokenizer_class") == "TokenizersBackend"
            and "auto_map" not in tokenizer)


def load_tokenizer(name: str | Path):
    """A Hugging Face tokenizer from a local directory (or a name in the local cache); one-line error."""
    try:
        # Importing AutoTokenizer imports torch and reads the model's config: 4 of the 5 s an
        # estimate command spends. The guide's checkpoints are loaded with the class AutoTokenizer
        # resolves them to (tests/test_traffic_log.py checks both give the same tokenizer).
        if _guides_tokenizer(Path(name)):
            from transformers.tokenization_utils_tokenizers import TokenizersBackend as loader
        else:
            from transformers import AutoTokenizer as loader
        from transformers.utils import logging as hf_logging
    except ImportError:
        raise UserError("reading a tokenizer needs transformers (it comes with the package's engine extra)") from None

    hf_logging.disable_progress_bar()
    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()  # "not found" is reported below, in one line
    try:
        return loader.from_pretrained(str(name), local_files_only=True)
    except Exception as err:  # OSError, ValueError, ...: whatever transformers raises for a bad path
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise UserError(f"tokenizer '{name}' not found or not loadable: {first} "
                        "(give a local Hugging Face tokenizer directory with --tokenizer)") from None
    finally:
        hf_logging.set_verbosity(verbosity)


def read_log(path: str | Path, tokenizer) -> list[LoggedRequest]:
    """Parse and tokenize every record of ``path``; raise UserError on the first bad one."""
    records = [LoggedRequest(where, *_tokens(where, texts, tokenizer), logged=texts.logged)
               for where, texts in _texts(Path(path))]
    if not records:
        raise UserError(f"{path}:1:1: no records (the file is empty); expected one JSON object per line")
    return records


def _texts(path: Path) -> Iterator[tuple[str, _Texts]]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    except UnicodeDecodeError as err:
        from specdec_guide.diagnostics import position_of

        data = path.read_bytes()
        line, col = position_of(data, err.start)
        raise UserError(f"{path}:{line}:{col}: not UTF-8 text (byte {err.start})") from None
    except OSError as err:
        raise UserError(f"{path}: cannot read: {getattr(err, 'strerror', None) or err}") from None
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{path}:{n}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as err:
            raise UserError(f"{where}:{err.colno}: invalid JSON: {err.msg}") from None
        if not isinstance(obj, dict):
            raise UserError(f"{where}:1: expected a JSON object, got {type(obj).__name__}")
        texts = _shape(where, obj)
        texts.logged = _counters(obj)
        yield where, texts


def _counters(obj: dict) -> tuple[int, int] | None:
    """The llmapi model's perf-metric outputs, when the log kept them (numbers, or strings as upstream sends)."""
    flat = {**obj, **(obj.get("response") if isinstance(obj.get("response"), dict) else {})}
    values = []
    for key in ("total_draft_tokens", "total_accepted_draft_tokens"):
        v = flat.get(key)
        if isinstance(v, list) and len(v) == 1:
            v = v[0]
        try:
            values.append(int(v))
        except (TypeError, ValueError):
            return None
    return values[0], values[1]


def _shape(where: str, obj: dict) -> _Texts:
    request, response = obj.get("request"), obj.get("response")
    if isinstance(request, dict) and isinstance(response, dict):
        if "text_input" in request or "text_output" in response:
            return _triton(where, {**request, **response})
        return _openai(where, request, response)
    if "text_input" in obj or "text_output" in obj:
        return _triton(where, obj)
    if "prompt" in obj or "messages" in obj or "output" in obj:
        return _ours(where, obj)
    raise UserError(f"{where}:1: unrecognised record: expected 'prompt' (or 'messages') and 'output', "
                    "'request' and 'response' (OpenAI), or 'text_input' and 'text_output' (Triton)")


def _need(where: str, obj: dict, key: str, kind: type, what: str, label: str | None = None) -> Any:
    value = obj.get(key)
    if value is None:
        raise UserError(f"{where}:1: missing '{label or key}' ({what})")
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        raise UserError(f"{where}:1: '{label or key}' must be {what}, got {type(value).__name__}")
    return value


def _optional_int(where: str, obj: dict, key: str, label: str | None = None) -> int | None:
    value = obj.get(key)
    if value is None:
        return None
    if isinstance(value, list) and len(value) == 1:  # Triton inputs arrive as [n]
        value = value[0]
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise UserError(f"{where}:1: '{label or key}' must be a positive integer, got {value!r}")
    return value


def _finish(where: str, value: Any, label: str) -> str | None:
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    if value is None:
        return None
    if value not in ("stop", "length"):
        raise UserError(f"{where}:1: '{label}' must be \"stop\" or \"length\", got {value!r}")
    return value


def _ours(where: str, obj: dict) -> _Texts:
    texts = _Texts()
    if "messages" in obj:
        texts.messages = _need(where, obj, "messages", list, "a list of chat messages")
    else:
        texts.prompt = _need(where, obj, "prompt", str, "the prompt text the server received")
    if obj.get("output_ids") is not None:
        ids = obj["output_ids"]
        if not isinstance(ids, list) or not all(isinstance(t, int) and not isinstance(t, bool) for t in ids):
            raise UserError(f"{where}:1: 'output_ids' must be a list of token ids")
        texts.output_ids = ids
    else:
        texts.output = _need(where, obj, "output", str, "the generated text, without the prompt")
    texts.finish_reason = _finish(where, obj.get("finish_reason"), "finish_reason")
    texts.max_tokens = _optional_int(where, obj, "max_tokens")
    return texts


def _openai(where: str, request: dict, response: dict) -> _Texts:
    texts = _Texts()
    choices = response.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise UserError(f"{where}:1: missing 'response.choices[0]' (the OpenAI response's first choice)")
    choice = choices[0]
    if "messages" in request:
        texts.messages = _need(where, request, "messages", list, "a list of chat messages", "request.messages")
        texts.chat_options = {k: request[k] for k in ("add_special_tokens", "add_generation_prompt",
                                                      "chat_template_kwargs") if k in request}
        message = choice.get("message")
        if not isinstance(message, dict):
            raise UserError(f"{where}:1: missing 'response.choices[0].message' (a chat completion)")
        texts.output = _need(where, message, "content", str, "the generated text",
                             "response.choices[0].message.content")
    else:
        texts.prompt = _need(where, request, "prompt", str, "the prompt text (or 'messages' for a chat)",
                             "request.prompt")
        texts.output = _need(where, choice, "text", str, "the generated text", "response.choices[0].text")
    texts.finish_reason = _finish(where, choice.get("finish_reason"), "response.choices[0].finish_reason")
    texts.max_tokens = (_optional_int(where, request, "max_completion_tokens", "request.max_completion_tokens")
                        or _optional_int(where, request, "max_tokens", "request.max_tokens"))
    return texts


def _scalar_text(where: str, obj: dict, key: str, what: str) -> str:
    value = obj.get(key)
    if isinstance(value, list) and len(value) == 1:  # Triton sends [1]-shaped string tensors
        value = value[0]
    if value is None:
        raise UserError(f"{where}:1: missing '{key}' ({what})")
    if not isinstance(value, str):
        raise UserError(f"{where}:1: '{key}' must be a string, got {type(value).__name__}")
    return value


def _triton(where: str, obj: dict) -> _Texts:
    prompt = _scalar_text(where, obj, "text_input", "the prompt sent to /generate")
    output = _scalar_text(where, obj, "text_output", "the text /generate returned")
    excluded = obj.get("sampling_param_exclude_input_from_output")
    if isinstance(excluded, list) and len(excluded) == 1:
        excluded = excluded[0]
    if not excluded and output.startswith(prompt):
        output = output[len(prompt):]  # the llmapi model echoes the prompt by default
    return _Texts(prompt=prompt, output=output,
                  finish_reason=_finish(where, obj.get("finish_reason"), "finish_reason"),
                  max_tokens=_optional_int(where, obj, "sampling_param_max_tokens"))


def chat_prompt_ids(tokenizer, messages: list, options: dict | None = None) -> list[int]:
    """The prompt tokens an OpenAI-compatible server builds from a chat request."""
    options = options or {}
    if not getattr(tokenizer, "chat_template", None):
        raise ValueError("the tokenizer has no chat template, so a chat request cannot be rendered")
    text = tokenizer.apply_chat_template(messages, tokenize=False,
                                         add_generation_prompt=options.get("add_generation_prompt", True),
                                         **(options.get("chat_template_kwargs") or {}))
    return list(tokenizer(text, add_special_tokens=bool(options.get("add_special_tokens", False)))["input_ids"])


def _tokens(where: str, texts: _Texts, tokenizer) -> tuple[list[int], list[int], int | None, str | None]:
    try:
        if texts.messages is not None:
            prompt_ids = chat_prompt_ids(tokenizer, texts.messages, texts.chat_options)
        else:
            prompt_ids = list(tokenizer(texts.prompt, add_special_tokens=True)["input_ids"])
    except Exception as err:  # a template error on odd messages, a tokenizer refusing input
        raise UserError(f"{where}:1: cannot tokenize the prompt: {type(err).__name__}: {err}") from None
    if not prompt_ids:
        raise UserError(f"{where}:1: the prompt encodes to no tokens")
    if texts.output_ids is not None:
        output_ids = list(texts.output_ids)
    else:
        output_ids = list(tokenizer(texts.output, add_special_tokens=False)["input_ids"])
        eos = tokenizer.eos_token_id
        if texts.finish_reason == "stop" and eos is not None:
            output_ids.append(eos)  # the model ended the request: EOS was its last token
    if not output_ids:
        raise UserError(f"{where}:1: the output is empty: nothing was generated, nothing to replay")
    if texts.max_tokens is not None and len(output_ids) > texts.max_tokens:
        raise UserError(f"{where}:1: the output has {len(output_ids)} tokens, more than max_tokens="
                        f"{texts.max_tokens}: was the log written with another tokenizer?")
    return prompt_ids, output_ids, texts.max_tokens, texts.finish_reason
