# specdec-guide: trtllm=1.1.0
# BEFORE: Draft/Target with engines (Triton 25.12), in the legacy container. Two engines built
# beforehand with trtllm-build into $ENGINES/target and $ENGINES/draft (the target with
# --speculative_decoding_mode draft_tokens_external; the legacy notebook shows both builds), and six
# Triton models: preprocessing, postprocessing, ensemble, the target tensorrt_llm, the draft
# tensorrt_llm_draft, and tensorrt_llm_bls, which runs the draft/verify loop. Clients call
# tensorrt_llm_bls (or ensemble, without drafts). The checkpoint in /workspace/hf is the download
# step's; /workspace is the host folder the container mounts. Every placeholder outside a parameters value
# (a data type, the batch size, decoupled, an instance count) is filled: left as ${...}, the model would not load.
REPO=/workspace/legacy_repo ENGINES=/workspace/engines HF_TARGET=/workspace/hf/Llama-3.1-8B-Instruct
STAGE=/workspace/draft_stage
# Start from scratch, so that a second run does not copy the templates (and the draft) into the
# first run's folders.
rm -rf "$REPO" "$STAGE"
cp -R /app/all_models/inflight_batcher_llm "$REPO" && rm -rf "$REPO/multimodal_encoders"
python3 /app/tools/fill_template.py -i "$REPO/preprocessing/config.pbtxt" \
    triton_max_batch_size:4,tokenizer_dir:$HF_TARGET,preprocessing_instance_count:1
python3 /app/tools/fill_template.py -i "$REPO/postprocessing/config.pbtxt" \
    triton_max_batch_size:4,tokenizer_dir:$HF_TARGET,postprocessing_instance_count:1
python3 /app/tools/fill_template.py -i "$REPO/ensemble/config.pbtxt" triton_max_batch_size:4,logits_datatype:TYPE_FP32
python3 /app/tools/fill_template.py -i "$REPO/tensorrt_llm_bls/config.pbtxt" \
    triton_max_batch_size:4,decoupled_mode:false,bls_instance_count:1,accumulate_tokens:false,tensorrt_llm_model_name:tensorrt_llm,tensorrt_llm_draft_model_name:tensorrt_llm_draft,logits_datatype:TYPE_FP32,prompt_embedding_table_data_type:TYPE_FP16
# The draft is a second copy of the tensorrt_llm model, filled in a staging folder, then moved in
# under its own name (Triton wants the folder and the config's name to agree).
mkdir -p "$STAGE" && cp -R "$REPO/tensorrt_llm" "$STAGE/tensorrt_llm"
python3 /app/tools/fill_template.py -i "$STAGE/tensorrt_llm/config.pbtxt" \
    triton_backend:tensorrtllm,triton_max_batch_size:4,decoupled_mode:false,max_beam_width:1,engine_dir:$ENGINES/draft,kv_cache_free_gpu_mem_fraction:0.1,exclude_input_in_output:true,enable_kv_cache_reuse:true,batching_strategy:inflight_fused_batching,max_queue_delay_microseconds:0,encoder_input_features_data_type:TYPE_FP16,logits_datatype:TYPE_FP32,prompt_embedding_table_data_type:TYPE_FP16
sed -i 's/name: "tensorrt_llm"/name: "tensorrt_llm_draft"/' "$STAGE/tensorrt_llm/config.pbtxt"
mv "$STAGE/tensorrt_llm" "$REPO/tensorrt_llm_draft"
python3 /app/tools/fill_template.py -i "$REPO/tensorrt_llm/config.pbtxt" \
    triton_backend:tensorrtllm,triton_max_batch_size:4,decoupled_mode:false,max_beam_width:1,engine_dir:$ENGINES/target,kv_cache_free_gpu_mem_fraction:0.4,exclude_input_in_output:true,enable_kv_cache_reuse:true,batching_strategy:inflight_fused_batching,max_queue_delay_microseconds:0,encoder_input_features_data_type:TYPE_FP16,logits_datatype:TYPE_FP32,prompt_embedding_table_data_type:TYPE_FP16
python3 /app/scripts/launch_triton_server.py --model_repo "$REPO" --multi-model --world_size 1
