"""The benchmark's prompts: one code-editing set and one chat set, written for this guide.

Every method (baseline, NGram, Draft/Target) and every tool (AIPerf on CPU and GPU,
trtllm-bench) reads the same prompts, so their numbers differ only by what is served.
The code-editing set shows the model some code and the start of its edited version: the
continuation repeats long runs of the prompt, which is where prompt lookup (NGram) drafts
well. The chat set asks open questions: little of the answer is in the prompt.
"""

from __future__ import annotations

import json
from pathlib import Path

# Code editing as an editor sends it: the code, what to change, and the start of the new version,
# as plain text (no chat template). The model continues by rewriting the code.
CODE_EDITING = (
    "def average(values):\n    total = 0\n    for value in values:\n        total += value\n"
    "    if not values:\n        return 0.0\n    return total / len(values)\n\n"
    "# The same function with `total` renamed to `running_sum`:\ndef average(values):\n",
    "class Counter:\n    def __init__(self):\n        self.count = 0\n\n    def increment(self, step=1):\n"
    "        self.count += step\n        return self.count\n\n    def reset(self):\n        self.count = 0\n\n"
    "# The same class with `count` renamed to `value`:\nclass Counter:\n",
    "def read_names(path):\n    names = []\n    with open(path) as handle:\n        for line in handle:\n"
    "            names.append(line.strip())\n    return names\n\n"
    "# The same function, but it skips empty lines:\ndef read_names(path):\n",
)

# Chat as a chat client sends it: a user question, wrapped in the model's chat template.
CHAT = (
    "What should I pack for a weekend hiking trip in the mountains?",
    "Explain in simple words why the sky looks blue during the day.",
    "How do I make a simple tomato soup at home?",
)


def render(prompt: str, tokenizer=None) -> str:
    """A chat prompt as ``text_input``: the model's chat template applied by the client, because
    Triton's llmapi model passes ``text_input`` to the model as is. Unchanged without a template."""
    if tokenizer is None or not getattr(tokenizer, "chat_template", None):
        return prompt
    return tokenizer.apply_chat_template([{"role": "user", "content": prompt}], tokenize=False,
                                         add_generation_prompt=True)


def rendered_sets(tokenizer=None) -> dict[str, list[str]]:
    """Both sets as sent: code-editing prompts as plain text, chat prompts through the template."""
    return {"code-editing": list(CODE_EDITING), "chat": [render(p, tokenizer) for p in CHAT]}


def write_trtllm_bench_dataset(path: str | Path, texts: list[str], output_tokens: int) -> Path:
    """The same prompts as trtllm-bench's dataset file: one JSON object per line with
    ``task_id``, ``prompt`` and ``output_tokens`` (the schema of TensorRT-LLM 1.1.0's
    perf-benchmarking page, "Preparing a Dataset")."""
    path = Path(path)
    path.write_text("".join(json.dumps({"task_id": i, "prompt": t, "output_tokens": output_tokens}) + "\n"
                            for i, t in enumerate(texts)))
    return path
