# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
#   specdec_guide:
#     tier: cpu
#     title: Speculative decoding basics
# ---

# %% [markdown]
# # Speculative decoding basics
#
# A large language model writes one token per forward pass, and on a GPU that pass is
# usually limited by reading the weights from memory, not by arithmetic. Speculative
# decoding spends the idle arithmetic: a cheap **drafter** guesses the next *k* tokens, the
# **target** model checks all of them in *one* forward pass, and every guess that matches
# what the target would have produced anyway is kept for free.
#
# This notebook runs the whole loop on a CPU with a real, trained model, SmolLM2-135M-Instruct
# (`specdec-guide models fetch` downloads and converts it once), so every number below comes
# from the run you are looking at. The loop is `specdec_guide.speculation`, the same code the
# CPU reference engine serves behind Triton later in the guide.
#
# > **What this page proves, and what it does not.** It proves the *rule*: greedy
# > speculative decoding returns exactly the target's own greedy output, and shows how
# > acceptance turns into fewer target passes. A 135M model on a shared CPU says nothing about
# > GPU speed; GPU figures come later, from GPU runs, with their provenance.

# %%
import time
import warnings

import matplotlib.pyplot as plt
import numpy as np
import torch

warnings.filterwarnings("ignore", message="IProgress not found")  # tqdm without ipywidgets
from transformers import AutoModelForCausalLM, AutoTokenizer  # noqa: E402
from transformers.utils import logging as hf_logging  # noqa: E402

from specdec_guide import speculation  # noqa: E402
from specdec_guide.models.smollm2 import ensure_checkpoint, ensure_draft_checkpoint  # noqa: E402

torch.set_num_threads(1)  # one thread: the CI machine is small and shared
hf_logging.disable_progress_bar()  # keep the stored outputs free of progress-bar noise

# %% [markdown]
# ## A target and a draft
#
# The target is SmolLM2-135M-Instruct: 30 decoder layers, a 49,152-token vocabulary and a chat
# template. No smaller SmolLM2 is packaged, so the draft is made from the target itself: its
# first 27 layers with its final norm and LM head (self-speculation). A draft must speak the
# target's vocabulary, and this one does by construction. Why 27 layers: the guide measured
# the drafts that can be built here (`benchmarks/draft_choice.py`); shallower ones almost never
# agree with the target (4-10% of tokens), so they show no speculation at all. On this CPU no
# draft built from the target is cheap enough to pay for itself; the draft here shows the
# mechanism, and the NGram section below shows a real speed-up.
#
# `speculation.hf_logits_fn` wraps each model with a KV cache: the keys and values of tokens
# already seen are kept, so a call computes only the new positions.

# %%
target_dir, draft_dir = ensure_checkpoint(), ensure_draft_checkpoint()
tokenizer = AutoTokenizer.from_pretrained(target_dir)
target = AutoModelForCausalLM.from_pretrained(target_dir, dtype=torch.float32).eval()
draft = AutoModelForCausalLM.from_pretrained(draft_dir, dtype=torch.float32).eval()
target_logits, draft_logits = speculation.hf_logits_fn(target), speculation.hf_logits_fn(draft)
print("target:", target.config.num_hidden_layers, "layers,", sum(p.numel() for p in target.parameters()), "parameters")
print("draft: ", draft.config.num_hidden_layers, "layers,", sum(p.numel() for p in draft.parameters()), "parameters")


def chat(text: str) -> list[int]:
    """Token ids of a user message in the model's chat template, ready for the answer."""
    return tokenizer.apply_chat_template([{"role": "user", "content": text}], add_generation_prompt=True,
                                         tokenize=True, return_dict=True)["input_ids"]


# %% [markdown]
# ## One step by hand
#
# The drafter proposes *k* tokens. The target reads prompt + draft in a single pass and, at
# each draft position, says which token *it* would have chosen. We keep the longest prefix
# on which both agree, then append the target's own choice at the first disagreement (or
# after the last draft token when all match). So one target pass yields between 1 and
# *k* + 1 tokens.

# %%
prompt = chat("Name three colours of the rainbow.")
k = 3

proposal, context = [], list(prompt)
with torch.no_grad():
    for _ in range(k):
        nxt = int(draft_logits(context, len(context) - 1)[-1].argmax())  # logits of the last position
        proposal.append(nxt)
        context.append(nxt)
    # rows len(prompt) - 1 .. end: the target's prediction at each draft position, and one more
    step_logits = target_logits(prompt + proposal, len(prompt) - 1)

emitted, accepted = speculation.verify(step_logits, proposal, speculation.SamplingConfig())
print("draft proposed:", proposal, repr(tokenizer.decode(proposal)))
print("target chose:  ", step_logits.argmax(-1).tolist(), repr(tokenizer.decode(step_logits.argmax(-1))))
print(f"accepted {accepted} of {k} draft tokens; this target pass emitted {len(emitted)} tokens: {emitted}")

