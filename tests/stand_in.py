"""The CPU stand-in of TensorRT-LLM's llmapi model on a real tritonserver, shared by test modules.

Reuse before you start a server: a tritonserver costs seconds to start and stop, its engine host
imports torch and transformers (about 4 CPU seconds, measured on 2 cores), and each model in it is
a Python stub process plus an engine process forked from the host, which loads its checkpoint.

- ``stand_in_server`` (session fixture in tests/conftest.py): ONE server for the whole session on
  the tiny models, with the models in :data:`MODELS`: the guide's templates as rendered, and the
  per-track models of tests/test_stand_in_fidelity.py (:func:`fidelity_name`). It is launched at
  the session's first test and loads its models while other tests run; the first test that asks
  for it waits until it is ready. Request it instead of starting your own, and add a model to
  :data:`MODELS` rather than starting a second server. Mind that NGram's pool is shared across
  requests (``is_public_pool``), so its draft counters depend on what other tests sent before:
  assert counters on ``draft_target``, whose drafts depend on the prompt alone.
  Its teardown checks that the server left no process and no shared-memory file behind.
- :func:`render_models`: the same renders into a repository of your own (other settings, a broken
  model), for a server a test must start itself (a load failure, say).
"""

from __future__ import annotations

import re
from pathlib import Path

from registry import default_track

DEFAULT_TRACK = default_track()

DRAFTER = Path(__file__).resolve().parents[1] / "snippets" / "drafters" / "prompt_lookup_drafter.py"
#: The synchronous copy's name, as the guide's pages call it (snippets/triton/render_sync.sh).
SYNC = "tensorrt_llm_sync"
#: triton_config.cpu_behaviour of a model that shows what a release after the pinned ones sends.
LATER_RELEASE = ("stream_per_step", "filled_draft_counters")
LATER_DRAFT_TARGET = "draft_target_later_release"
#: A baseline whose config.pbtxt has no model_transaction_policy, as upstream's llmapi folder ships
#: it: with the launcher's --disable-auto-complete-config, Triton runs it non-decoupled.
NO_POLICY = "no_policy"
#: The policy block that `repo render` writes into config.pbtxt (removed for NO_POLICY).
POLICY = "model_transaction_policy {\n  decoupled: true\n}\n"
#: From its launch: its 15 models load while other tests share the 2 cores
#: (measured in the session: 11-19 s with the engine host; 141 s when each stub imported torch and
#: transformers itself). Generous: a stalled load is launched again (TritonServer.wait_ready).
STAND_IN_READY_S = 480
#: One engine thread per model: tests share two cores (measured: 32x10 requests took 59 s with 2
#: threads per model, 3 s with 1).
ENGINE_ENV = {"SPECDEC_ENGINE_THREADS": "1"}

#: The fidelity test's models, one of each kind per track: kind -> (template, extra render options).
FIDELITY_KINDS = {
    "ngram": ("ngram", {}),  # sampler_type auto (TorchSampler), decoupled
    "dt": ("draft_target", {"draft_model": "DRAFT"}),  # the track's spelling of the draft key
    "sync": ("baseline", {"decoupled": False}),
    "trtllmsampler": ("ngram", {"sampler_type": "TRTLLMSampler"}),
    "mismatch": ("ngram", {"pbtxt_decoupled": False}),  # model.yaml decoupled, config.pbtxt not
}
#: On the default track, these kinds are rendered exactly as session models are: served once.
SAME_AS_SESSION = {"dt": "draft_target", "sync": SYNC, "trtllmsampler": "ngram"}


def fidelity_name(track: str, kind: str) -> str:
    """The model serving ``kind`` (FIDELITY_KINDS) for ``track`` on the session server."""
    if track == DEFAULT_TRACK and kind in SAME_AS_SESSION:
        return SAME_AS_SESSION[kind]
    return f"{kind}_{track.replace('.', '')}"


def _fidelity_models(tracks) -> dict:
    models = {}
    for track in tracks:
        for kind, (template, extra) in FIDELITY_KINDS.items():
            if fidelity_name(track, kind) not in SAME_AS_SESSION.values():
                models[fidelity_name(track, kind)] = (template, {**extra, "trtllm": track})
    # A model with max_batch_size > 0: the release refuses its [1, n] text_input. (The teaching
    # departures are tested on LATER_DRAFT_TARGET.)
    models["batched"] = ("baseline", {"max_batch_size": 4, "decoupled": False})
    return models


