"""Precision of the command-line side of ``specdec-guide validate`` on each pinned release.

``tests/fixtures/validate/upstream_shapes/<track>/clean`` holds files written by us in the shapes of
real upstream files of that release (the inflight-batcher templates with their ``${...}``
placeholders, fill_template.py calls, also through ``${FILL_TEMPLATE_SCRIPT}``, convert_checkpoint.py
and trtllm-build with the speculative flags, trtllm-serve with an options file written in a heredoc,
trtllm-bench and prepare_dataset.py, an options YAML named like upstream's): they must validate with
no error and no note, against the packaged snapshots. ``.../bad`` holds one mistake per file, one
file per rule: each must be reported at its line and column, and nothing else. The test prints both
counts.
"""

from pathlib import Path

import pytest
import yaml

from specdec_guide.validate.runner import validate_paths
from specdec_guide.releases.tracks import Registry
from registry import tracks

FIX = Path(__file__).parent / "fixtures" / "validate" / "upstream_shapes"
TRACKS = tuple(tracks())

#: file -> [(line, col, start of the message)]; the same mistakes on every track, unless its
#: upstream_shapes/<track>/expected.yaml says otherwise for a file.
EXPECTED = {
    "build_unknown_flag.sh": [(3, 39, "unknown flag '--max_draft_tokens' for trtllm-build")],
    "build_through_variable.sh": [(3, 37, "unknown flag '--speculative_decoding_mod' for trtllm-build")],
    "fill_stale_key.sh": [(4, 29, "unknown template key 'max_num_sequences' for model 'tensorrt_llm'")],
    "fill_no_colon.sh": [(2, 98, "fill_template.py: substitution 'decoupled_mode=false' has no ':'")],
    "fill_two_arguments.sh": [(2, 88, "fill_template.py: substitution '(empty: a stray comma)' has no ':'"),
                              (2, 92, "fill_template.py takes one substitutions argument")],
    "convert_eagle_unknown_flag.sh": [(3, 5, "unknown flag '--num_eagle_heads' for convert_checkpoint.py (eagle)")],
    "serve_typo.sh": [(2, 39, "unknown flag '--extra-llm-api-options' for trtllm-serve serve")],
    "bench_unknown_flag.sh": [(2, 53, "unknown flag '--max_concurrency' for trtllm-bench throughput")],
    "prepare_dataset_flag.sh": [(2, 81, "unknown flag '--num_requests' for prepare_dataset.py token_norm_dist")],
    "heredoc_yaml_key.sh": [(5, 1, "unknown key 'max_batchsize': TorchLlmArgs")],
    "spec.yml": [(3, 3, "unknown key 'kv_cache_config.free_gpu_mem_fraction'")],
}


def per_track(track: str) -> dict:
    """The track's own expected results (upstream_shapes/<track>/expected.yaml), as EXPECTED's entries."""
    data = yaml.safe_load((FIX / track / "expected.yaml").read_text(encoding="utf-8")) or {}
    return {name: [tuple(e) for e in entries] for name, entries in data.items()}


def run(folder: Path):
    return validate_paths([folder], root=folder, registry=Registry(), is_verified=lambda p: True)


@pytest.mark.parametrize("track", TRACKS)
def test_upstream_shapes_validate_clean_and_every_rule_is_caught_at_its_line(track):
    clean = run(FIX / track / "clean")
    assert [str(d) for d in clean.diagnostics] == []
    assert [str(n) for n in clean.notes] == []
    invocations = sum(r.references for r in clean.results if r.kind == "shell")
    assert invocations >= 15, "the clean shell fixtures must actually be compared with the snapshot"
    assert {r.track.id for r in clean.results} == {track}

    bad = run(FIX / track / "bad")
    expected = {**EXPECTED, **per_track(track)}
    got: dict[str, list] = {}
    for d in bad.diagnostics:
        got.setdefault(d.path, []).append((d.line, d.col, d.message))
    assert sorted(got) == sorted(expected), "one fixture per rule, each reported"
    caught = 0
    for name, want in expected.items():
        have = sorted(got[name])
        assert [(ln, col) for ln, col, _ in have] == [(ln, col) for ln, col, _ in want], (name, have)
        for (_, _, msg), (_, _, start) in zip(have, want):
            assert msg.startswith(start), (name, msg)
            assert f"TRT-LLM {track}" in msg or "fill_template.py" in msg, msg
        caught += 1
    assert bad.notes == []
    n_clean = len(clean.results)
    print(f"\nTRT-LLM {track}: {n_clean} upstream-shaped files clean ({invocations} invocations checked, "
          f"0 false alarms); {caught}/{len(expected)} rule fixtures caught at their line")


def test_engine_programs_on_a_track_without_the_engine_backend_are_errors():
    """Rule: trtllm-build / convert_checkpoint.py / fill_template.py where the engine backend is gone
    (shown with the small fixture tracks: 1.2.0 there has ``engine_backend: false``)."""
    reg = Registry(Path(__file__).parent / "fixtures" / "validate" / "schemas")
    from specdec_guide.validate import shell

    text = "TRTLLM_BUILD=trtllm-build\n$TRTLLM_BUILD --checkpoint_dir c\npython3 tools/convert_checkpoint.py --x 1\n"
    found, _, _ = shell.check(text, reg.resolve("latest"), reg)
    assert [(ln, col) for ln, col, _ in found] == [(2, 1), (3, 9)]
    assert all("(this release has no TensorRT engine backend)" in msg for _, _, msg in found)
