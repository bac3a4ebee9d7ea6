"""The benchmark's prompts: one code-editing set and one chat set, written for this guide.

Every method (baseline, NGram, Draft/Target) and every tool (AIPerf on CPU and GPU,
trtllm-bench) reads the same prompts, so their numbers differ only by what is served.
The code-editing set asks the model to rewrite code it was shown: its answer repeats long
runs of the prompt, which is where prompt lookup (NGram) drafts well. The chat set asks
open questions: little of the answer is in the prompt.
"""

from __future__ import annotations

import json
from pathlib import Path

CODE_EDITING = (
    "Rename the variable `total` to `running_sum` in this function and return the whole function:\n\n"
    "def average(values):\n    total = 0\n    for value in values:\n        total += value\n"
    "    if not values:\n        return 0.0\n    return total / len(values)\n",
    "Add a docstring to this class and return the whole class unchanged otherwise:\n\n"
    "class Counter:\n    def __init__(self):\n        self.count = 0\n\n    def increment(self, step=1):\n"
    "        self.count += step\n        return self.count\n\n    def reset(self):\n        self.count = 0\n",
    "Change this loop to skip empty lines and return the whole function:\n\n"
    "def read_names(path):\n    names = []\n    with open(path) as handle:\n        for line in handle:\n"
    "            names.append(line.strip())\n    return names\n",
    "Replace print with logging.info in this function and return the whole function:\n\n"
    "def copy_files(pairs):\n    for source, target in pairs:\n        print('copying', source, 'to', target)\n"
    "        with open(source) as src, open(target, 'w') as dst:\n            dst.write(src.read())\n"
    "    print('done')\n",
)

CHAT = (
    "What should I pack for a weekend hiking trip in the mountains?",
    "Explain in simple words why the sky looks blue during the day.",
    "Give me three tips to sleep better at night.",
    "How do I make a simple tomato soup at home?",
)

SETS = {"code-editing": CODE_EDITING, "chat": CHAT}


def render(prompt: str, tokenizer=None) -> str:
    """The text sent as ``text_input``: the chat template applied by the client when a tokenizer
    has one (Triton's llmapi model passes ``text_input`` to the model as is)."""
    if tokenizer is None or not getattr(tokenizer, "chat_template", None):
        return prompt
    return tokenizer.apply_chat_template([{"role": "user", "content": prompt}], tokenize=False,
                                         add_generation_prompt=True)


def rendered_sets(tokenizer=None, sets: dict[str, tuple[str, ...]] = SETS) -> dict[str, list[str]]:
    return {name: [render(p, tokenizer) for p in prompts] for name, prompts in sets.items()}


def write_trtllm_bench_dataset(path: str | Path, texts: list[str], output_tokens: int) -> Path:
    """The same prompts as trtllm-bench's dataset file: one JSON object per line with
    ``task_id``, ``prompt`` and ``output_tokens`` (the schema of TensorRT-LLM 1.1.0's
    perf-benchmarking page, "Preparing a Dataset")."""
    path = Path(path)
    path.write_text("".join(json.dumps({"task_id": i, "prompt": t, "output_tokens": output_tokens}) + "\n"
                            for i, t in enumerate(texts)))
    return path
