"""Shell snippets: CLI flags per (sub)command and track, missing CLIs, fill_template keys."""

from pathlib import Path

from specdec_guide.validate import shell
from specdec_guide.validate.notes import is_note
from specdec_guide.validate.runner import validate_paths
from specdec_guide.releases.tracks import Registry
from registry import tracks

FIX = Path(__file__).parent / "fixtures" / "validate"
REG = Registry(FIX / "schemas")


def problems(rel: str, trtllm: str | None = None) -> list[str]:
    report = validate_paths([FIX / rel], trtllm=trtllm, root=FIX, registry=REG, is_verified=lambda p: True)
    return [str(d) for d in report.diagnostics]


def check(text: str, track: str = "1.1.0") -> list:
    return shell.check(text, REG.resolve(track), REG)[0]


def test_unknown_flag_on_a_continuation_line():
    assert problems("bad/unknown_flag.sh") == [
        "bad/unknown_flag.sh:5:5: unknown flag '--extra-llm-api-options' for trtllm-serve serve in TRT-LLM 1.1.0 "
        "(did you mean '--extra_llm_api_options'?)"]


def test_trtllm_build_on_latest_track():
    assert problems("bad/trtllm_build_latest.sh") == [
        "bad/trtllm_build_latest.sh:3:1: 'trtllm-build' is not part of TRT-LLM 1.2.0 (this release has no TensorRT "
        "engine backend); it exists in 1.1.0"]


def test_unknown_fill_template_key():
    assert problems("bad/fill_template_key.sh") == [
        "bad/fill_template_key.sh:2:54: unknown template key 'max_beam_width' for model 'tensorrt_llm' in TRT-LLM "
        "1.1.0; fill_template.py fails on keys the template lacks"]


def test_flag_known_only_in_newer_track():
    assert check("trtllm-serve m --config x.yaml\n") == [
        (1, 16, "unknown flag '--config' for trtllm-serve serve in TRT-LLM 1.1.0; it exists in 1.2.0")]
    assert check("trtllm-serve m --config x.yaml\n", track="latest") == []


def test_subcommands_groups_wrappers_and_pipes():
    text = ("CUDA_VISIBLE_DEVICES=0 trtllm-bench --model m throughput --dataset d --bogus 1 | tee log\n"
            "sudo python3 -u /opt/convert_checkpoint.py --model_dir a --out_dir b && echo --anything\n"
            "docker run --gpus all img trtllm-serve serve m --port=8000 --nope\n")
    assert check(text) == [
        (1, 70, "unknown flag '--bogus' for trtllm-bench throughput in TRT-LLM 1.1.0"),
        (2, 58, "unknown flag '--out_dir' for convert_checkpoint.py in TRT-LLM 1.1.0 (did you mean '--output_dir'?)"),
        (3, 60, "unknown flag '--nope' for trtllm-serve serve in TRT-LLM 1.1.0"),
    ]


def test_comments_heredocs_and_quotes():
    assert check("# trtllm-serve --nope\ncat <<EOF\ntrtllm-serve --nope\nEOF\necho 'trtllm-serve --nope'\n") == []
    assert check("echo 'unclosed\n")[0][2].startswith("shell syntax:")


def test_clean_shell_passes_and_counts_invocations():
    assert problems("clean/snippets/serve/ngram.sh") == []
    text = (FIX / "clean/snippets/serve/ngram.sh").read_text()
    _, count, refs = shell.check(text, REG.resolve("1.1.0"), REG)
    assert count == 3
    assert refs == [("--extra_llm_api_options", "ngram.llm_api.yaml")]


def test_yaml_passed_to_extra_options_is_validated_as_llm_api_yaml(tmp_path):
    (tmp_path / "opts.yaml").write_text("speculative_config:\n  decoding_type: Eagle3\n  max_draft_len: 2\n")
    (tmp_path / "serve.sh").write_text("trtllm-serve m --extra_llm_api_options opts.yaml\n")
    report = validate_paths([tmp_path], root=tmp_path, registry=REG, is_verified=lambda p: True)
    assert [str(d) for d in report.diagnostics] == [
        "opts.yaml:2:18: 'Eagle3' is not a decoding_type in TRT-LLM 1.1.0 (known: DraftTarget, Draft_Target, Eagle, "
        "NGram, UserProvided, User_Provided); it exists in 1.2.0"]


