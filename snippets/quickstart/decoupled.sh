# The launcher starts tritonserver with --disable-auto-complete-config, so Triton reads only
# config.pbtxt: the shipped one has no model_transaction_policy, and without one the model is not
# decoupled whatever model.yaml says. Add it once (the grep keeps a second run from adding it twice).
grep -q '^ *model_transaction_policy' /workspace/repo/tensorrt_llm/config.pbtxt || \
  printf '\nmodel_transaction_policy {\n  decoupled: true\n}\n' >> /workspace/repo/tensorrt_llm/config.pbtxt
