"""The draft -> verify -> accept loop, written once and shared.

The basics notebook teaches it, the CPU reference engine serves it behind Triton, and the
user-provided-drafter tutorial plugs drafters into it. It is deliberately small: one request
at a time, and the model behind it is a :data:`LogitsFn`. :func:`hf_logits_fn` wraps a Hugging
Face model with a KV cache that is kept across steps and rolled back after a rejection, so
verifying k draft tokens costs one forward pass over k + 1 new positions, as on a GPU. What it
keeps exact is the *rule*: with greedy decoding the output is token-for-token the target's own
greedy output; with sampling it is distributed exactly as the target's (speculative sampling,
Leviathan et al. 2023, with a deterministic drafter's proposal treated as a one-hot
distribution).

Vocabulary used throughout:

- *target step*: one forward pass of the target model that scores the draft (with a KV cache,
  over the positions it has not seen yet: the tokens emitted last step + the draft);
- *acceptance length*: tokens emitted per target step (accepted draft tokens + the one token
  the target always contributes), the figure TRT-LLM reports as "acceptance length";
- *acceptance rate*: accepted draft tokens / drafted tokens (TensorRT-LLM's ``acceptance_rate``);
- *per-token acceptance*: the probability that a draft token is accepted given that the ones
  before it were, estimated as accepted / (accepted + rejections). This is the ``a`` of the
  expected-speed-up formulas; it is higher than the acceptance rate, because every draft token
  after the first rejection counts as drafted but is never even compared.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Callable, Iterator, Sequence

import torch

from specdec_guide.packed_linear import verifying

# Re-exported: the loop's records live where a process without torch can import them.
from specdec_guide.speculation_types import (  # noqa: F401
    Drafter,
    DraftRequest,
    SamplingConfig,
    SpecStats,
    StepResult,
)

#: logits_fn(tokens, start=0) -> float tensor [len(tokens) - start, vocab]: the rows for positions
#: start .. len(tokens) - 1, where the row of position i predicts token i + 1. ``start`` lets a
#: cached model compute only the positions it has not seen.
LogitsFn = Callable[..., torch.Tensor]


class CachedLogits:
    """A Hugging Face causal LM as a :data:`LogitsFn`, with a KV cache that follows the tokens.

    The cache holds the keys and values of ``self.tokens``. A call keeps the part of it that is a
    prefix of the new ``tokens`` (and lies before ``start``), drops the rest, and runs the model
    on the remaining positions only. In the loop that means: after a step whose draft was cut at
    a rejection, the rejected draft positions are cropped away and the next step feeds only the
    emitted tokens plus the new draft. No rule of the loop depends on this: the logits are the
    model's for the same tokens, computed in fewer, larger pieces (so they can differ from a
    full re-read in the last floating-point bits, as on any batched GPU kernel).
    """

    def __init__(self, model):
        self.model = model
        self.tokens: list[int] = []
        self.cache = None
        self.forward_calls = 0
        self.positions_computed = 0  # tokens fed to the model, over all calls
        self._head = _plain_head(model)
        self._last_rows: LazyRows | None = None
        self._eager = False  # compute every row at once: the last draft's first token was accepted

    def reset(self) -> None:
        """Forget the cache (a new, unrelated request starts; keeps timings independent)."""
        self.tokens, self.cache = [], None
        self._last_rows, self._eager = None, False

    def __call__(self, tokens: Sequence[int], start: int = 0) -> torch.Tensor:
        rows = self.rows(tokens, start)
        return rows[0:len(rows)]

    def rows(self, tokens: Sequence[int], start: int = 0, eager: bool | None = None) -> "Rows":
        """Like calling it, but the logits rows are computed when first read (see :class:`LazyRows`).

        The layers run over every new position at once; only the LM head waits. Verification
        reads rows in order and stops at the first rejected draft token, so the rows after it
        are never computed: on a CPU, where the head's matrix (vocabulary x hidden) is the
        largest read of a step, that makes a rejected draft cheaper. Drafts come in streaks
        (copied text is accepted pass after pass, free text rejected), so when the last draft's
        first token was accepted, this pass computes all its rows in one product instead.
        ``eager`` True or False overrides that choice for this pass (benchmarks measure both).
        """
        tokens = [int(t) for t in tokens]
        if not 0 <= start < len(tokens):
            raise ValueError(f"start={start} must index one of the {len(tokens)} tokens")
        # Inference mode, not just no_grad: no version counters or views to track on the cache's
        # tensors (measured: 2-4% of a decoding step on this CPU, same logits). Its tensors are
        # only ever read outside it; every update to the cache happens in here.
        with torch.inference_mode():
            return self._rows(tokens, start, eager)

    def _rows(self, tokens: list[int], start: int, eager: bool | None) -> "Rows":
        from transformers import DynamicCache

        keep = min(_common_prefix(self.tokens, tokens), start)
        if self.cache is None or keep == 0:
            # Without the model's config every layer keeps every position: transformers 5's
            # sliding-window layers cannot be cropped back once past their window, and the model's
            # own attention mask applies the window either way.
            self.cache, keep = DynamicCache(), 0
        elif keep < self.cache.get_seq_length():
            self.cache.crop(keep - self.cache.get_seq_length())  # transformers 5: negative = remove
        self.tokens = []  # if the forward pass fails half-way, the cache is not trusted again
        new = torch.tensor([tokens[keep:]], dtype=torch.long)
        n_rows = len(tokens) - start
        # A pass over several new positions on top of the cache verifies a draft: layers that can
        # multiply a few rows by packed weights do so (packed_linear); a prompt stays on stock layers.
        kind = verifying() if keep > 0 and new.shape[1] > 1 else contextlib.nullcontext()
        # the cache object is updated in place with the new positions' keys and values
        if self._head is None:
            with kind:
                out = self.model(input_ids=new, cache=self.cache, use_cache=True, logits_to_keep=n_rows)
            rows: Rows = out.logits[0].float()
        else:
            last = self._last_rows
            if last is not None and len(last) > 1:  # the last pass had a draft: was its first token taken?
                self._eager = last.read_past_first
            with kind:
                hidden = self.model.get_decoder()(input_ids=new, cache=self.cache, use_cache=True).last_hidden_state
            rows = self._last_rows = LazyRows(hidden[0, -n_rows:], self._head,
                                              eager=self._eager if eager is None else eager)
        self.tokens = tokens
        self.forward_calls += 1
        self.positions_computed += len(tokens) - keep
        return rows


class LazyRows:
    """Logits rows [n, vocab] from hidden states [n, hidden], each computed when first read.

    Reading row 0 computes it alone (unless ``eager``: then every row at once); reading any later
    row computes every row not yet computed in one product, since a draft whose first token was
    accepted is often accepted further.
    ``rows[i]`` is a row, ``rows[a:b]`` a tensor of rows, ``len(rows)`` their number.
    """

    def __init__(self, hidden: torch.Tensor, head: Callable[[torch.Tensor], torch.Tensor], eager: bool = False):
        self.hidden = hidden
        self.head = head
        self.eager = eager  # the first read computes every row
        self.done: torch.Tensor | None = None  # rows computed so far, from row 0
        self.head_rows = 0  # rows the head has computed, for tests and benchmarks
        self.read_past_first = False  # a row after row 0 was read: the draft's first token was accepted

    def __len__(self) -> int:
        return self.hidden.shape[0]

    def _compute(self, upto: int) -> None:
        have = 0 if self.done is None else self.done.shape[0]
        if upto <= have:
            return
        upto = 1 if have == 0 and upto == 1 and not self.eager else len(self)
        # see CachedLogits.rows; rows of a draft are verified (packed weights where the head has them)
        with torch.inference_mode(), verifying():
            more = self.head(self.hidden[have:upto]).float()
        self.head_rows += upto - have
        self.done = more if self.done is None else torch.cat([self.done, more])

    def __getitem__(self, index):
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            self.read_past_first |= stop > 1
            self._compute(stop)
            return self.done[start:stop:step]
        i = index + len(self) if index < 0 else index
        if not 0 <= i < len(self):
            raise IndexError(f"row {index} of {len(self)}")
        self.read_past_first |= i > 0
        self._compute(i + 1)
        return self.done[i]


#: What a step's scoring returns: a logits tensor [n, vocab] or :class:`LazyRows` (same indexing).
Rows = "torch.Tensor | LazyRows"


def _common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


#: Architectures whose logits are exactly lm_head(decoder(...)) in transformers (no soft-capping or
#: scaling after the head): for them the head can wait until a row is read. Others run whole.
LAZY_HEAD_MODEL_TYPES = frozenset({"llama"})


def _plain_head(model) -> Callable[[torch.Tensor], torch.Tensor] | None:
    """The LM head of a model in :data:`LAZY_HEAD_MODEL_TYPES`, else None (full forward passes)."""
    if getattr(model.config, "model_type", None) not in LAZY_HEAD_MODEL_TYPES:
        return None
    head = model.get_output_embeddings()
    return head if isinstance(head, torch.nn.Linear) else None


def hf_logits_fn(model) -> CachedLogits:
    """Wrap a Hugging Face causal LM (one sequence at a time) as a KV-cached :data:`LogitsFn`."""
    return CachedLogits(model)


@dataclass
class Generation:
    tokens: list[int]
    stats: SpecStats
    finish_reason: str  # "length" or "stop" (end-of-sequence)


def _choose(probs: torch.Tensor, sampling: SamplingConfig, gen: torch.Generator | None) -> int:
    if sampling.greedy:
        return int(torch.argmax(probs))
    return int(torch.multinomial(probs, 1, generator=gen))


def verify(
    step_logits: Rows,
    draft: Sequence[int],
    sampling: SamplingConfig,
    gen: torch.Generator | None = None,
    counts: torch.Tensor | None = None,
) -> tuple[list[int], int]:
    """Accept a prefix of ``draft`` against the target's logits for those positions.

    ``step_logits`` has ``len(draft) + 1`` rows (a tensor, or :class:`LazyRows`): row i is the
    target's prediction for the position of draft token i, and the last row predicts the token
    after a fully accepted draft. Rows are read in order and none after the first rejection.
    Returns (emitted tokens, number of draft tokens accepted). Exactly one token that the target
    chose itself always follows the accepted prefix, so every step makes progress.

    ``counts`` (occurrences per token id before this step, see :meth:`SamplingConfig.initial_counts`)
    turns on the penalties: each row is penalized with the counts *as of its position*, the draft
    tokens accepted before it included, so the rule stays the one plain decoding follows. The
    caller's tensor is not changed.
    """
    if len(step_logits) != len(draft) + 1:
        raise ValueError(f"{len(step_logits)} logits rows for a draft of {len(draft)}: need len(draft) + 1")
    if counts is not None:
        counts = counts.clone()
    emitted: list[int] = []
    for i, token in enumerate(draft):
        row = sampling.penalize(step_logits[i], counts)
        if counts is not None:
            counts[int(token)] += 1  # used only if this token is accepted and the loop goes on
        if sampling.greedy:
            choice = int(torch.argmax(row))
            if choice != token:
                return emitted + [choice], i
            emitted.append(int(token))
            continue
        p = sampling.probs(row)
        # Proposal q is one-hot on `token`: accept with probability min(1, p/q) = p[token].
        if float(torch.rand((), generator=gen)) < float(p[token]):
            emitted.append(int(token))
            continue
        residual = p.clone()
        residual[token] = 0.0  # max(p - q, 0) for a one-hot q
        total = float(residual.sum())
        if total <= 0.0:  # p was one-hot on the rejected token; numerically impossible path
            residual = p
        emitted.append(int(torch.multinomial(residual / residual.sum(), 1, generator=gen)))
        return emitted, i
    last = sampling.penalize(step_logits[len(draft)], counts)
    emitted.append(int(torch.argmax(last)) if sampling.greedy else _choose(sampling.probs(last), sampling, gen))
    return emitted, len(draft)


def speculative_steps(
    logits_fn: LogitsFn,
    prompt: Sequence[int],
    max_new_tokens: int,
    *,
    drafter: Drafter | None = None,
    max_draft_len: int = 0,
    sampling: SamplingConfig = SamplingConfig(),
    eos_id: int | None = None,
    request_id: int = 0,
) -> Iterator[StepResult]:
    """Yield one :class:`StepResult` per target step until ``max_new_tokens`` or EOS.

    With ``drafter=None`` (or ``max_draft_len=0``) this is plain autoregressive decoding, one
    token per step: the baseline every speculative run is compared with.
    """
    if max_new_tokens < 1:
        raise ValueError("max_new_tokens must be >= 1")
    gen = None
    if not sampling.greedy:
        gen = torch.Generator().manual_seed(sampling.seed if sampling.seed is not None else 0)
    tokens = list(prompt)
    produced = 0
    counts: torch.Tensor | None = None  # occurrences for the penalties, built from the first row's size
    while produced < max_new_tokens:
        budget = max_new_tokens - produced
        draft: list[int] = []
        if drafter is not None and max_draft_len > 0 and budget > 1:
            # Never draft past the budget: the target adds one token of its own.
            limit = min(max_draft_len, budget - 1)
            request = DraftRequest(request_id, list(tokens), len(prompt), limit)
            draft = [int(t) for t in drafter.propose(request)][:limit]
        with torch.no_grad():  # one target pass scores the last token and the whole draft
            score = getattr(logits_fn, "rows", logits_fn)  # lazy rows where the LogitsFn offers them
            step_logits = score(tokens + draft, len(tokens) - 1)
        if sampling.penalized and counts is None:
            counts = sampling.initial_counts(tokens, len(prompt), int(step_logits[0].shape[-1]))
        emitted, accepted = verify(step_logits, draft, sampling, gen, counts)
        if eos_id is not None and eos_id in emitted:
            emitted = emitted[: emitted.index(eos_id) + 1]
            accepted = min(accepted, len(emitted))
        if counts is not None:
            for token in emitted:
                counts[int(token)] += 1
        tokens.extend(emitted)
        produced += len(emitted)
        yield StepResult(emitted, len(draft), accepted)
        if eos_id is not None and emitted[-1] == eos_id:
            return


def generate(
    logits_fn: LogitsFn,
    prompt: Sequence[int],
    max_new_tokens: int,
    **kwargs,
) -> Generation:
    """Run :func:`speculative_steps` to the end and collect tokens and statistics."""
    stats = SpecStats()
    out: list[int] = []
    eos_id = kwargs.get("eos_id")
    for step in speculative_steps(logits_fn, prompt, max_new_tokens, **kwargs):
        stats.add(step)
        out.extend(step.tokens)
    reason = "stop" if eos_id is not None and out and out[-1] == eos_id else "length"
    return Generation(out, stats, reason)


# The cost model lives in payoff (torch-free, read by estimate and the site's calculator).
from specdec_guide.payoff import (  # noqa: E402,F401
    expected_speedup, expected_tokens_per_step, per_token_acceptance_from_length)
