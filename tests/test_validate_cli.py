"""``specdec-guide validate`` as a reader runs it: exit codes, one line per problem, no traceback."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from specdec_guide.validate import typegrammar
from specdec_guide.validate.runner import validate_paths
from specdec_guide.releases.tracks import Registry

FIX = Path(__file__).parent / "fixtures" / "validate"


def run_cli(*args: str, cwd: Path, schemas: Path | None = FIX / "schemas") -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop("SPECDEC_GUIDE_SCHEMA_DIR", None)
    if schemas is not None:
        env["SPECDEC_GUIDE_SCHEMA_DIR"] = str(schemas)
    return subprocess.run([sys.executable, "-m", "specdec_guide", "validate", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def test_clean_repository_exits_0():
    proc = run_cli(cwd=FIX / "clean")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip() == ("checked 11 files (11 snippets, 5 fenced blocks in 1 pages) against TRT-LLM "
                                   "1.1.0, 1.2.0: no problems")


def test_broken_inputs_exit_1_with_positions_and_no_traceback():
    # FIX has no mkdocs.yml/pyproject.toml: paths print relative to this repository's root.
    proc = run_cli("bad", cwd=FIX)
    prefix = "tests/fixtures/validate/bad/"
    assert proc.returncode == 1
    assert "Traceback" not in proc.stdout + proc.stderr
    lines = proc.stdout.strip().split("\n")
    assert len(lines) == 19, lines
    assert all(line.startswith(prefix) and line.split(":")[1].isdigit() for line in lines), lines
    assert prefix + "unknown_flag.sh:5:5: unknown flag '--extra-llm-api-options'" in proc.stdout
    assert proc.stderr.strip().endswith(": 19 problems")


def test_trtllm_option_overrides_directives_and_default():
    proc = run_cli("bad/eagle3_on_110.llm_api.yaml", "--trtllm", "latest", cwd=FIX)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "against TRT-LLM 1.2.0" in proc.stdout


def test_unknown_track_is_a_usage_error():
    proc = run_cli("bad", "--trtllm", "0.9", cwd=FIX)
    assert proc.returncode == 2
    assert "unknown TRT-LLM track '0.9' (known: 1.1.0, 1.1, triton-25.12, 1.2.0, latest)" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_unreadable_binary_missing_and_unknown_files_become_diagnostics(tmp_path):
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "blob.sh").write_bytes(b"\x00\x01binary")
    (tmp_path / "latin.py").write_bytes(b"x = '\xe9'\n")
    (tmp_path / "notes.txt").write_text("prose\n")
    (tmp_path / "bad.sh").write_text("# specdec-guide: trtllm=7.0\ntrtllm-serve m\n")
    proc = run_cli("blob.sh", "latin.py", "notes.txt", "gone.sh", "bad.sh", cwd=tmp_path)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stdout + proc.stderr
    assert proc.stdout.split("\n")[:5] == [
        "bad.sh:1:1: unknown TRT-LLM track '7.0' in the trtllm= directive (known: 1.1.0, 1.1, triton-25.12, 1.2.0, "
        "latest)",
        "blob.sh:1:1: binary file (a NUL byte): a snippet must be text",
        "gone.sh:0:0: no such file or directory",
        "latin.py:1:6: not UTF-8 text (byte 5)",
        "notes.txt:0:0: no validator applies to this kind of file",
    ]


def test_missing_schema_folder_is_reported_not_raised(tmp_path):
    (tmp_path / "pyproject.toml").write_text("")
    proc = run_cli(cwd=tmp_path, schemas=tmp_path / "nowhere")
    assert proc.returncode == 2
    assert proc.stderr.startswith("specdec-guide validate: no tracks.yaml in")


def test_packaged_snapshots_load_and_every_track_resolves():
    reg = Registry()
    assert reg.resolve(None).id == reg.default_name
    for track in reg.tracks:
        if track.exists:
            assert reg.resolve(track.id) is track
            for part in ("llm_api", "cli", "triton"):
                assert isinstance(track.part(part), dict)


@pytest.mark.parametrize("text,expected", [
    ("int", ("prim", "int")),
    ("int | null", ("union", (("prim", "int"), ("null",)))),
    ("list[int] | null", ("union", (("list", ("prim", "int")), ("null",)))),
    ("dict[str, list[str]]", ("dict", ("list", ("prim", "str")))),
    ("literal[auto, 'fp8']", ("literal", ("auto", "fp8"))),
    ("Optional[KvCacheConfig]", ("union", (("ref", "KvCacheConfig"), ("null",)))),
    ("Literal['a', 'b']", ("literal", ("a", "b"))),
    ("object", ("object",)),
    ("", ("any",)),
])
def test_type_grammar(text, expected):
    assert typegrammar.parse_type(text) == expected


def test_report_counts_notebook_cells():
    report = validate_paths([FIX / "clean/notebooks/01_basics.py"], root=FIX / "clean",
                            registry=Registry(FIX / "schemas"), is_verified=lambda p: True)
    assert report.summary() == "checked 1 file (2 snippets) against TRT-LLM 1.1.0: no problems"


# ---- scripts/regen_schema.py without TensorRT-LLM -----------------------------------------
REGEN = Path(__file__).resolve().parents[1] / "scripts" / "regen_schema.py"


def _regen():
    import importlib.util

    spec = importlib.util.spec_from_file_location("regen_schema_cpu", REGEN)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_regen_schema_explains_missing_tensorrt_llm(tmp_path):
    proc = subprocess.run([sys.executable, str(REGEN), str(tmp_path / "out")], capture_output=True, text=True,
                          timeout=120)
    if "cannot import tensorrt_llm" not in proc.stderr:
        pytest.skip("tensorrt_llm is importable here; the GPU tier covers regeneration")
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "out").exists()


def test_regen_schema_extracts_pydantic_facts_and_compares():
    from typing import Literal, Optional

    from pydantic import BaseModel, ConfigDict, Field

    regen = _regen()

    class Inner(BaseModel):
        model_config = ConfigDict(extra="forbid")
        enable: bool = True

    class Args(BaseModel):
        model_config = ConfigDict(extra="forbid")
        model: str
        max_draft_len: int = Field(gt=0, default=4)
        inner: Optional[Inner] = None
        kind: Literal["a", "b"] = "a"
        sizes: Optional[list[int]] = None
        thing: object = None

    seen: list = []
    facts = regen.class_facts(Args, seen)
    assert seen == [Inner]
    assert facts["extra"] == "forbid"
    assert facts["fields"] == {
        "model": {"type": "str", "required": True},
        "max_draft_len": {"type": "int", "default": 4, "gt": 0},
        "inner": {"type": "Inner | null", "default": None},
        "kind": {"type": "literal[a, b]", "default": "a"},
        "sizes": {"type": "list[int] | null", "default": None},
        "thing": {"type": "object", "default": None, "yaml": False},
    }
    recorded = {"llm_api": {"classes": {"Args": {"fields": {**facts["fields"], "gone": {"type": "int"}},
                                                 "decoding_type": ["A"]}}},
                "cli": {"commands": {"trtllm-serve": {"subcommands": {"serve": {"flags": ["--port", "--old"]}}}}}}
    installed = {"llm_api": {"classes": {"Args": {**facts, "decoding_type": ["A", "B"]}}},
                 "cli": {"commands": {"trtllm-serve": {"subcommands": {"serve": {"flags": ["--port", "--new"]}}}}}}
    assert regen.compare(recorded, installed) == [
        "Args.gone: recorded, not a field of the installed release",
        "Args: decoding_type recorded ['A'], installed ['A', 'B']",
        "trtllm-serve serve: flag --old recorded, not accepted by the installed release",
        "trtllm-serve serve: flag --new accepted by the installed release, not recorded",
    ]
    assert regen.compare(recorded | {"llm_api": {"classes": {"Args": {**facts}}}},
                         {"llm_api": {"classes": {"Args": facts}}, "cli": recorded["cli"]}) == []


# ---- notes, --strict, recognition by content, and a run that checked nothing ------------------
def test_notes_are_printed_and_counted_apart_and_strict_fails_on_them(tmp_path):
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "gap.sh").write_text("trtllm-bench --model m latency --dataset d\n")
    proc = run_cli("gap.sh", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.split("\n")[0] == ("gap.sh:1:32: note: the TRT-LLM 1.1.0 snapshot does not record the flags "
                                          "of trtllm-bench latency: cannot check '--dataset'")
    assert proc.stdout.strip().endswith("no problems; 1 note (not checked; --strict fails on them)")
    proc = run_cli("gap.sh", "--strict", cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stderr.strip().endswith("no problems; 1 note (--strict: they fail the run)")


def test_hand_written_options_yaml_is_recognised_by_content(tmp_path):
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "eagle.yaml").write_text("speculative_config:\n  decoding_type: Eagle3\n  max_draft_len: 2\n")
    (tmp_path / "extra_llm_api_options.yaml").write_text("kv_cache_config:\n  enable_block_reuse: false\n")
    (tmp_path / "other.yaml").write_text("site_name: x\nnav: []\n")
    proc = run_cli("eagle.yaml", "extra_llm_api_options.yaml", cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stdout.startswith("eagle.yaml:2:18: 'Eagle3' is not a decoding_type in TRT-LLM 1.1.0")
    assert proc.stderr.strip().startswith("checked 2 files")
    proc = run_cli("other.yaml", cwd=tmp_path)
    assert proc.returncode == 1
    assert "other.yaml:0:0: no validator applies to this kind of file" in proc.stdout
    assert proc.stderr.strip().startswith("checked nothing (1 problem)")


def test_a_run_that_checked_nothing_says_so_and_fails(tmp_path):
    proc = run_cli(cwd=tmp_path)  # no checkout here: nothing to check
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert proc.stderr.strip().startswith("checked nothing (no file of a kind it checks was found)")
    assert "no problems" not in proc.stderr
