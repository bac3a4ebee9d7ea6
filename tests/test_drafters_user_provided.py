"""TensorRT-LLM-shaped drafters (prepare_draft_tokens) behind the CPU engine's propose()."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from specdec_guide.drafters.user_provided import (
    Drafter,
    ScheduledDrafts,
    UserProvidedDrafter,
    build_user_drafter,
    load_drafter_class,
)
from specdec_guide.speculation import DraftRequest

SNIPPET = Path(__file__).resolve().parents[1] / "snippets" / "drafters" / "prompt_lookup_drafter.py"


@pytest.fixture(scope="module")
def PromptLookupDrafter():
    return load_drafter_class(f"{SNIPPET}:PromptLookupDrafter")


def test_snippet_subclasses_the_drafter_base_and_imports_without_tensorrt_llm(PromptLookupDrafter):
    assert issubclass(PromptLookupDrafter, Drafter)
    drafter = PromptLookupDrafter(max_draft_len=3)
    assert drafter.max_concurrency is None and drafter.max_draft_tokens == 3


def test_snippet_prefers_the_longest_tail_then_the_latest_occurrence(PromptLookupDrafter):
    d = PromptLookupDrafter(max_draft_len=3, max_matching_ngram_size=3)
    assert d.lookup([1, 2, 3, 7, 1, 2, 3, 8, 2, 3]) == [8, 2, 3]  # "2 3" last seen before 8
    assert d.lookup([1, 2, 3, 4, 9, 1, 2, 3]) == [4, 9, 1]  # the 3-token tail wins
    assert d.lookup([5, 6]) == [] and d.lookup([5]) == []


def test_adapter_fills_the_request_fields_drafters_read():
    seen = {}

    class Spy(Drafter):
        def prepare_draft_tokens(self, scheduled_requests, resource_manager=None):
            assert not scheduled_requests.context_requests
            for r in scheduled_requests.generation_requests:
                seen.update(tokens=r.get_tokens(0), beams=r.get_tokens(), rid=(r.request_id, r.py_request_id),
                            budget=r.py_orig_prompt_len + r.py_max_new_tokens, end=r.py_end_id)
                r.py_draft_tokens = [9, 9, 9, 9, 9, 9]

    adapter = UserProvidedDrafter(Spy(), max_draft_len=4, end_id=257)
    adapter.start_request(5, prompt_len=2, max_new_tokens=10)
    draft = adapter.propose(DraftRequest(5, [1, 2, 3], prompt_len=2, max_draft_len=4))
    assert draft == [9, 9, 9, 9]  # trimmed to max_draft_len
    assert seen == {"tokens": [1, 2, 3], "beams": [[1, 2, 3]], "rid": (5, 5), "budget": 12, "end": 257}
    adapter.end_request(5)
    assert 5 not in adapter.requests


def test_adapter_refuses_what_cannot_be_a_drafter():
    with pytest.raises(TypeError, match="prepare_draft_tokens"):
        UserProvidedDrafter(object(), max_draft_len=2)

    class Bad(Drafter):
        def prepare_draft_tokens(self, scheduled_requests, resource_manager=None):
            for r in scheduled_requests.generation_requests:
                r.py_draft_tokens = ["a"]

    with pytest.raises(TypeError, match="list of token ids"):
        UserProvidedDrafter(Bad(), 2).propose(DraftRequest(1, [1, 2], 1, 2))


def test_scheduled_drafts_shape():
    s = ScheduledDrafts([object(), object()])
    assert s.batch_size == 2 and len(s.all_requests()) == 2


def test_load_by_module_name_and_by_file(tmp_path, monkeypatch):
    (tmp_path / "my_drafters.py").write_text(
        "from specdec_guide.drafters.user_provided import Drafter\n"
        "class Fixed(Drafter):\n"
        "    def __init__(self, max_draft_len):\n"
        "        super().__init__()\n"
        "        self.n = max_draft_len\n"
        "    def prepare_draft_tokens(self, scheduled_requests, resource_manager=None):\n"
        "        for r in scheduled_requests.generation_requests:\n"
        "            r.py_draft_tokens = [7] * self.n\n"
        "class NoArgs(Fixed):\n"
        "    def __init__(self):\n"
        "        super().__init__(1)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    by_module = build_user_drafter("my_drafters:Fixed", max_draft_len=3)
    assert by_module.propose(DraftRequest(1, [1, 2], 1, 3)) == [7, 7, 7]
    by_file = build_user_drafter("my_drafters.py:NoArgs", max_draft_len=3, base_dir=tmp_path)
    assert by_file.propose(DraftRequest(1, [1, 2], 1, 3)) == [7]
    sys.modules.pop("my_drafters", None)
    with pytest.raises(ValueError, match="has no class"):
        load_drafter_class("my_drafters.py:Missing", base_dir=tmp_path)
    with pytest.raises(ValueError, match="not found"):
        load_drafter_class("nowhere.py:X", base_dir=tmp_path)


def test_bad_cpu_drafter_fails_the_model_load_with_one_line(tiny_models, tmp_path):
    from specdec_guide.engine.config import ConfigError
    from specdec_guide.engine.core import Engine

    target, _ = tiny_models
    path = tmp_path / "model.yaml"
    path.write_text(f"model: {target}\nspeculative_config: {{decoding_type: UserProvided, max_draft_len: 2}}\n"
                    "triton_config: {cpu_drafter: 'no_such_module_xyz:Drafter'}\n")
    with pytest.raises(ConfigError, match=r"cpu_drafter 'no_such_module_xyz:Drafter': ModuleNotFoundError") as info:
        Engine.from_yaml(path)
    assert "\n" not in str(info.value)