# %% [markdown]
# ## The whole loop, checked against plain decoding
#
# A drafter is anything with `propose(request) -> list[int]`. Here the draft model proposes
# greedily. We decode the same prompts with and without it and **assert** that the texts are
# identical token for token: speculation may only change *how fast* tokens arrive, never
# *which* tokens.


# %%
class DraftModelDrafter:
    """Greedy proposals from the draft model: k cheap forward passes per target pass."""

    def __init__(self, logits_fn):
        self.logits_fn = logits_fn

    def propose(self, request: speculation.DraftRequest) -> list[int]:
        tokens, out = list(request.tokens), []
        with torch.no_grad():
            for _ in range(request.max_draft_len):
                out.append(int(self.logits_fn(tokens, len(tokens) - 1)[-1].argmax()))
                tokens.append(out[-1])
        return out


prompts = ["Name three colours of the rainbow.", "What is a good name for a cat?", "Say hello in French."]
MAX_NEW = 24
EOS = tokenizer.eos_token_id
rows, all_lengths, accepted, rejections = [], [], 0, 0
for text in prompts:
    ids = chat(text)
    plain = speculation.generate(target_logits, ids, MAX_NEW, eos_id=EOS)
    spec = speculation.generate(
        target_logits, ids, MAX_NEW, drafter=DraftModelDrafter(draft_logits), max_draft_len=k, eos_id=EOS
    )
    assert spec.tokens == plain.tokens, f"speculation changed the output for {text!r}"
    all_lengths += spec.stats.acceptance_lengths
    accepted, rejections = accepted + spec.stats.accepted_tokens, rejections + spec.stats.rejections
    rows.append((text, plain.stats.target_steps, spec.stats.target_steps,
                 spec.stats.acceptance_rate, spec.stats.mean_acceptance_length))

print(f"{'prompt':36} {'plain passes':>12} {'spec passes':>12} {'accept rate':>12} {'accept len':>11}")
for text, p_steps, s_steps, rate, alen in rows:
    print(f"{text:36} {p_steps:12d} {s_steps:12d} {rate:12.2f} {alen:11.2f}")
print("\nall outputs identical to plain greedy decoding")
print("last answer:", repr(tokenizer.decode(spec.tokens, skip_special_tokens=True)))

# %% [markdown]
# The *acceptance length* column is the figure TensorRT-LLM reports for speculative
# decoding: tokens emitted per target forward pass. Plain decoding is 1.0 by definition.
#
# Two "acceptance" figures are easy to confuse. TensorRT-LLM's `acceptance_rate` is accepted
# draft tokens divided by drafted tokens. But once one draft token is rejected, the tokens
# after it are never even compared, yet they count as drafted. The *per-token acceptance*,
# the chance that a draft token is accepted given that the ones before it were, is accepted /
# (accepted + misses); it is the `a` of the formulas in the next section.

# %%
counts = np.bincount(all_lengths, minlength=k + 2)[1:]
for n, c in enumerate(counts, start=1):
    print(f"{n} token(s) per pass: {c:3d} passes")
measured_rate = float(np.mean([r[3] for r in rows]))
per_token = accepted / (accepted + rejections)
measured_len = float(np.mean(all_lengths))
print()
for label, value in [("acceptance rate (accepted / drafted)", measured_rate),
                     ("per-token acceptance (accepted / (accepted + misses))", per_token),
                     ("tokens per target pass", measured_len)]:
    print(f"{label:<54} {value:.2f}")
# %% [markdown]
# ## How much faster could it be?
#
# If each draft token is accepted independently with probability *a*, one target pass yields
# on average
#
# $$E[\text{tokens per pass}] = \frac{1 - a^{k+1}}{1 - a}$$
#
# tokens (Leviathan et al., 2023, "Fast Inference from Transformers via Speculative
# Decoding", eq. 1). Drafting is not free: if one draft step costs *c* target passes, the
# expected speed-up over plain decoding is that figure divided by *kc* + 1 (their
# theorem 3.8). Here *a* is the per-token acceptance from above, not the acceptance rate.
# The left plot shows the first formula, the right one the speed-up for a few draft costs;
# the dot is what the draft above measured, placed at its per-token acceptance.

# %%
a = np.linspace(0.0, 0.99, 200)
fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
for draft_len in (1, 2, 4, 8):
    left.plot(a, [speculation.expected_tokens_per_step(x, draft_len) for x in a], label=f"k = {draft_len}")
left.scatter([per_token], [measured_len], color="black", zorder=3, label=f"27-layer draft, k = {k} (measured)")
left.set(xlabel="per-token acceptance a", ylabel="expected tokens per target pass", title="Tokens per pass")
left.legend()
ks = np.arange(1, 11)
for rate in (0.6, 0.8):
    for cost in (0.05, 0.2):
        right.plot(ks, [speculation.expected_speedup(rate, int(x), cost) for x in ks], marker="o",
                   label=f"a = {rate}, c = {cost}")
