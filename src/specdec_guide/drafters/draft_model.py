"""Draft/Target drafting: a smaller model with the target's tokenizer proposes tokens greedily.

TensorRT-LLM's DraftTarget mode runs the draft checkpoint (``speculative_model_dir``) for
``max_draft_len`` greedy steps, then the target verifies them in one pass. Here the draft model
keeps its own KV cache (:class:`~specdec_guide.speculation.CachedLogits`): each draft token costs
one single-position forward pass, and draft tokens the target rejected are cropped from it.
"""

from __future__ import annotations

import torch

from specdec_guide.speculation import DraftRequest, LogitsFn, hf_logits_fn


class DraftModelDrafter:
    """Greedy proposals from a draft model, up to ``request.max_draft_len`` tokens."""

    def __init__(self, draft_logits: LogitsFn, max_draft_len: int, vocab_size: int | None = None):
        self.draft_logits = draft_logits
        self.max_draft_len = max_draft_len
        self.vocab_size = vocab_size  # the target's: a draft token outside it cannot be verified

    @classmethod
    def from_pretrained(cls, path: str, max_draft_len: int, vocab_size: int | None = None) -> "DraftModelDrafter":
        from specdec_guide.attention import load_causal_lm

        model = load_causal_lm(path)
        if vocab_size is not None and model.config.vocab_size > vocab_size:
            raise ValueError(f"draft model {path} has vocabulary {model.config.vocab_size}, larger than the "
                             f"target's {vocab_size}: a draft model must share the target's tokenizer")
        return cls(hf_logits_fn(model), max_draft_len, vocab_size)

    def start_request(self, request_id: int, prompt_len: int, max_tokens: int) -> None:
        """A new request: drop the cache of the last one (each request pays for its own prompt)."""
        if hasattr(self.draft_logits, "reset"):
            self.draft_logits.reset()

    def propose(self, request: DraftRequest) -> list[int]:
        tokens = list(request.tokens)
        draft: list[int] = []
        for _ in range(min(request.max_draft_len, self.max_draft_len)):
            token = int(torch.argmax(self.draft_logits(tokens, len(tokens) - 1)[-1]))
            draft.append(token)
            tokens.append(token)
        return draft