def test_unconfirmed_and_unrecorded_flags_are_notes_not_errors():
    found = check("trtllm-bench --model m throughput --warmup 2\n")
    assert found == [(1, 35, "'--warmup' is recorded only as a likely flag of trtllm-bench throughput in TRT-LLM "
                             "1.1.0 (unconfirmed): cannot check it")]
    assert is_note(found[0][2])
    found = check("trtllm-bench --model m latency --dataset d\n")
    assert found == [(1, 32, "the TRT-LLM 1.1.0 snapshot does not record the flags of trtllm-bench latency: "
                             "cannot check '--dataset'")]
    assert is_note(found[0][2])
    # a real mistake next to a gap stays an error
    found = check("trtllm-bench --model m throughput --bogus 1 --warmup 2\n")
    assert [is_note(f[2]) for f in found] == [False, True]


def test_flags_before_the_model_belong_to_the_default_subcommand():
    assert check("trtllm-serve --port 8000 m\n") == []
    assert check("trtllm-serve --bogus m\n") == [(1, 14, "unknown flag '--bogus' for trtllm-serve in TRT-LLM 1.1.0")]


def test_programs_called_through_variables():
    text = ("FILL=/app/tools/fill_template.py\nBUILD=${BUILD:-trtllm-build}\n"
            "python3 ${FILL} -i repo/tensorrt_llm/config.pbtxt triton_backend:tensorrtllm,nope:1\n"
            "$BUILD --checkpoint_dir c --bogus\n")
    assert check(text) == [
        (3, 78, "unknown template key 'nope' for model 'tensorrt_llm' in TRT-LLM 1.1.0; fill_template.py fails on "
                "keys the template lacks"),
        (4, 27, "unknown flag '--bogus' for trtllm-build in TRT-LLM 1.1.0"),
    ]
    found = check("python3 ${FILL_TEMPLATE_SCRIPT} -i x/tensorrt_llm/config.pbtxt nope:1\n$TRTLLM_BUILD --x\n")
    assert [(ln, col, is_note(msg)) for ln, col, msg in found] == [(1, 9, True), (2, 1, True)]
    assert "program called through ${FILL_TEMPLATE_SCRIPT}, which this snippet (or its page) does not set" in found[0][2]
    # the caller (a page) may pass what earlier snippets set
    found = shell.check("python3 ${FILL_TEMPLATE_SCRIPT} -i x/tensorrt_llm/config.pbtxt nope:1\n",
                        REG.resolve("1.1.0"), REG, env={"FILL_TEMPLATE_SCRIPT": "tools/fill_template.py"})[0]
    assert [(ln, col, is_note(msg)) for ln, col, msg in found] == [(1, 64, False)]
    # only the folder comes from a variable: the program is named, and is ours or not
    assert check('"$VENV/bin/aiperf" profile --url http://x\n') == []
    assert check("$BIN/trtllm-build --checkpoint_dir c --bogus\n") == [
        (1, 38, "unknown flag '--bogus' for trtllm-build in TRT-LLM 1.1.0")]
    assert [is_note(msg) for _, _, msg in check("${TOOLS}/${PROG} --x\n")] == [True]


def test_fill_template_target_it_cannot_place_is_a_note():
    found = check("python3 tools/fill_template.py -i repo/tensorrt_llm_draft/config.pbtxt engine_dir:/e\n"
                  "python3 tools/fill_template.py -i ${REPO}/${MODEL}/config.pbtxt engine_dir:/e\n")
    assert [(ln, is_note(msg)) for ln, _, msg in found] == [(1, True), (2, True)]
    assert "'tensorrt_llm_draft' is not one of the templates recorded" in found[0][2]