right.axhline(1.0, color="grey", linewidth=0.8)
right.set(xlabel="draft length k", ylabel="expected speed-up", title="Speed-up once drafting costs c")
right.legend()
fig.tight_layout()
plt.show()

# %% [markdown]
# How close is the formula? It assumes every draft token is accepted independently with the
# same probability, and it ignores the last passes of a request, whose drafts are cut short
# by the token budget.

# %%
predicted_len = speculation.expected_tokens_per_step(per_token, k)
print(f"formula at a = {per_token:.2f}, k = {k}: {predicted_len:.2f} tokens per pass; measured {measured_len:.2f}")

# %% [markdown]
# Two lessons carry over to real deployments:
#
# - Gains depend on the acceptance rate, which depends on the *workload*: code and
#   translation repeat the prompt and accept more; open chat accepts less.
# - A longer draft is not always better: past a point each extra draft token costs more
#   than it is expected to return. That is why every TensorRT-LLM method has a
#   `max_draft_len`.

# %% [markdown]
# ## What the KV cache saves, and what a pass costs here
#
# Without a cache the target would re-read the whole sequence at every pass. With it, a pass
# feeds only what the cache lacks: the token the target added last time plus the new draft;
# after a rejection the rejected draft positions are cropped away. The counters below are the
# target's over everything this notebook ran.

# %%
print(f"target passes: {target_logits.forward_calls}, positions computed: {target_logits.positions_computed}")

# %% [markdown]
# The cheapest drafter is no model at all. Asked to reformat or edit code, a model writes much
# of the prompt back, and an n-gram drafter (TensorRT-LLM's `NGram` method: propose what followed
# the last matching tokens earlier in the sequence) guesses those copies for free. Below, it is
# timed against plain decoding of the same prompt, on one CPU thread (CPU time of this
# process, which other jobs on a shared machine do not stretch); the text is checked to be
# identical. Whether it is faster depends on the price of a pass: on a GPU at batch 1, extra
# positions in a pass are nearly free; on a CPU core, with PyTorch's stock layers as this
# notebook loads the model, a pass over five positions costs well over one plain step, so a
# rejected draft token costs time (the guide's CPU engine packs its weights to bring that pass
# close to one step: *Speed on a CPU*). The figures printed are this run's.
#
# A speed-up only counts on an answer that is right: a model stuck repeating itself is easy to
# draft for and useless. So the task is one this 135M model does correctly (spread a dictionary
# over one line per key), and the cell checks the answer: it must end on its own (end-of-sequence
# token, not the token budget), span several lines and hold the same dictionary as the prompt.

# %%
import ast  # noqa: E402
import re  # noqa: E402

from specdec_guide.drafters.ngram import NGramDrafter  # noqa: E402

one_line = 'config = {"host": "localhost", "port": 8000, "debug": True, "workers": 4, "timeout": 30}'
code_prompt = chat("Format this Python dictionary with one key per line. Reply with the code only.\n\n"
                   f"```python\n{one_line}\n```")
timed = {}
for name, drafter in [("plain", None), ("NGram", NGramDrafter(max_draft_len=4, max_matching_ngram_size=2))]:
    target_logits.reset()
    start = time.process_time()
    timed[name] = (speculation.generate(target_logits, code_prompt, 96, drafter=drafter, max_draft_len=4, eos_id=EOS),
                   time.process_time() - start)
assert timed["NGram"][0].tokens == timed["plain"][0].tokens
answer = tokenizer.decode(timed["plain"][0].tokens, skip_special_tokens=True)
block = re.search(r"```python\n(.*?)```", answer, re.S)
assert timed["plain"][0].tokens[-1] == EOS, "the answer was cut by the token budget"
assert block and block.group(1).count("\n") > 2, "the answer is not spread over several lines"
assert ast.literal_eval(block.group(1).split("=", 1)[1].strip()) == ast.literal_eval(one_line.split("=", 1)[1].strip())
ngram_stats = timed["NGram"][0].stats
print(f"plain: {timed['plain'][1]:.1f} CPU s; NGram: {timed['NGram'][1]:.1f} CPU s "
      f"({timed['plain'][1] / timed['NGram'][1]:.2f}x), acceptance rate {ngram_stats.acceptance_rate:.2f}, "
      f"{ngram_stats.mean_acceptance_length:.2f} tokens per target pass; "
      f"{len(timed['plain'][0].tokens)} tokens, ended by the model, same dictionary; identical text:")
print(answer)

# %% [markdown]
# The guide's benchmark on this model, with more prompts and Hugging Face's own prompt lookup
# beside our engine, is on the guide's page *Speed on a CPU*.
