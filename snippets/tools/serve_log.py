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

from specdec_guide.engine.core import Engine

parser = argparse.ArgumentParser()
parser.add_argument("model_yaml")
parser.add_argument("prompts")
parser.add_argument("log")
parser.add_argument("--max-tokens", type=int, default=48)
args = parser.parse_args()

engine = Engine.from_yaml(args.model_yaml)
with open(args.prompts, encoding="utf-8") as src, open(args.log, "w", encoding="utf-8") as log:
    for line in src:
        if not line.strip():
            continue
        item = json.loads(line)
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
