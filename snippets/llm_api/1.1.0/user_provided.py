# specdec-guide: trtllm=1.1.0
"""Run Llama-3.1-8B-Instruct with a user-provided drafter on TensorRT-LLM 1.1.0 (GPU).

The drafter is a Python object, so this configuration exists only in the Python LLM API:
no YAML file (model.yaml, --extra_llm_api_options) can express it.
"""

from prompt_lookup_drafter import PromptLookupDrafter
from tensorrt_llm import LLM, SamplingParams
from tensorrt_llm.llmapi import UserProvidedDecodingConfig

MAX_DRAFT_LEN = 4

llm = LLM(
    model="meta-llama/Llama-3.1-8B-Instruct",
    speculative_config=UserProvidedDecodingConfig(
        drafter=PromptLookupDrafter(max_draft_len=MAX_DRAFT_LEN),
        max_draft_len=MAX_DRAFT_LEN,
    ),
    disable_overlap_scheduler=True,
)
params = SamplingParams(max_tokens=64, temperature=0.0, return_perf_metrics=True)
prompt = "Rename the variable `count` to `total` in: count = 0\nfor x in xs:\n    count += x\n"
for output in llm.generate([prompt], params):
    print(output.outputs[0].text)