def test_llm_api_yaml_in_heredocs_is_checked_in_place():
    text = ("cat > opts.yaml <<-EOF\n"
            "\tspeculative_config:\n"
            "\t  decoding_type: Eagle3\n"
            "\t  max_draft_len: 2\n"
            "\tEOF\n"
            "cat <<'EOF' > notes.txt\nplain words: trtllm-serve --nope\nEOF\n")
    assert check(text) == [
        (3, 19, "'Eagle3' is not a decoding_type in TRT-LLM 1.1.0 (known: DraftTarget, Draft_Target, Eagle, NGram, "
                "UserProvided, User_Provided); it exists in 1.2.0")]
    # a value the shell fills from a variable nothing sets cannot be judged: a note, not an error
    found = check("cat > o.yaml <<EOF\nspeculative_config:\n  decoding_type: $KIND\n  max_draft_len: 2\nEOF\n")
    assert [(ln, is_note(msg)) for ln, _, msg in found] == [(3, True)]
    # other YAML in a heredoc is left alone
    assert check("cat > mkdocs.yml <<EOF\nsite_name: x\nnav: []\nEOF\n") == []


def test_variables_set_by_earlier_snippets_of_a_page(tmp_path):
    (tmp_path / "mkdocs.yml").write_text("site_name: t\n")
    (tmp_path / "snippets").mkdir()
    (tmp_path / "docs").mkdir()
    (tmp_path / "snippets" / "a_setup.sh").write_text("export FILL_TEMPLATE_SCRIPT=/app/tools/fill_template.py\n")
    (tmp_path / "snippets" / "b_fill.sh").write_text(
        "python3 ${FILL_TEMPLATE_SCRIPT} -i repo/tensorrt_llm/config.pbtxt nope:1\n")
    (tmp_path / "docs" / "page.md").write_text(
        '```bash\n--8<-- "snippets/a_setup.sh"\n```\n\n```bash\n--8<-- "snippets/b_fill.sh"\n```\n')
    report = validate_paths([tmp_path / "snippets"], root=tmp_path, registry=REG, is_verified=lambda p: True)
    assert [str(d) for d in report.diagnostics] == [
        "snippets/b_fill.sh:1:67: unknown template key 'nope' for model 'tensorrt_llm' in TRT-LLM 1.1.0; "
        "fill_template.py fails on keys the template lacks"]
    assert report.notes == []


def test_fill_template_key_that_is_part_of_a_real_key():
    found = check("python3 tools/fill_template.py -i r/tensorrt_llm/config.pbtxt decoupled:true\n")
    assert found == [(1, 63, "unknown template key 'decoupled' for model 'tensorrt_llm' in TRT-LLM 1.1.0 (did you "
                             "mean 'decoupled_mode'?); fill_template.py lets it through (it is part of "
                             "'decoupled_mode') but substitutes nothing")]


# ---- program output in shell fences -----------------------------------------------------------------
README_OUTPUT = """python3 ../run.py --max_output_len=40 --tokenizer_dir ./llama \\
    --input_text "Born in north-east France, Soyer trained as a"
Soyer's wife, Emma Jones, was a painter and a musician.
[12/01/2026-10:00:00] [TRT-LLM] [W] Can't read the engine config, using defaults
trtllm-serve m --extra-llm-api-options x.yaml
"""


def test_program_output_without_prompts_is_a_note_and_the_command_after_it_is_still_checked():
    found = check(README_OUTPUT)
    errors = [(ln, col, msg) for ln, col, msg in found if not is_note(msg)]
    notes = [(ln, col) for ln, col, msg in found if is_note(msg)]
    assert notes == [(3, 1), (4, 1)]
    assert all("looks like program output" in msg for _, _, msg in found if is_note(msg))
    assert errors == [(5, 16, "unknown flag '--extra-llm-api-options' for trtllm-serve serve in TRT-LLM 1.1.0 "
                              "(did you mean '--extra_llm_api_options'?)")]


def test_a_transcript_with_prompts_reads_only_the_prompted_commands():
    text = ("$ trtllm-serve m \\\n"
            "    --nope\n"
            "INFO: Soyer's server is up\n"
            "{\"text_output\": \"it's \"}\n"
            "$ curl -s localhost:8000/v2/health/ready -d '{\n"
            "  \"a\": 1\n"
            "}'\n"
            "He didn't answer'\n")
    assert check(text) == [(2, 5, "unknown flag '--nope' for trtllm-serve serve in TRT-LLM 1.1.0")]


