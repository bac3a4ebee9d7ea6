"""A prompt-lookup drafter written against TensorRT-LLM's user-provided drafter interface.

Idea: text often repeats itself (code, quotes, names, JSON keys). Take the last few tokens,
find where they occurred before, and propose the tokens that came next. The target model
verifies the proposal, so a wrong guess costs a little time and never changes the output.

The same class runs in two places:

- TensorRT-LLM (GPU): ``LLM(model, speculative_config=UserProvidedDecodingConfig(
  drafter=PromptLookupDrafter(max_draft_len=4), max_draft_len=4))``;
- the guide's CPU engine: ``triton_config.cpu_drafter: prompt_lookup_drafter:PromptLookupDrafter``
  in model.yaml (or ``path/to/prompt_lookup_drafter.py:PromptLookupDrafter``).
"""

from __future__ import annotations

try:  # TensorRT-LLM installed (GPU machine): the real base class
    from tensorrt_llm._torch.speculative.drafter import Drafter
except ImportError:  # CPU machine: a stand-in with the same constructor and abstract method
    from specdec_guide.drafters.user_provided import Drafter


class PromptLookupDrafter(Drafter):
    """Propose the continuation of the latest earlier occurrence of the sequence's tail."""

    def __init__(self, max_draft_len: int = 4, max_matching_ngram_size: int = 3):
        super().__init__()  # TensorRT-LLM 1.1.0's Drafter takes only max_concurrency (default None)
        self.max_draft_len = max_draft_len
        self.max_draft_tokens = max_draft_len  # read by the base class's CUDA-graph padding helper
        self.max_matching_ngram_size = max_matching_ngram_size

    def prepare_draft_tokens(self, scheduled_requests, resource_manager=None) -> None:
        # Called once per iteration; context (prefill) requests get no draft.
        for request in scheduled_requests.generation_requests:
            request.py_draft_tokens = self.lookup(list(request.get_tokens(0)))

    def lookup(self, tokens: list[int]) -> list[int]:
        # Longest tail first: a 3-token match predicts better than a 1-token one.
        for size in range(min(self.max_matching_ngram_size, len(tokens) - 1), 0, -1):
            tail = tokens[-size:]
            # Scan backwards so the most recent occurrence wins; exclude the tail itself.
            for start in range(len(tokens) - size - 1, -1, -1):
                if tokens[start : start + size] == tail:
                    follow = tokens[start + size : start + size + self.max_draft_len]
                    if follow:
                        return follow
        return []
