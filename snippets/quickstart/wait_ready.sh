# Wait until the model is loaded (HTTP 200 from the ready endpoint). Loading an 8B model takes minutes,
# the first start longer (it downloads the weights). Stops after 180 tries 10 s apart (30 minutes), or
# as soon as no tritonserver process is left: a model that fails to load makes tritonserver exit. The
# reason is in the server's log, which the launcher prints into this terminal, above this command.
# pgrep is there: the launcher itself uses it to find a running tritonserver.
for try in $(seq 180); do
  if curl -sf "http://localhost:${TRITON_HTTP_PORT:-8000}/v2/models/tensorrt_llm/ready"; then
    echo "tensorrt_llm is ready"; break
  fi
  if ! pgrep tritonserver > /dev/null; then
    echo "tritonserver is not running: it stopped while loading; its log is above in this terminal" >&2; break
  fi
  if [ "$try" = 180 ]; then
    echo "tensorrt_llm is not ready after 30 minutes; read the log above in this terminal" >&2; break
  fi
  sleep 10
done
