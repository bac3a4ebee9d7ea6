"""Serve prompts with the guide's CPU engine and log each request as Triton /generate JSON.

A stand-in for your own server's request log: each line holds what was sent (text_input,
sampling_param_max_tokens) and what came back (text_output, finish_reason and the engine's own
acceptance counters, counted outside Triton). The llmapi model returns these counters with
sampling_param_return_perf_metrics only on a release after TensorRT-LLM PR #17082: with
TorchSampler, 1.1.0 and 1.2.1 return zeros, and estimate says so instead of comparing.

usage: python serve_log.py MODEL_YAML PROMPTS_JSONL LOG_JSONL [--max-tokens N]

PROMPTS_JSONL has one {"prompt": "..."} or {"messages": [...]} per line; a chat is rendered
with the model's chat template on the client side, so text_input is the exact text served.
"""

import argparse
import json
import os
import sys

from specdec_guide.engine.config import ConfigError
from specdec_guide.engine.core import Engine
from specdec_guide.engine.requests import RequestError


def positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"want a whole number >= 1, got {text!r}")
    return int(text)


parser = argparse.ArgumentParser()
parser.add_argument("model_yaml")
parser.add_argument("prompts")
parser.add_argument("log")
parser.add_argument("--max-tokens", type=positive, default=48)
args = parser.parse_args()


def is_chat(messages) -> bool:
    return (isinstance(messages, list) and bool(messages) and all(
        isinstance(m, dict) and isinstance(m.get("role"), str) and isinstance(m.get("content"), str)
        for m in messages))


def read_prompts(path: str) -> list[tuple[int, str | None, list | None]]:
    """(line number, prompt text, chat messages: one of the two) per non-empty line;
    a bad line stops the script with path:line:col."""
    try:
        with open(path, encoding="utf-8") as src:
            lines = src.read().splitlines()
    except (OSError, UnicodeDecodeError) as err:
        sys.exit(f"{path}:0:0: cannot read: {getattr(err, 'strerror', None) or err}")
    items = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as err:
            sys.exit(f"{path}:{number}:{err.colno}: not JSON: {err.msg}")
        prompt = item.get("prompt") if isinstance(item, dict) else None
        if isinstance(prompt, str) and prompt:
            items.append((number, prompt, None))
        elif isinstance(item, dict) and is_chat(item.get("messages")):
            items.append((number, None, item["messages"]))
        else:
            sys.exit(f'{path}:{number}:1: want {{"prompt": "some text"}} or '
                     f'{{"messages": [{{"role": "user", "content": "..."}}, ...]}}')
    if not items:
        sys.exit(f"{path}:1:1: no prompts in the file")
    return items


items = read_prompts(args.prompts)
if os.path.isdir(args.log) or not os.path.isdir(os.path.dirname(os.path.abspath(args.log))):
    sys.exit(f"{args.log}:0:0: cannot write the log there (a folder, or its folder does not exist)")
if os.path.abspath(args.log) == os.path.abspath(args.prompts):
    sys.exit(f"{args.log}:0:0: the log would overwrite the prompts file")
try:
    engine = Engine.from_yaml(args.model_yaml)
except ConfigError as err:
    sys.exit(str(err))  # path:line:col: what is wrong
lines = []  # the log is written once every request has been served: a failure leaves an older log as it was
for number, prompt, messages in items:
    if prompt is None:  # a chat: the text the server would render from it
        try:
            prompt = engine.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        except ValueError as err:  # e.g. a tokenizer without a chat template
            sys.exit(f"{args.prompts}:{number}:1: cannot render this chat: {str(err).splitlines()[0]}")
    request = {"text_input": prompt, "sampling_param_max_tokens": args.max_tokens,
               "sampling_param_exclude_input_from_output": True}
    try:
        done = engine.complete(request)  # requests run one after another, as logged
    except RequestError as err:  # what the server would answer this request with
        sys.exit(f"{args.prompts}:{number}:1: the engine refused this request: {err}")
    lines.append(json.dumps({**request, "text_output": done.text, "finish_reason": done.finish_reason,
                             "total_draft_tokens": done.total_draft_tokens,
                             "total_accepted_draft_tokens": done.total_accepted_draft_tokens}) + "\n")
    print(f"drafted {done.total_draft_tokens:3d}  accepted {done.total_accepted_draft_tokens:3d}  "
          f"steps {done.stats.target_steps:3d}  tokens {len(done.token_ids):3d}")
with open(args.log, "w", encoding="utf-8") as log:
    log.writelines(lines)
