"""The CPU stand-in of TensorRT-LLM's llmapi model on a real tritonserver, shared by test modules.

Reuse before you start a server: a tritonserver costs seconds to start and stop, and each model in
it is a Python stub process that imports torch and transformers (about 6 CPU seconds on 2 cores).

- ``stand_in_server`` (session fixture in tests/conftest.py): ONE server for the whole session on
  the tiny models, with the models in :data:`MODELS`. Request it instead of starting your own
  when the guide's templates as rendered are what you need. Mind that NGram's pool is shared
  across requests (``is_public_pool``), so its draft counters depend on what other tests sent
  before: assert counters on ``draft_target``, whose drafts depend on the prompt alone.
  Its teardown checks that the server left no process and no shared-memory file behind.
- :func:`serve_templates`: for a module that needs a repository of its own (other settings, a
  broken model); ``yield from serve_templates(repo, renders)`` in a module fixture.
"""

from __future__ import annotations

from pathlib import Path

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
#: name -> (template, extra render arguments); ``model`` is the tiny target, ``DRAFT`` the tiny draft.
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
}


def stand_in_renders(target, draft) -> list[tuple[str, dict]]:
    """:data:`MODELS` as :func:`serve_templates` renders, on the given tiny models."""
    renders = []
    for name, (method, extra) in MODELS.items():
        kwargs = {"model": str(target), **{k: str(draft) if v == "DRAFT" else v for k, v in extra.items()}}
        if name != "tensorrt_llm":
            kwargs["name"] = name
        renders.append((method, kwargs))
    return renders


def serve_templates(repo, renders, timeout: float = 180, shows=()):
    """Render templates into ``repo`` and serve them on a real tritonserver; yields the server.

    For module fixtures (``yield from serve_templates(...)``): ``renders`` is a list of
    (method, render keyword arguments). One engine thread each: tests share two cores (measured:
    32x10 requests took 59 s with 2 threads per model, 3 s with 1). The server is stopped when the
    fixture ends; it must leave no process and no shared-memory file behind.
    ``shows``: departures from the pinned release (triton_config.cpu_behaviour, e.g.
    ``("stream_per_step", "filled_draft_counters")``) for tests of what a later release sends.
    A render's ``policy: False`` removes model_transaction_policy from its config.pbtxt.
    """
    from specdec_guide import templates
    from specdec_guide.triton import serve

    for method, kwargs in renders:
        kwargs = dict(kwargs)
        shows_here = kwargs.pop("shows", shows)
        sampler = kwargs.pop("sampler_type", None)
        policy = kwargs.pop("policy", True)
        model = templates.render(method, out=repo, force=True, **kwargs)
        if not policy:
            path = model / "config.pbtxt"
            text = path.read_text()
            assert text.count(POLICY) == 1, path
            path.write_text(text.replace(POLICY, ""))
        if sampler:
            path = model / "1" / "model.yaml"
            text = path.read_text()
            assert text.count("backend: pytorch\n") == 1, path
            path.write_text(text.replace("backend: pytorch\n", f"backend: pytorch\nsampler_type: {sampler}\n"))
        if shows_here:
            path = model / "1" / "model.yaml"
            text = path.read_text()
            assert text.count("\ntriton_config:\n") == 1, path
            path.write_text(text.replace("\ntriton_config:\n", f"\ntriton_config:\n  cpu_behaviour: [{', '.join(shows_here)}]\n"))
    with serve(repo, timeout=timeout, env={"SPECDEC_ENGINE_THREADS": "1"}) as server:
        pid = server.proc.pid
        yield server
    assert not server.shm_files()
    assert not Path(f"/proc/{pid}").exists()  # the server (and its process group) is gone
