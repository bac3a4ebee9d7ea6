# Serve the user-provided repository (HTTP :8000, gRPC :8001, metrics :8002 unless TRITON_*_PORT say otherwise).
specdec-guide triton up --repo repo_user_provided
