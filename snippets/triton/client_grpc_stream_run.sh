# Run the gRPC streaming client (the file above, from your clone).
python3 ../snippets/triton/client_grpc_stream.py
