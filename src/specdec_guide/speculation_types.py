"""The records the draft -> verify -> accept loop takes and gives (:mod:`specdec_guide.speculation`
re-exports them): a drafter's request, a request's sampling, a step's result and the counts.

No torch at import: a Triton model's stub reads requests and answers with these types without
loading a model (the engine runs in the engine host's process: :mod:`specdec_guide.engine.host`).
The tensor methods of :class:`SamplingConfig` import torch when they are called.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, Sequence, runtime_checkable

if TYPE_CHECKING:
    import torch


@dataclass
class DraftRequest:
    """What a drafter sees: one request's tokens so far and how many it may propose."""

    request_id: int
    tokens: list[int]  # prompt + generated so far
    prompt_len: int
    max_draft_len: int


@runtime_checkable
class Drafter(Protocol):
    """Proposes up to ``request.max_draft_len`` next tokens; may propose none."""

    def propose(self, request: DraftRequest) -> list[int]: ...


@dataclass(frozen=True)
class SamplingConfig:
    """The request's sampling knobs. ``temperature == 0`` (or ``top_k == 1``) is greedy."""

    temperature: float = 0.0
    top_k: int = 0  # 0: no top-k cut
    top_p: float = 1.0
    seed: int | None = None
    # Additive penalties on the logits before temperature / top-k / top-p, as TensorRT-LLM's C++
    # penalty kernel (TRTLLMSampler) applies them: a token seen n > 0 times loses
    # presence_penalty once and frequency_penalty * n. Seen = in the prompt too unless
    # ``penalize_prompt`` is false (the kernel's prompt_ignore_length 0 counts the whole prompt).
    frequency_penalty: float = 0.0
    presence_penalty: float = 0.0
    penalize_prompt: bool = True

    @property
    def greedy(self) -> bool:
        return self.temperature <= 0.0 or self.top_k == 1

    @property
    def penalized(self) -> bool:
        return self.frequency_penalty != 0.0 or self.presence_penalty != 0.0

    def penalize(self, logits: torch.Tensor, counts: torch.Tensor | None) -> torch.Tensor:
        """``logits`` [vocab] less the penalties for ``counts`` (occurrences per token id)."""
        if counts is None or not self.penalized:
            return logits
        counts = counts[: logits.shape[-1]]
        return (logits.float() - self.frequency_penalty * counts
                - self.presence_penalty * (counts > 0).float())

    def initial_counts(self, tokens: Sequence[int], prompt_len: int, vocab: int) -> torch.Tensor | None:
        """Occurrences of each token id the penalties look at, before the first generated token."""
        if not self.penalized:
            return None
        import torch

        seen = list(tokens) if self.penalize_prompt else list(tokens)[prompt_len:]
        counts = torch.zeros(vocab, dtype=torch.float32)
        if seen:
            counts += torch.bincount(torch.tensor(seen, dtype=torch.long), minlength=vocab)[:vocab].float()
        return counts

    def probs(self, logits: torch.Tensor) -> torch.Tensor:
        """Turn logits [..., vocab] into the distribution the target samples from."""
        import torch

        logits = logits.float() / max(self.temperature, 1e-6)
        if self.top_k > 0:
            kth = torch.topk(logits, min(self.top_k, logits.shape[-1]), dim=-1).values[..., -1:]
            logits = logits.masked_fill(logits < kth, float("-inf"))
        probs = torch.softmax(logits, dim=-1)
        if self.top_p < 1.0:
            sorted_p, order = torch.sort(probs, dim=-1, descending=True)
            # keep the smallest prefix whose mass reaches top_p (always at least one token)
            drop = (torch.cumsum(sorted_p, dim=-1) - sorted_p) >= self.top_p
            sorted_p = sorted_p.masked_fill(drop, 0.0)
            probs = torch.zeros_like(probs).scatter(-1, order, sorted_p)
            probs = probs / probs.sum(dim=-1, keepdim=True)
        return probs


@dataclass
class StepResult:
    """One target step: the tokens it emitted and how the draft fared."""

    tokens: list[int]
    drafted: int
    accepted: int


@dataclass
class SpecStats:
    target_steps: int = 0
    drafted_tokens: int = 0
    accepted_tokens: int = 0
    rejections: int = 0  # steps whose draft was not kept whole: cut at a mismatch, or at an end token in it
    acceptance_lengths: list[int] = field(default_factory=list)

    @property
    def generated_tokens(self) -> int:
        return sum(self.acceptance_lengths)

    @property
    def acceptance_rate(self) -> float:
        return self.accepted_tokens / self.drafted_tokens if self.drafted_tokens else 0.0

    @property
    def per_token_acceptance(self) -> float:
        examined = self.accepted_tokens + self.rejections
        return self.accepted_tokens / examined if examined else 0.0

    @property
    def mean_acceptance_length(self) -> float:
        return self.generated_tokens / self.target_steps if self.target_steps else 0.0

    def add(self, step: StepResult) -> None:
        self.target_steps += 1
        self.drafted_tokens += step.drafted
        self.accepted_tokens += step.accepted
        self.rejections += step.accepted < step.drafted
        self.acceptance_lengths.append(len(step.tokens))
