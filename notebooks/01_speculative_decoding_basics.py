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
# This notebook runs the whole loop on a CPU with two tiny models that our own code builds
# (no download), so every number below comes from the run you are looking at. The loop is
# `specdec_guide.speculation`, the same code the CPU reference engine serves behind Triton
# later in the guide.
#
# > **What this page proves, and what it does not.** It proves the *rule*: greedy
# > speculative decoding returns exactly the target's own greedy output, and shows how
# > acceptance turns into fewer target passes. The tiny models print gibberish and a CPU says
# > nothing about GPU speed; GPU figures come later, from GPU runs, with their provenance.

# %%
import tempfile
import warnings

import matplotlib.pyplot as plt
import numpy as np
import torch

warnings.filterwarnings("ignore", message="IProgress not found")  # tqdm without ipywidgets
from transformers import AutoModelForCausalLM, AutoTokenizer  # noqa: E402
from transformers.utils import logging as hf_logging  # noqa: E402

from specdec_guide import speculation  # noqa: E402
from specdec_guide.models.tiny import write_tiny_models  # noqa: E402

torch.set_num_threads(1)  # small models: threads cost more than they save
hf_logging.disable_progress_bar()  # keep the stored outputs free of progress-bar noise

# %% [markdown]
# ## Two tiny models
#
# `write_tiny_models` writes a 4-layer target and a 1-layer draft in Hugging Face format.
# The draft is the target's first layer with the same embeddings and LM head, so it agrees
# with the target often but not always: just what a drafter is. Both share one byte-level
# tokenizer, because a draft must speak the target's vocabulary.

# %%
model_dir = tempfile.mkdtemp(prefix="tiny-models-")
target_dir, draft_dir = write_tiny_models(model_dir)
tokenizer = AutoTokenizer.from_pretrained(target_dir)
target = AutoModelForCausalLM.from_pretrained(target_dir).eval()
draft = AutoModelForCausalLM.from_pretrained(draft_dir).eval()


def logits_of(model):
    """Adapt a Hugging Face model to the loop's interface: tokens -> logits for every position."""
    return lambda tokens: model(torch.tensor([list(tokens)])).logits[0]


target_logits, draft_logits = logits_of(target), logits_of(draft)
print("target parameters:", sum(p.numel() for p in target.parameters()))
print("draft parameters: ", sum(p.numel() for p in draft.parameters()))

# %% [markdown]
# ## One step by hand
#
# The drafter proposes *k* tokens. The target reads prompt + draft in a single pass and, at
# each draft position, says which token *it* would have chosen. We keep the longest prefix
# on which both agree, then append the target's own choice at the first disagreement (or
# after the last draft token when all match). So one target pass yields between 1 and
# *k* + 1 tokens.

# %%
prompt = tokenizer("Speculative decoding", add_special_tokens=False)["input_ids"]
k = 4

proposal, context = [], list(prompt)
with torch.no_grad():
    for _ in range(k):
        nxt = int(draft_logits(context)[-1].argmax())
        proposal.append(nxt)
        context.append(nxt)
    step_logits = target_logits(prompt + proposal)[len(prompt) - 1 :]

emitted, accepted = speculation.verify(step_logits, proposal, speculation.SamplingConfig())
print("draft proposed:", proposal)
print("target chose:  ", step_logits.argmax(-1).tolist())
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
                out.append(int(self.logits_fn(tokens)[-1].argmax()))
                tokens.append(out[-1])
        return out


prompts = ["Speculative decoding", "The quick brown fox", "def main():", "Triton serves models"]
MAX_NEW = 64
rows, all_lengths, accepted, rejections = [], [], 0, 0
for text in prompts:
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    plain = speculation.generate(target_logits, ids, MAX_NEW)
    spec = speculation.generate(
        target_logits, ids, MAX_NEW, drafter=DraftModelDrafter(draft_logits), max_draft_len=k
    )
    assert spec.tokens == plain.tokens, f"speculation changed the output for {text!r}"
    all_lengths += spec.stats.acceptance_lengths
    accepted, rejections = accepted + spec.stats.accepted_tokens, rejections + spec.stats.rejections
    rows.append((text, plain.stats.target_steps, spec.stats.target_steps,
                 spec.stats.acceptance_rate, spec.stats.mean_acceptance_length))

print(f"{'prompt':24} {'plain passes':>12} {'spec passes':>12} {'accept rate':>12} {'accept len':>11}")
for text, p_steps, s_steps, rate, alen in rows:
    print(f"{text:24} {p_steps:12d} {s_steps:12d} {rate:12.2f} {alen:11.2f}")
print("\nall outputs identical to plain greedy decoding")
print("sample continuation:", repr(tokenizer.decode(spec.tokens[:40])))

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
# the dot is what the tiny models above measured, placed at their per-token acceptance.

# %%
a = np.linspace(0.0, 0.99, 200)
fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
for draft_len in (1, 2, 4, 8):
    left.plot(a, [speculation.expected_tokens_per_step(x, draft_len) for x in a], label=f"k = {draft_len}")
left.scatter([per_token], [measured_len], color="black", zorder=3, label="tiny models, k = 4 (measured)")
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
