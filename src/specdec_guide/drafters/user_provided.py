"""Run a TensorRT-LLM-shaped drafter on the CPU engine, unchanged.

TensorRT-LLM's PyTorch backend calls a user drafter (``UserProvidedDecodingConfig(drafter=...)``)
once per iteration as ``drafter.prepare_draft_tokens(scheduled_requests, resource_manager)``;
the drafter sets ``request.py_draft_tokens`` on each request in
``scheduled_requests.generation_requests``. This module builds the smallest objects with the
same names (:class:`DraftingRequest`, :class:`ScheduledDrafts`) and wraps such a drafter as our
``Drafter.propose`` protocol, so one drafter class runs here and inside TensorRT-LLM.

Names mirror TensorRT-LLM 1.1.0 (``_torch/speculative/drafter.py`` and the LlmRequest fields its
own drafters read): see ``interfaces.Drafter`` in ``schemas/1.1.0/llm_api.yaml``. When
``tensorrt_llm`` is importable, :data:`Drafter` is its real base class.
"""

from __future__ import annotations

import abc
import importlib
import importlib.util
import inspect
import sys
from pathlib import Path
from typing import Any, Optional

from specdec_guide.speculation_types import DraftRequest

try:  # On a GPU machine, subclass the real thing so the same drafter plugs into LLM().
    from tensorrt_llm._torch.speculative.drafter import Drafter  # type: ignore
except Exception:  # ImportError, or a broken CUDA install: the stand-in keeps the CPU path working

    class Drafter(abc.ABC):  # type: ignore[no-redef]
        """Stand-in with TensorRT-LLM 1.1.0's Drafter constructor and abstract method."""

        def __init__(self, max_concurrency: Optional[int] = None) -> None:
            self.max_concurrency = max_concurrency  # speculation turns off above this many requests

        @abc.abstractmethod
        def prepare_draft_tokens(self, scheduled_requests, resource_manager=None) -> None:
            """Set ``request.py_draft_tokens`` for each of ``scheduled_requests.generation_requests``."""

        def should_use_spec_decode(self, requests, *args, **kwargs) -> bool:
            return self.max_concurrency is None or len(requests) <= self.max_concurrency


class DraftingRequest:
    """The LlmRequest attributes drafters read, for one request on the CPU engine."""

    def __init__(self, request_id: int, prompt_len: int, max_new_tokens: int, end_id: int | None = None):
        self.request_id = request_id
        self.py_request_id = request_id
        self.py_orig_prompt_len = prompt_len
        self.py_max_new_tokens = max_new_tokens
        self.py_end_id = end_id
        self.py_batch_idx = 0  # one request per batch on the CPU engine
        self.max_beam_width = 1
        self.py_draft_tokens: list[int] = []
        self.state = "GENERATION_IN_PROGRESS"
        self.tokens: list[int] = []
        self.max_draft_len = 0  # this step's limit (ours; TensorRT-LLM drafters use their own)

    def get_tokens(self, beam: int | None = None):
        """``get_tokens(0)``: beam 0's tokens (prompt + generated); ``get_tokens()``: one list per beam."""
        if beam is None:
            return [list(self.tokens)]
        if beam != 0:
            raise IndexError(f"beam {beam}: the CPU engine runs one beam")
        return list(self.tokens)

    @property
    def is_context_init_state(self) -> bool:
        return False

    @property
    def is_generation_in_progress_state(self) -> bool:
        return True


class ScheduledDrafts:
    """The part of TensorRT-LLM's ScheduledRequests a drafter sees."""

    def __init__(self, generation_requests: list[DraftingRequest], context_requests: list | None = None):
        self.generation_requests = generation_requests
        self.context_requests = context_requests or []

    @property
    def batch_size(self) -> int:
        return len(self.context_requests) + len(self.generation_requests)

    def all_requests(self) -> list:
        return [*self.context_requests, *self.generation_requests]


class UserProvidedDrafter:
    """Adapter: a ``prepare_draft_tokens`` drafter behind ``propose(DraftRequest)``."""

    def __init__(self, drafter: Any, max_draft_len: int, resource_manager: Any = None, end_id: int | None = None):
        if not callable(getattr(drafter, "prepare_draft_tokens", None)):
            raise TypeError(f"{type(drafter).__name__} has no prepare_draft_tokens(scheduled_requests, "
                            "resource_manager=None) method")
        self.drafter = drafter
        self.max_draft_len = max_draft_len
        self.resource_manager = resource_manager
        self.end_id = end_id
        self.requests: dict[int, DraftingRequest] = {}

    def start_request(self, request_id: int, prompt_len: int, max_new_tokens: int) -> None:
        self.requests[request_id] = DraftingRequest(request_id, prompt_len, max_new_tokens, self.end_id)

    def end_request(self, request_id: int) -> None:
        request = self.requests.pop(request_id, None)
        if request is not None:
            request.state = "GENERATION_COMPLETE"

    def propose(self, request: DraftRequest) -> list[int]:
        llm_request = self.requests.get(request.request_id)
        if llm_request is None:  # used without start_request: a budget-free request
            llm_request = DraftingRequest(request.request_id, request.prompt_len, request.max_draft_len + 1,
                                          self.end_id)
            self.requests[request.request_id] = llm_request
        llm_request.tokens = list(request.tokens)
        llm_request.max_draft_len = request.max_draft_len
        llm_request.py_draft_tokens = []
        self.drafter.prepare_draft_tokens(ScheduledDrafts([llm_request]), self.resource_manager)
        draft = llm_request.py_draft_tokens
        if draft is None:
            return []
        try:
            draft = [int(t) for t in draft]
        except (TypeError, ValueError):
            raise TypeError(f"{type(self.drafter).__name__} set py_draft_tokens to {draft!r}: "
                            "expected a list of token ids") from None
        # More than max_draft_len cannot be verified in one step (TensorRT-LLM sizes buffers by it).
        return draft[: request.max_draft_len]


def load_drafter_class(spec: str, base_dir: str | Path | None = None) -> type:
    """Import ``module:Class`` or ``path/to/file.py:Class`` (relative paths from ``base_dir``)."""
    target, _, name = spec.rpartition(":")
    if not target or not name:
        raise ValueError(f"expected module:Class or file.py:Class, got {spec!r}")
    if target.endswith(".py"):
        path = Path(target)
        if not path.is_absolute() and base_dir is not None:
            path = Path(base_dir) / path
        if not path.is_file():
            raise ValueError(f"drafter file {path} not found")
        mod_name = f"_specdec_drafter_{path.stem}"
        module_spec = importlib.util.spec_from_file_location(mod_name, path)
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[mod_name] = module  # dataclasses and pickling look classes up here
        module_spec.loader.exec_module(module)
    else:
        module = importlib.import_module(target)
    cls = getattr(module, name, None)
    if not inspect.isclass(cls):
        raise ValueError(f"{spec}: {target} has no class {name}")
    return cls


def build_user_drafter(spec: str, max_draft_len: int, base_dir: str | Path | None = None,
                       end_id: int | None = None) -> UserProvidedDrafter:
    """Instantiate the drafter class, passing ``max_draft_len`` when its constructor takes it."""
    cls = load_drafter_class(spec, base_dir)
    params = inspect.signature(cls).parameters
    takes_len = "max_draft_len" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())
    drafter = cls(max_draft_len=max_draft_len) if takes_len else cls()
    return UserProvidedDrafter(drafter, max_draft_len, end_id=end_id)
