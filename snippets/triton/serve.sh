# Start tritonserver on the rendered repository: HTTP :8000, gRPC :8001, metrics :8002 on 127.0.0.1.
# It waits until the model is ready, prints the URLs, and Ctrl-C stops it and cleans up.
specdec-guide triton up --repo repo_ngram
