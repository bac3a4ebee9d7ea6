"""One request with tritonclient over HTTP (Triton's /infer endpoint).

Triton answers /infer only for models that are NOT decoupled (render with --decoupled false);
a decoupled model gets "501 HTTP end point doesn't support models with decoupled transaction policy".
"""

import os

import numpy as np
import tritonclient.http as httpclient

URL = "localhost:" + os.environ.get("TRITON_HTTP_PORT", "8000")
MODEL = os.environ.get("TRITON_MODEL", "tensorrt_llm")
# The chat template of SmolLM2 (the llmapi model passes text_input as it is).
PROMPT = "<|im_start|>user\nWhat is the capital of France?<|im_end|>\n<|im_start|>assistant\n"


def scalar(name, value, triton_type, np_type):
    tensor = httpclient.InferInput(name, [1], triton_type)
    tensor.set_data_from_numpy(np.array([value], dtype=np_type))
    return tensor


client = httpclient.InferenceServerClient(URL)
result = client.infer(MODEL, [
    scalar("text_input", PROMPT.encode(), "BYTES", np.object_),
    scalar("sampling_param_max_tokens", 32, "INT32", np.int32),
    scalar("sampling_param_exclude_input_from_output", True, "BOOL", np.bool_),
    scalar("sampling_param_return_perf_metrics", True, "BOOL", np.bool_),
])
print("text_output:", result.as_numpy("text_output")[0].decode())
for name in ("total_draft_tokens", "total_accepted_draft_tokens", "acceptance_rate"):
    value = result.as_numpy(name)
    if value is not None:  # the llmapi model sends the counters as strings (bytes here)
        print(f"{name}:", value.reshape(-1)[0].decode())
