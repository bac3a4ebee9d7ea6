"""Python snippets and notebooks: TensorRT-LLM imports, config keywords, Drafter subclasses."""

from pathlib import Path

from specdec_guide.validate import python_ast
from specdec_guide.validate.runner import validate_paths
from specdec_guide.releases.tracks import Registry

FIX = Path(__file__).parent / "fixtures" / "validate"
REG = Registry(FIX / "schemas")


def problems(rel: str, trtllm: str | None = None) -> list[str]:
    report = validate_paths([FIX / rel], trtllm=trtllm, root=FIX, registry=REG, is_verified=lambda p: True)
    return [str(d) for d in report.diagnostics]


def check(src: str, track: str = "1.1.0", notebook: bool = False) -> list:
    return python_ast.check(src, REG.resolve(track), REG, notebook=notebook)[0]


def test_unknown_import_with_cross_track_hint():
    assert problems("bad/unknown_import.py") == [
        "bad/unknown_import.py:2:33: 'Eagle3DecodingConfig' cannot be imported from tensorrt_llm.llmapi in "
        "TRT-LLM 1.1.0; it exists in 1.2.0"]
    assert problems("bad/unknown_import.py", trtllm="latest") == []


def test_unknown_kwargs_to_config_class_and_llm():
    found = problems("bad/unknown_kwarg.py")
    assert len(found) == 2, found
    assert found[0].startswith("bad/unknown_kwarg.py:4:45: unknown keyword 'prompt_lookup_num_tokens' for "
                               "NGramDecodingConfig()")
    assert found[1].startswith("bad/unknown_kwarg.py:5:58: unknown keyword 'use_cuda_graph' for LLM(): TorchLlmArgs")


def test_drafter_subclass_signature():
    assert problems("bad/bad_drafter.py") == [
        "bad/bad_drafter.py:5:5: LookupDrafter.prepare_draft_tokens: parameter 1 is 'requests', expected "
        "'scheduled_requests'; TRT-LLM 1.1.0 calls prepare_draft_tokens(self, scheduled_requests, "
        "resource_manager=None)",
        "bad/bad_drafter.py:9:1: class EmptyDrafter subclasses Drafter but does not define "
        "prepare_draft_tokens(self, scheduled_requests, resource_manager=None), which TRT-LLM 1.1.0 calls",
    ]


def test_drafter_needs_default_for_optional_param():
    src = ("from tensorrt_llm._torch.speculative.drafter import Drafter as D\n"
           "class X(D):\n    def prepare_draft_tokens(self, scheduled_requests, resource_manager):\n        pass\n")
    assert check(src) == [(3, 5, "X.prepare_draft_tokens: parameter 'resource_manager' needs a default (it may be "
                                 "omitted by the caller); TRT-LLM 1.1.0 calls prepare_draft_tokens(self, "
                                 "scheduled_requests, resource_manager=None)")]


def test_clean_snippets_pass():
    assert problems("clean/snippets/python/ngram_llm.py") == []
    assert problems("clean/snippets/python/custom_drafter.py") == []
    assert problems("clean/notebooks/02_gpu_eagle3.py") == []


def test_literal_values_and_module_attributes():
    src = ("import tensorrt_llm as trtllm\nimport tensorrt_llm.llmapi\n"
           "a = tensorrt_llm.llmapi.NGramDecodingConfig(max_draft_len=0)\n"
           "b = trtllm.Nope()\nc = trtllm.LLM(model='m', kv_cache_config={'enable_block_reuse': 'x'})\n")
    assert check(src) == [
        (3, 59, "'max_draft_len' must be > 0 (got 0)"),
        (4, 5, "'tensorrt_llm.Nope' is not in TRT-LLM 1.1.0"),
        (5, 66, "'kv_cache_config.enable_block_reuse' must be bool, got 'x'"),
    ]


def test_unknown_module_and_private_module():
    assert check("import tensorrt_llm.bench\n") == [(1, 8, "module 'tensorrt_llm.bench' is not in TRT-LLM 1.1.0")]
    assert check("from tensorrt_llm._torch.pyexecutor import X\n") == [
        (1, 1, "module 'tensorrt_llm._torch.pyexecutor' is not in the TRT-LLM 1.1.0 snapshot")]


def test_a_name_spelt_with_compatibility_characters_is_the_package_it_normalises_to():
    # Python reads identifiers NFKC-normalised: fullwidth letters import tensorrt_llm itself, so a
    # file is checked although its text never spells the name in ASCII.
    fullwidth = "\uff54\uff45\uff4e\uff53\uff4f\uff52\uff52\uff54_\uff4c\uff4c\uff4d"
    assert check(f"import {fullwidth}.bench\n") == [(1, 8, "module 'tensorrt_llm.bench' is not in TRT-LLM 1.1.0")]
    call = "from {}.llmapi import NGramDecodingConfig\nNGramDecodingConfig()\n"
    assert check(call.format(fullwidth)) == check(call.format("tensorrt_llm")) != []


def test_python_objects_fine_in_python_and_missing_required_keyword():
    assert check("from tensorrt_llm.llmapi import UserProvidedDecodingConfig as U\nU(max_draft_len=2, drafter=d)\n") == []
    assert check("from tensorrt_llm.llmapi import NGramDecodingConfig\nNGramDecodingConfig()\n") == [
        (2, 1, "missing required key 'max_draft_len' (NGramDecodingConfig)")]
    assert check("from tensorrt_llm.llmapi import NGramDecodingConfig\nNGramDecodingConfig(**kw)\n") == []


def test_other_code_is_ignored_and_magics_stripped_in_notebooks():
    assert check("import numpy as np\nnp.zeros(3, bogus=1)\n") == []
    assert check("%time x = 1\n!ls\nx = 2\n", notebook=True) == []
    assert check("def f(:\n")[0][2].startswith("Python syntax error")