def _tracks() -> list[str]:
    from registry import tracks

    return tracks()


#: name -> (template, extra render options); ``model`` is the tiny target, ``DRAFT`` the tiny draft.
#: Options besides templates.render's own: ``shows`` (triton_config.cpu_behaviour), ``sampler_type``,
#: ``policy: False`` (no model_transaction_policy in config.pbtxt), ``pbtxt_decoupled`` (the policy
#: config.pbtxt gives, whatever model.yaml says); ``trtllm`` is render's own (the track it renders for).
MODELS = {
    "tensorrt_llm": ("baseline", {}),  # decoupled, under the name the snippets and notebooks use
    SYNC: ("baseline", {"decoupled": False}),  # decoupled: false (/infer, unary gRPC)
    # sampler_type TRTLLMSampler: the sampler whose per-request draft counters the pinned releases
    # fill (per_request_draft_counters_filled); the other models keep auto and read zeros.
    "ngram": ("ngram", {"sampler_type": "TRTLLMSampler"}),
    "draft_target": ("draft_target", {"draft_model": "DRAFT"}),
    "user_provided": ("user_provided", {"drafter": f"{DRAFTER}:PromptLookupDrafter"}),
    # Labelled departures from the pinned release: one event per step and filled draft counters, as a
    # release after TensorRT-LLM PR #14079 / #17082 sends them (the AIPerf plugin's tests need both).
    LATER_DRAFT_TARGET: ("draft_target", {"draft_model": "DRAFT", "shows": LATER_RELEASE}),
    # The launcher tests (test_triton_llmapi.py, test_troubleshooting.py) share it instead of
    # starting servers of their own.
    NO_POLICY: ("baseline", {"policy": False}),
    **_fidelity_models(_tracks()),
}


def edit(path: Path, old: str, new: str) -> None:
    """Replace the one occurrence of ``old`` in ``path`` (fails loudly when the template changed)."""
    text = path.read_text()
    assert text.count(old) == 1, f"{path}: {old!r} occurs {text.count(old)} times"
    path.write_text(text.replace(old, new))


def set_policy(model_dir: Path, decoupled: bool) -> None:
    """config.pbtxt's model_transaction_policy says ``decoupled`` (model.yaml is left as it is)."""
    path = model_dir / "config.pbtxt"
    text, n = re.subn(r"(?m)^(\s+decoupled:)\s*\w+", r"\g<1> " + str(decoupled).lower(), path.read_text())
    assert n == 1, path
    path.write_text(text)


def render_models(repo: Path, models: dict, target, draft) -> Path:
    """Render ``models`` (the form of :data:`MODELS`) into ``repo`` on the given tiny models."""
    from specdec_guide import templates

    for name, (method, extra) in models.items():
        kwargs = {k: str(draft) if v == "DRAFT" else v for k, v in extra.items()}
        shows = kwargs.pop("shows", ())
        sampler = kwargs.pop("sampler_type", None)
        policy = kwargs.pop("policy", True)
        pbtxt_decoupled = kwargs.pop("pbtxt_decoupled", None)
        model = templates.render(method, model=str(target), out=repo, force=True,
                                 **({} if name == "tensorrt_llm" else {"name": name}), **kwargs)
        yaml_path = model / "1" / "model.yaml"
        if not policy:
            edit(model / "config.pbtxt", POLICY, "")
        if pbtxt_decoupled is not None:
            set_policy(model, pbtxt_decoupled)
        if sampler:
            edit(yaml_path, "backend: pytorch\n", f"backend: pytorch\nsampler_type: {sampler}\n")
        if shows:
            edit(yaml_path, "\ntriton_config:\n", f"\ntriton_config:\n  cpu_behaviour: [{', '.join(shows)}]\n")
    return repo


def launch(repo: Path, timeout: float):
    """The session server, launched and not waited for (``wait_ready()`` waits)."""
    from specdec_guide.triton import TritonServer

    return TritonServer(repo, timeout=timeout, env=ENGINE_ENV).start(wait=False)
