"""Stream one generation over gRPC with tritonclient. Needs a decoupled model (the templates are).

Each response is printed as one JSON line. On TensorRT-LLM 1.1.0 and 1.2.1 the llmapi model sends
one response with the whole text (per-step streaming came after 1.2.1, TensorRT-LLM PR #14079; its
responses each hold the whole text so far, not only the new piece). Because the request sets
sampling_param_return_perf_metrics, every response carries the speculative-decoding counters, as
strings, as the llmapi model sends them.
"""

import json
import os
import queue

import numpy as np
import tritonclient.grpc as grpcclient

URL = "localhost:" + os.environ.get("TRITON_GRPC_PORT", "8001")
MODEL = os.environ.get("TRITON_MODEL", "tensorrt_llm")
# The chat template of SmolLM2 (the llmapi model passes text_input as it is).
PROMPT = "<|im_start|>user\nWhat is the capital of France?<|im_end|>\n<|im_start|>assistant\n"


def scalar(name, value, triton_type, np_type):
    tensor = grpcclient.InferInput(name, [1], triton_type)
    tensor.set_data_from_numpy(np.array([value], dtype=np_type))
    return tensor


inputs = [
    scalar("text_input", PROMPT.encode(), "BYTES", np.object_),
    scalar("streaming", True, "BOOL", np.bool_),
    scalar("sampling_param_max_tokens", 32, "INT32", np.int32),
    scalar("sampling_param_exclude_input_from_output", True, "BOOL", np.bool_),
    scalar("sampling_param_return_perf_metrics", True, "BOOL", np.bool_),
]
METRICS = ("total_draft_tokens", "total_accepted_draft_tokens", "acceptance_rate")

responses = queue.Queue()
client = grpcclient.InferenceServerClient(URL)
client.start_stream(callback=lambda result, error: responses.put((result, error)))
try:
    # enable_empty_final_response: the server marks the end of the stream explicitly.
    client.async_stream_infer(MODEL, inputs, enable_empty_final_response=True)
    while True:
        result, error = responses.get(timeout=120)
        if error is not None:
            raise SystemExit(f"request failed: {error}")
        row = {}
        for name in ("text_output",) + METRICS:
            value = result.as_numpy(name)
            if value is not None:  # every output of the llmapi model arrives as bytes
                row[name] = value.reshape(-1)[0].decode()
        if row:
            print(json.dumps(row))
        if result.get_response().parameters["triton_final_response"].bool_param:
            break
finally:
    client.stop_stream()
    client.close()
