# Start tritonserver on the rendered repository on 127.0.0.1: HTTP 8000, gRPC 8001, metrics 8002
# (TRITON_HTTP_PORT, TRITON_GRPC_PORT, TRITON_METRICS_PORT move them). It waits until the models
# are ready and prints the URLs; Ctrl-C stops it and cleans up.
specdec-guide triton up --repo repo_ngram