def test_real_shell_errors_in_real_commands_are_still_errors():
    for text in ("echo 'unclosed\n", "trtllm-serve m --extra_llm_api_options 'x.yaml\n",
                 "MODEL='a b\n", "./run.sh \"--x\n", "$ docker run 'img\n"):
        found = check(text)
        assert found and found[0][2].startswith("shell syntax:") and not is_note(found[0][2]), (text, found)


def test_a_readme_named_on_the_command_line_has_its_shell_fences_checked(tmp_path):
    (tmp_path / "README.md").write_text(
        "# Serving\n\nRun it:\n\n```bash\n" + README_OUTPUT + "```\n\n"
        "- In a list:\n\n  ```console\n  $ trtllm-serve m --port 8000 --bogus\n  Soyer's wife\n  ```\n\n"
        "```python\nprint('not shell')\n```\n")
    report = validate_paths([tmp_path / "README.md"], root=tmp_path, registry=REG, is_verified=lambda p: True)
    assert [str(d) for d in report.diagnostics] == [
        "README.md:10:16: unknown flag '--extra-llm-api-options' for trtllm-serve serve in TRT-LLM 1.1.0 "
        "(did you mean '--extra_llm_api_options'?)",
        "README.md:16:32: unknown flag '--bogus' for trtllm-serve serve in TRT-LLM 1.1.0"]
    assert [(n.line, n.col) for n in report.notes] == [(8, 1), (9, 1)]
    assert report.results[0].kind == "markdown" and report.results[0].snippets == 2


# ---- fill_template.py sequences: structural placeholders (issue 26) ------------------------------------
SEQ = FIX / "fill_sequences"
REAL = Registry()


def real_problems(rel: str) -> tuple[list[str], list[str]]:
    report = validate_paths([FIX / rel], root=FIX, registry=REAL, is_verified=lambda p: True)
    return [str(d) for d in report.diagnostics], [str(n) for n in report.notes]


def test_a_fill_sequence_that_leaves_a_structural_placeholder_is_refused_at_its_last_call():
    """Both tensorrt_llm calls together fill everything but prompt_embedding_table_data_type (the first
    call is not reported: the second one fills more of the same file), and so does the BLS call."""
    diags, notes = real_problems("fill_sequences/structural_left.sh")
    tail = ("still has ${...} outside its parameters values: prompt_embedding_table_data_type; fill_template.py "
            "leaves them as they are, the config then does not parse (or names a type or backend that does not "
            "exist) and Triton does not load the model: fill them in this call")
    assert diags == [
        "fill_sequences/structural_left.sh:10:5: fill_template.py: after the last call on "
        f"'$REPO/tensorrt_llm_bls/config.pbtxt' the 'tensorrt_llm_bls' template (TRT-LLM 1.1.0) {tail}",
        "fill_sequences/structural_left.sh:13:5: fill_template.py: after the last call on "
        f"'$REPO/tensorrt_llm/config.pbtxt' the 'tensorrt_llm' template (TRT-LLM 1.1.0) {tail}",
    ]
    assert notes == []


def test_the_r2512_example_sequence_validates_clean():
    """No false alarm on the backend's own (PR #822) sequence: max_queue_size and
    max_queue_delay_microseconds come from fill_template.py's defaults where a call leaves them out."""
    assert real_problems("fill_sequences/upstream_r2512_llama.sh") == ([], [])


def test_structural_keys_are_recorded_for_every_template_of_every_track():
    for tid in tracks():
        models = REAL.resolve(tid).triton["legacy_inflight_batcher_llm"]["models"]
        for name, spec in models.items():
            assert set(spec["structural_keys"]) <= set(spec["keys"]), (tid, name)
        assert "prompt_embedding_table_data_type" in models["tensorrt_llm"]["structural_keys"]
        assert "prompt_embedding_table_data_type" in models["tensorrt_llm_bls"]["structural_keys"]
        assert "engine_dir" not in models["tensorrt_llm"]["structural_keys"]  # a parameters value
        assert models["tensorrt_llm"]["comment_keys"] == ["enable_trt_overlap"]


