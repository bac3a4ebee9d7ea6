# Run the HTTP client against the non-decoupled copy rendered in section 2.
TRITON_MODEL=tensorrt_llm_sync python3 ../snippets/triton/client_http.py
