"""The CPU reference engine: tokenizer + target model + drafter, one request at a time.

``Engine.from_yaml(model.yaml)`` loads what the llmapi ``model.yaml`` names;
``engine.generate(request)`` yields one :class:`Chunk` per target step (what a streaming client
receives) and marks the last one ``finished``. Decoding is :mod:`specdec_guide.speculation`'s
loop, so greedy output is token-for-token the target's own greedy output whatever the drafter.

Like TensorRT-LLM, the first (context) step of a request runs without a draft: drafters are
asked only for requests in the generation phase. The acceptance figures therefore count the
same steps TensorRT-LLM's per-request ``acceptance_rate`` counts.

Before a request runs, :meth:`Engine.check` does what the release of the model.yaml's track does
with its values (facts of that track's behaviour record, read by id): the stop entries go through
the tokenizer as ``SamplingParams._setup`` sends them (``llmapi_stop_strings_as_bytes``), a
``max_tokens`` beyond the room after the prompt is clamped with a warning
(``llmapi_max_tokens_clamped``) and ``top_p`` 0 is refused (``llmapi_top_p_zero_refused``).
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import threading
import time
from pathlib import Path
from typing import Iterator

from specdec_guide.attention import load_causal_lm
from specdec_guide.engine.config import ConfigError, EngineConfig, load_config, penalties_applied, release_fact
from specdec_guide.engine.requests import Chunk, GenerateRequest, RequestError, parse_request  # noqa: F401
from specdec_guide.speculation import DraftRequest, SpecStats, hf_logits_fn, speculative_steps

DEFAULT_THREADS = 1  # small: Triton, the client and tests share the machine
#: The facts of what the release does with a request's values before it runs it (Engine.check).
REQUEST_FACTS = ("llmapi_stop_strings_as_bytes", "llmapi_max_tokens_clamped", "llmapi_top_p_zero_refused")


class _GenerationPhaseOnly:
    """No draft for the context step: TensorRT-LLM drafts only for generation requests."""

    def __init__(self, drafter):
        self.drafter = drafter

    def propose(self, request: DraftRequest) -> list[int]:
        if len(request.tokens) <= request.prompt_len:
            return []
        return self.drafter.propose(request)


def _resolve(path: str, base: Path) -> str:
    """A relative model path is looked up next to model.yaml first (Triton's cwd is arbitrary)."""
    p = Path(path)
    if not p.is_absolute() and (base / p).exists():
        return str((base / p).resolve())
    return path


def _local_dir(path: str, what: str, cfg: EngineConfig) -> str:
    if not Path(path).is_dir():
        raise ConfigError(cfg.path, 0, 0, f"{what} '{path}' is not a local directory; the CPU engine loads "
                          "local Hugging Face checkpoints only (no download)")
    return path


class Engine:
    def __init__(self, config: EngineConfig, tokenizer, model, drafter=None):
        self.config = config
        self.tokenizer = tokenizer
        self.model = model
        self.drafter = drafter
        self.max_draft_len = config.speculative.max_draft_len if config.speculative else 0
        limit = getattr(model.config, "max_position_embeddings", None) or 2048
        self.max_seq_len = min(config.max_seq_len or limit, limit)
        self.eos_id = tokenizer.eos_token_id
        self._ids = itertools.count(1)
        self._lock = threading.Lock()  # one request at a time: Triton may call from several threads
        self.logits = hf_logits_fn(model)  # tokens -> logits with a KV cache, the loop's interface
        # The release's default sampler ignores penalties; TRTLLMSampler applies them (the record).
        self.penalties_applied, self.penalties_note = penalties_applied(config)
        # What the release does with a request's values (its record, else the leads: config.RELEASE_FALLBACKS).
        self.release = {fact_id: release_fact(config.track, fact_id)[0] for fact_id in REQUEST_FACTS}

    # -- loading -------------------------------------------------------------------------
    @classmethod
    def from_yaml(cls, path: str | os.PathLike, threads: int | None = None) -> "Engine":
        return cls.from_config(load_config(path), threads=threads)

    @classmethod
    def from_config(cls, config: EngineConfig, threads: int | None = None) -> "Engine":
        import torch
        from transformers import AutoTokenizer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # progress bars would fill the Triton log
        torch.set_num_threads(threads or int(os.environ.get("SPECDEC_ENGINE_THREADS", DEFAULT_THREADS)))
        base = config.base_dir
        model_dir = _local_dir(_resolve(config.model, base), "model", config)
        tok_dir = _local_dir(_resolve(config.tokenizer, base), "tokenizer", config) if config.tokenizer else model_dir
        tokenizer = AutoTokenizer.from_pretrained(tok_dir, local_files_only=True)
        model = load_causal_lm(model_dir)
        return cls(config, tokenizer, model, cls._build_drafter(config, model, tokenizer))

    @staticmethod
    def _build_drafter(config: EngineConfig, model, tokenizer):
        spec = config.speculative
        if spec is None:
            return None
        if spec.decoding_type == "NGram":
            from specdec_guide.drafters.ngram import NGramDrafter

            return NGramDrafter.from_config(spec)
        if spec.decoding_type == "DraftTarget":
            from specdec_guide.drafters.draft_model import DraftModelDrafter

            path = _local_dir(_resolve(spec.draft_model, config.base_dir), "speculative_model_dir", config)
            try:
                return DraftModelDrafter.from_pretrained(path, spec.max_draft_len, model.config.vocab_size)
            except ValueError as err:
                raise ConfigError(config.path, 0, 0, str(err)) from None
        from specdec_guide.drafters.user_provided import build_user_drafter

        try:
            return build_user_drafter(config.triton.cpu_drafter, spec.max_draft_len, config.base_dir,
                                      end_id=tokenizer.eos_token_id)
        except Exception as err:  # import errors, a constructor that fails: one line in the log
            raise ConfigError(config.path, 0, 0, f"triton_config.cpu_drafter '{config.triton.cpu_drafter}': "
                              f"{type(err).__name__}: {err}") from None

    # -- decoding ------------------------------------------------------------------------
    def encode(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=True)["input_ids"])

    def decode(self, tokens: list[int]) -> str:
        return self.tokenizer.decode(tokens, skip_special_tokens=True)

    def check(self, request: GenerateRequest) -> tuple[list[int], GenerateRequest, tuple[str, ...]]:
        """Do what the release does with the request before it runs it: tokenize the prompt and the
        stop entries, check the prompt against the model's length, deduce max_tokens, check top_p.
        Return (the prompt's ids, the request as it runs, the warnings the release logs for it)."""
        prompt = self.encode(request.prompt)
        if not prompt:
            raise RequestError("text_input encodes to no tokens")
        self._setup_stop(request.stop)
        room = self.max_seq_len - len(prompt)
        if room < 1:
            raise RequestError(f"the prompt has {len(prompt)} tokens; the model's limit is {self.max_seq_len}")
        warnings: tuple[str, ...] = ()
        if request.max_tokens > room:
            what = (f"sampling_param_max_tokens={request.max_tokens} is larger than the room after the prompt: "
                    f"the prompt has {len(prompt)} tokens and the model's limit is {self.max_seq_len} (so at most {room})")
            if (self.release["llmapi_max_tokens_clamped"] or {}).get("over_room") != "clamped":
                raise RequestError(what)
            # The release's worker uses the room instead, with a warning (llmapi_max_tokens_clamped).
            warnings += (f"{what}; clamped to {room}, as the release's executor does with a warning "
                         "(llmapi_max_tokens_clamped)",)
            request = dataclasses.replace(request, max_tokens=room)
        if request.sampling.top_p == 0.0:
            if (self.release["llmapi_top_p_zero_refused"] or {}).get("top_p_zero") == "request_error":
                raise RequestError("sampling_param_top_p must be > 0 and <= 1, got 0.0: TensorRT-LLM's sampling "
                                   "config refuses 0 (for greedy decoding leave top_p out, or send "
                                   "sampling_param_top_k 1)")
            request = dataclasses.replace(request, sampling=dataclasses.replace(
                request.sampling, temperature=0.0, top_p=1.0))  # a record that says 0 is greedy
        return prompt, request, warnings

    def _setup_stop(self, stops) -> None:
        """The stop entries through the tokenizer as SamplingParams._setup sends them: encode, retried
        once without add_special_tokens on a TypeError. The llmapi model hands over the bytes of
        Triton's STRING tensor (llmapi_stop_strings_as_bytes), which a Hugging Face tokenizer refuses:
        its exception fails the request, in the release's shape."""
        for stop in stops:
            try:
                self.tokenizer.encode(stop, add_special_tokens=False)
            except TypeError:
                self.tokenizer.encode(stop)

    def generate(self, request: GenerateRequest | dict) -> Iterator[Chunk]:
        """Yield a :class:`Chunk` per target step; the last has ``finished=True``.

        Raises :class:`RequestError` before the first chunk when the request is invalid.
        """
        if isinstance(request, dict):
            request = parse_request(request)
        prompt, request, warnings = self.check(request)
        return self._run(request, prompt, warnings)

    def complete(self, request: GenerateRequest | dict) -> Chunk:
        """Run a request to the end; return the final chunk."""
        chunk = None
        for chunk in self.generate(request):
            pass
        return chunk

    def sampling_for(self, request: GenerateRequest):
        """The request's sampling, less the penalties where the release's sampler ignores them."""
        if self.penalties_applied or not request.sampling.penalized:
            return request.sampling
        return dataclasses.replace(request.sampling, frequency_penalty=0.0, presence_penalty=0.0)

    def _run(self, request: GenerateRequest, prompt: list[int], warnings: tuple[str, ...] = ()) -> Iterator[Chunk]:
        with self._lock:
            request_id = next(self._ids)
            self.logits.reset()  # requests are independent: each pays for its own prompt
            drafter = self.drafter
            if drafter is not None:
                if hasattr(drafter, "start_request"):
                    drafter.start_request(request_id, len(prompt), request.max_tokens)
                drafter = _GenerationPhaseOnly(drafter)
            arrival = time.monotonic_ns()
            first_token = 0
            stats = SpecStats()
            out: list[int] = []
            echo = "" if request.exclude_input_from_output else request.prompt
            stops = tuple(s for s in request.stop if isinstance(s, str) and s)  # the ones the tokenizer took
            try:
                steps = speculative_steps(
                    self.logits, prompt, request.max_tokens, drafter=drafter, max_draft_len=self.max_draft_len,
                    sampling=self.sampling_for(request), eos_id=self.eos_id, request_id=request_id,
                )
                finish, stop_reason, text = None, None, ""
                for step in steps:
                    stats.add(step)
                    out.extend(step.tokens)
                    now = time.monotonic_ns()
                    first_token = first_token or now
                    text = self.decode(out)
                    hit = _first_stop(text, stops)
                    if hit is not None:
                        text, stop_reason, finish = text[: hit[0]], hit[1], "stop"
                    elif self.eos_id is not None and out[-1] == self.eos_id:
                        finish = "stop"
                    elif len(out) >= request.max_tokens:
                        finish = "length"
                    chunk = Chunk(echo + text, list(out), finish is not None, finish, stop_reason, stats,
                                  arrival, first_token, now, prompt_tokens=len(prompt), warnings=warnings)
                    yield chunk
                    if finish is not None:
                        return
                # The loop ended without a reason (cannot happen today): still end the stream.
                yield Chunk(echo + text, list(out), True, "length", None, stats, arrival, first_token,
                            time.monotonic_ns(), prompt_tokens=len(prompt), warnings=warnings)
            finally:
                if self.drafter is not None and hasattr(self.drafter, "end_request"):
                    self.drafter.end_request(request_id)


def _first_stop(text: str, stops: tuple[str, ...]) -> tuple[int, str] | None:
    """(index, stop string) of the earliest stop string in ``text``; the output ends before it."""
    best = None
    for stop in stops:
        i = text.find(stop)
        if i >= 0 and (best is None or i < best[0]):
            best = (i, stop)
    return best