def test_what_counts_as_one_file_and_one_sequence():
    t = REAL.resolve("1.1.0")
    ens = "python3 /app/tools/fill_template.py {flag} {path}/ensemble/config.pbtxt {keys}\n"
    # calls on the same file add up; a call without -i prints and changes nothing
    text = (ens.format(flag="-i", path="r", keys="triton_max_batch_size:4")
            + ens.format(flag="", path="r", keys="logits_datatype:TYPE_FP32")
            + ens.format(flag="--in_place", path="./r", keys="logits_datatype:TYPE_FP32"))
    assert shell.check(text, t, REAL)[0] == []
    found = shell.check(ens.format(flag="-i", path="r", keys="triton_max_batch_size:4")
                        + ens.format(flag="", path="r", keys="logits_datatype:TYPE_FP32"), t, REAL)[0]
    assert [(ln, col) for ln, col, _ in found] == [(1, 64)] and "logits_datatype" in found[0][2]
    # two folders set from one unknown variable stay two files
    text = ('A="$REPOS/a"\nB="$REPOS/b"\n' + ens.format(flag="-i", path="$A", keys="triton_max_batch_size:4")
            + ens.format(flag="-i", path="$B", keys="logits_datatype:TYPE_FP32"))
    assert [ln for ln, _, _ in shell.check(text, t, REAL)[0]] == [3, 4]
    # a call with an error of its own fills nothing and is reported for that error alone
    found = shell.check(ens.format(flag="-i", path="r", keys="triton_max_batch_size:4,nope:1"), t, REAL)[0]
    assert len(found) == 1 and "unknown template key 'nope'" in found[0][2]
    # fragments (the migration map's rows) show one key each: not a sequence
    assert shell.check(ens.format(flag="-i", path="r", keys="triton_max_batch_size:4"), t, REAL,
                       whole_fills=False)[0] == []
    # a ledger carries the calls of several parts; its owner reports once the sequence ends
    ledger = shell.FillLedger()
    ledger.scope = "cell 1"
    assert shell.check(ens.format(flag="-i", path="r", keys="triton_max_batch_size:4"), t, REAL, fills=ledger)[0] == []
    ledger.scope = "cell 2"
    assert shell.check(ens.format(flag="-i", path="r", keys="logits_datatype:TYPE_FP32"), t, REAL, fills=ledger)[0] == []
    assert ledger.findings() == []


# ---- fill_template.py sequences: copies, refills, -i anywhere, mandatory parameters (review fill-r1) ----
FILL = "python3 /app/tools/fill_template.py"
TRT_SHARED = ("triton_backend:tensorrtllm,triton_max_batch_size:4,decoupled_mode:false,batching_strategy:inflight_fused_batching,"
              "encoder_input_features_data_type:TYPE_FP16,logits_datatype:TYPE_FP32,prompt_embedding_table_data_type:TYPE_FP16")


def real_check(text: str, track: str = "1.1.0") -> list:
    return shell.check(text, REAL.resolve(track), REAL)[0]


