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
import sys

from specdec_guide.engine.config import ConfigError
from specdec_guide.engine.core import Engine

parser = argparse.ArgumentParser()
parser.add_argument("model_yaml")
parser.add_argument("prompts")
parser.add_argument("log")
parser.add_argument("--max-tokens", type=int, default=48)
args = parser.parse_args()


def read_prompts(path: str) -> list[tuple[int, dict]]:
    """(line number, object) per non-empty line; a bad line stops the script with path:line:col."""
    try:
        lines = open(path, encoding="utf-8").read().splitlines()
    except OSError as err:
        sys.exit(f"{path}:0:0: cannot read: {err.strerror}")
    items = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as err:
            sys.exit(f"{path}:{number}:{err.colno}: not JSON: {err.msg}")
        if not isinstance(item, dict) or not isinstance(item.get("prompt", item.get("messages")), (str, list)):
            sys.exit(f'{path}:{number}:1: want {{"prompt": "..."}} or {{"messages": [...]}}')
        items.append((number, item))
    return items


items = read_prompts(args.prompts)
try:
    engine = Engine.from_yaml(args.model_yaml)
except ConfigError as err:
    sys.exit(str(err))  # path:line:col: what is wrong
with open(args.log, "w", encoding="utf-8") as log:
    for number, item in items:
        prompt = item.get("prompt")
        if prompt is None:  # a chat: the text the server would render from it
            prompt = engine.tokenizer.apply_chat_template(item["messages"], tokenize=False,
                                                          add_generation_prompt=True)
        request = {"text_input": prompt, "sampling_param_max_tokens": args.max_tokens,
                   "sampling_param_exclude_input_from_output": True}
        done = engine.complete(request)  # requests run one after another, as logged
        log.write(json.dumps({**request, "text_output": done.text, "finish_reason": done.finish_reason,
                              "total_draft_tokens": done.total_draft_tokens,
                              "total_accepted_draft_tokens": done.total_accepted_draft_tokens}) + "\n")
        print(f"drafted {done.total_draft_tokens:3d}  accepted {done.total_accepted_draft_tokens:3d}  "
              f"steps {done.stats.target_steps:3d}  tokens {len(done.token_ids):3d}")
