"""tritonclient's HTTP infer() against a decoupled model (the templates' default)."""

import os

import numpy as np
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException

client = httpclient.InferenceServerClient(os.environ.get("TRITON_HTTP", "localhost:8000"))
prompt = httpclient.InferInput("text_input", [1], "BYTES")
prompt.set_data_from_numpy(np.array([b"abc abc abc"], dtype=np.object_))
try:
    client.infer(os.environ.get("TRITON_MODEL", "tensorrt_llm"), [prompt])
except InferenceServerException as err:
    print(f"InferenceServerException: {err}")