def test_a_copy_carries_what_was_filled_to_its_destination():
    """fill-r1-fill-then-copy: the keys target and draft share filled once, the folder copied, each copy
    given only what differs (scratch case e01) is clean; so is a copied repository folder, per file."""
    text = ('REPO=/tmp/r STAGE=/tmp/stage\n'
            'cp -R /app/all_models/inflight_batcher_llm "$REPO"\n'
            f'{FILL} -i "$REPO/tensorrt_llm/config.pbtxt" {TRT_SHARED}\n'
            'mkdir -p "$STAGE" && cp -R "$REPO/tensorrt_llm" "$STAGE/tensorrt_llm"\n'
            f'{FILL} -i "$STAGE/tensorrt_llm/config.pbtxt" engine_dir:/engines/draft,kv_cache_free_gpu_mem_fraction:0.1\n'
            f'{FILL} -i "$REPO/tensorrt_llm/config.pbtxt" engine_dir:/engines/target,kv_cache_free_gpu_mem_fraction:0.4\n')
    assert real_check(text) == []
    # a whole repository folder copied (into a folder named with a trailing /), then mv'd: per file
    text = (f'{FILL} -i /tmp/a/ensemble/config.pbtxt triton_max_batch_size:4\n'
            'cp -r /tmp/a /tmp/b/\n'
            'mv /tmp/b/a /tmp/c\n'
            f'{FILL} -i /tmp/c/ensemble/config.pbtxt logits_datatype:TYPE_FP32\n'
            f'{FILL} -i /tmp/a/ensemble/config.pbtxt logits_datatype:TYPE_FP32\n')
    assert real_check(text) == []
    # a fresh copy of the container's templates replaces what was filled there: it starts empty
    found = real_check(f'{FILL} -i /tmp/r/ensemble/config.pbtxt triton_max_batch_size:4,logits_datatype:TYPE_FP32\n'
                       'rm -rf /tmp/r && cp -R /app/all_models/inflight_batcher_llm /tmp/r\n'
                       f'{FILL} -i /tmp/r/ensemble/config.pbtxt triton_max_batch_size:8\n')
    assert [(ln, "logits_datatype" in msg) for ln, _, msg in found] == [(3, True)]
    # a copy never filled again keeps what its source had left: reported at the copy
    found = real_check(f'{FILL} -i /tmp/a/ensemble/config.pbtxt triton_max_batch_size:4\n'
                       'cp -R /tmp/a /tmp/b\n'
                       f'{FILL} -i /tmp/a/ensemble/config.pbtxt logits_datatype:TYPE_FP32\n')
    assert [(ln, col) for ln, col, _ in found] == [(2, 14)]
    assert "after the copy to '/tmp/b/ensemble/config.pbtxt' (from '/tmp/a/ensemble/config.pbtxt')" in found[0][2]


def test_a_key_already_filled_in_the_file_is_an_error_at_the_key():
    """fill-r1-refill: fill_template.py asserts that each key's text is in the file; after a fill it is not
    (scratch case e02), also in a copy of a filled file; a branch of an if/else is not an earlier call."""
    found = real_check(f'{FILL} -i /tmp/r/ensemble/config.pbtxt triton_max_batch_size:4,logits_datatype:TYPE_FP32\n'
                       f'{FILL} -i /tmp/r/ensemble/config.pbtxt triton_max_batch_size:8\n')
    assert [(ln, col) for ln, col, _ in found] == [(2, 69)]
    assert found[0][2].startswith("fill_template.py: 'triton_max_batch_size' is already filled in "
                                  "'/tmp/r/ensemble/config.pbtxt' (by the call on line 1)")
    text = ('R=/tmp/triton_repo\n'
            f'{FILL} -i $R/tensorrt_llm/config.pbtxt {TRT_SHARED},engine_dir:/e\n'
            'cp -R $R/tensorrt_llm $R/stage/tensorrt_llm\n'
            f'{FILL} -i $R/stage/tensorrt_llm/config.pbtxt triton_max_batch_size:4,engine_dir:/d\n')
    found = real_check(text)
    assert [(ln, msg.split(" is already")[0]) for ln, _, msg in found] == [
        (4, "fill_template.py: 'triton_max_batch_size'"), (4, "fill_template.py: 'engine_dir'")]
    assert "copied from '$R/tensorrt_llm/config.pbtxt'" in found[0][2]
    # fill_template.py fills its defaults on every call: a later call that gives one fills nothing
    found = real_check(f'{FILL} -i /tmp/r/preprocessing/config.pbtxt triton_max_batch_size:4,tokenizer_dir:/hf\n'
                       f'{FILL} -i /tmp/r/preprocessing/config.pbtxt preprocessing_instance_count:1,max_queue_size:8\n')
    assert len(found) == 1 and "'max_queue_size' is already filled" in found[0][2] and "defaults" in found[0][2]
    text = ('if [ -n "$X" ]; then\n'
            f'  {FILL} -i /tmp/r/ensemble/config.pbtxt triton_max_batch_size:4,logits_datatype:TYPE_FP32\n'
            'else\n'
            f'  {FILL} -i /tmp/r/ensemble/config.pbtxt triton_max_batch_size:4,logits_datatype:TYPE_FP16\n'
            'fi\n')
    assert real_check(text) == []


