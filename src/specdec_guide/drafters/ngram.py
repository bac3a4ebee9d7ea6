"""NGram (prompt-lookup) drafting with TensorRT-LLM's pool semantics, written afresh for the CPU.

Semantics taken from reading TensorRT-LLM's ``tensorrt_llm/_torch/speculative/ngram.py``
(``NGramPoolManager.get_draft_tokens``; the 1.x host-side implementation, before later releases
moved NGram to a GPU suffix automaton). No code is shared with it.

The pool maps a *pattern* (the last 1..``max_matching_ngram_size`` tokens) to *matches* (up to
``max_draft_len`` tokens that followed that pattern somewhere earlier). Each step:

1. the pool learns every (pattern, match) pair in the request's tokens it has not fully seen
   yet (it rescans the last ``max_draft_len + max_matching_ngram_size - 1`` tokens, because the
   pairs near the end were cut short by the end of the sequence and may now be longer);
   a new match for a pattern evicts that pattern's shorter matches;
2. the draft is a match of the *longest* pattern that ends the sequence.

Flags, as documented upstream:

- ``is_keep_all``: keep every distinct match per pattern; false keeps one (the first one seen,
  replaced only by a longer one). Upstream's code adds a later match of equal length even when
  the flag is false; we follow the documented meaning, so the flag has a visible effect.
- ``is_use_oldest``: with several matches, propose the oldest (true) or the newest (false).
- ``is_public_pool``: one pool shared by all requests (true), or one per request, freed when the
  request ends (false). A public pool lets request B draft from what request A generated.
"""

from __future__ import annotations

from specdec_guide.speculation_types import DraftRequest

Pattern = tuple[int, ...]
Match = tuple[int, ...]


class NGramPool:
    """Pattern -> ordered matches (oldest first) for one pool."""

    def __init__(self) -> None:
        self.matches: dict[Pattern, list[Match]] = {}

    def learn(self, pattern: Pattern, match: Match, keep_all: bool) -> None:
        kept = self.matches.get(pattern)
        if kept is None:
            self.matches[pattern] = [match]
        elif not keep_all:
            if len(match) > len(kept[0]):  # the kept match was cut short by the sequence end
                kept[0] = match
        elif match not in kept:
            # Shorter candidates are mostly copies cut short by the sequence end: drop them.
            kept[:] = [m for m in kept if len(m) >= len(match)]
            kept.append(match)

    def __len__(self) -> int:
        return len(self.matches)


class NGramDrafter:
    """A :class:`specdec_guide.speculation.Drafter` with TensorRT-LLM's NGram options."""

    def __init__(
        self,
        max_draft_len: int,
        max_matching_ngram_size: int,
        is_keep_all: bool = True,
        is_use_oldest: bool = True,
        is_public_pool: bool = True,
    ):
        if max_draft_len < 1 or max_matching_ngram_size < 1:
            raise ValueError("max_draft_len and max_matching_ngram_size must be >= 1")
        self.max_draft_len = max_draft_len
        self.max_matching_ngram_size = max_matching_ngram_size
        self.is_keep_all = is_keep_all
        self.is_use_oldest = is_use_oldest
        self.is_public_pool = is_public_pool
        self.public_pool = NGramPool()
        self.private_pools: dict[int, NGramPool] = {}
        self.scan_from: dict[int, int] = {}  # request id -> first token index not yet fully learned

    @classmethod
    def from_config(cls, spec) -> "NGramDrafter":
        return cls(spec.max_draft_len, spec.max_matching_ngram_size, spec.is_keep_all, spec.is_use_oldest,
                   spec.is_public_pool)

    def pool_for(self, request_id: int) -> NGramPool:
        if self.is_public_pool:
            return self.public_pool
        return self.private_pools.setdefault(request_id, NGramPool())

    def propose(self, request: DraftRequest) -> list[int]:
        tokens = request.tokens
        pool = self.pool_for(request.request_id)
        self._learn(pool, request.request_id, tokens)
        # A pattern must leave at least one earlier token to have been followed by something.
        for size in range(min(self.max_matching_ngram_size, len(tokens) - 1), 0, -1):
            found = pool.matches.get(tuple(tokens[-size:]))
            if found:
                match = found[0] if self.is_use_oldest else found[-1]
                return list(match[: request.max_draft_len])
        return []

    def _learn(self, pool: NGramPool, request_id: int, tokens: list[int]) -> None:
        start = self.scan_from.get(request_id, 0)
        longest = min(self.max_matching_ngram_size, len(tokens) - 1)
        for size in range(longest, 0, -1):
            for i in range(start, len(tokens) - size):
                pattern = tuple(tokens[i : i + size])
                match = tuple(tokens[i + size : i + size + self.max_draft_len])
                pool.learn(pattern, match, self.is_keep_all)
        # Pairs starting before this index were complete: never rescan them.
        self.scan_from[request_id] = max(0, len(tokens) - (self.max_draft_len + self.max_matching_ngram_size - 1))

    def end_request(self, request_id: int) -> None:
        """Forget a finished request (its private pool; a public pool keeps what it learned)."""
        self.scan_from.pop(request_id, None)
        self.private_pools.pop(request_id, None)