def test_in_place_is_a_flag_and_the_file_is_a_positional_wherever_it_stands():
    """fill-r1-i-after-file: ``fill_template.py FILE -i key:value`` is an in-place call on FILE."""
    for call in ("-i /tmp/r/ensemble/config.pbtxt triton_max_batch_size:4",
                 "/tmp/r/ensemble/config.pbtxt -i triton_max_batch_size:4",
                 "/tmp/r/ensemble/config.pbtxt triton_max_batch_size:4 --in_place",
                 "triton_max_batch_size:4 -i /tmp/r/ensemble/config.pbtxt"):
        found = real_check(f"{FILL} {call}\n")
        assert len(found) == 1 and not is_note(found[0][2]), (call, found)
        assert "still has ${...} outside its parameters values: logits_datatype" in found[0][2], call
    # the file is the positional before the list when neither ends in .pbtxt
    found = real_check(f"{FILL} $CFG -i triton_max_batch_size:4\n")
    assert [is_note(m) for _, _, m in found] == [True] and "'$CFG'" in found[0][2]
    found = real_check(f"{FILL} /tmp/r/ensemble/config.pbtxt -i nope:1\n")
    assert len(found) == 1 and "unknown template key 'nope'" in found[0][2]


def test_mandatory_parameters_are_recorded_and_refused_when_left_unfilled():
    """fill-r1-mandatory-params: engine_dir and batching_strategy of tensorrt_llm and tokenizer_dir of
    preprocessing and postprocessing have no default in the backend (scratch case c01)."""
    for tid in tracks():
        models = REAL.resolve(tid).triton["legacy_inflight_batcher_llm"]["models"]
        assert models["tensorrt_llm"]["mandatory_keys"] == ["engine_dir", "batching_strategy"]
        assert models["preprocessing"]["mandatory_keys"] == ["tokenizer_dir"]
        assert models["postprocessing"]["mandatory_keys"] == ["tokenizer_dir"]
        for name, spec in models.items():
            assert set(spec.get("mandatory_keys") or []) <= set(spec["keys"]) - set(spec["structural_keys"]), name
    text = ("REPO=/tmp/r\n"
            f'{FILL} -i "$REPO/preprocessing/config.pbtxt" triton_max_batch_size:4,preprocessing_instance_count:1\n'
            f'{FILL} -i "$REPO/postprocessing/config.pbtxt" triton_max_batch_size:4,postprocessing_instance_count:1\n'
            f'{FILL} -i "$REPO/tensorrt_llm/config.pbtxt" triton_backend:tensorrtllm,triton_max_batch_size:4,'
            'decoupled_mode:false,encoder_input_features_data_type:TYPE_FP16,logits_datatype:TYPE_FP32,'
            'prompt_embedding_table_data_type:TYPE_FP16\n')
    for tid in tracks():
        found = real_check(text, tid)
        assert [ln for ln, _, _ in found] == [2, 3, 4], tid
        assert all("mandatory parameters" in msg for _, _, msg in found)
        assert "still has mandatory parameters unfilled: engine_dir, batching_strategy;" in found[2][2]
        assert "still has mandatory parameters unfilled: tokenizer_dir;" in found[0][2]
    assert real_check(text.replace("triton_max_batch_size:4,pre", "tokenizer_dir:/hf,triton_max_batch_size:4,pre")
                      .replace("triton_max_batch_size:4,post", "tokenizer_dir:/hf,triton_max_batch_size:4,post")
                      .replace("triton_backend:", "engine_dir:/e,batching_strategy:inflight_fused_batching,"
                               "triton_backend:")) == []


def test_a_copy_of_another_file_leaves_the_ledger_as_it_is():
    """Only a copy of a held file or folder, or of the container's templates, replaces what the destination
    held: a tokenizer file copied into a repository folder does not unfill its configs."""
    text = (f'{FILL} -i /tmp/r/ensemble/config.pbtxt triton_max_batch_size:4\n'
            'cp /tmp/tokenizer.json /tmp/r\n'
            f'{FILL} -i /tmp/r/ensemble/config.pbtxt logits_datatype:TYPE_FP32\n')
    assert real_check(text) == []
