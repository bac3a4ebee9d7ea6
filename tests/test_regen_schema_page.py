"""scripts/regen_schema.py --page: the parser, on a tiny page of our own in the same rendered
form (a Sphinx ``_modules`` page), and the real comparison where a copy of the release page is
provided. The release pages are upstream code and are not stored here."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest
import yaml
from registry import tracks

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("regen_schema", ROOT / "scripts" / "regen_schema.py")
regen = importlib.util.module_from_spec(spec)
spec.loader.exec_module(regen)


def test_page_parser_reads_fields_types_and_decoding_table():
    facts = regen.page_facts((ROOT / "tests" / "fixtures" / "regen" / "mini_llm_args.html").read_text())
    toy = facts["classes"]["ToyDecodingConfig"]
    assert list(toy) == ["max_draft_len", "toy_size", "policy", "mode", "path"]  # inherited first; no ClassVar/private
    assert toy["max_draft_len"] == {"type": "int | null", "default": None}
    assert toy["toy_size"] == {"type": "int", "default": 2, "gt": 0}
    assert toy["policy"] == {"type": "literal[FAST, SAFE]"}  # an enum member default is not a literal: left out
    assert toy["mode"] == {"type": "literal[a, b]", "default": "a"}
    assert toy["path"] == {"type": "str", "required": True}
    assert facts["from_dict_keys"] == {"Toy": "ToyDecodingConfig"}


def test_page_check_reports_each_kind_of_difference():
    facts = regen.page_facts((ROOT / "tests" / "fixtures" / "regen" / "mini_llm_args.html").read_text())
    recorded = {"classes": {"ToyDecodingConfig": {"source": "llm_args", "fields": {
                    "max_draft_len": {"type": "int | null", "default": None},
                    "toy_size": {"type": "float", "default": 3},
                    "policy": {"type": "literal[FAST, SAFE]"}, "mode": {"type": "literal[a, b]", "default": "a"},
                    "path": {"type": "str", "required": True}, "toy_len": {"type": "int"}}}},
                "unions": {"SpeculativeConfig": {"from_dict_keys": {"Toy": "ToyDecodingConfig", "Old": "X"}}}}
    assert regen.check_page(recorded, facts) == [
        "ToyDecodingConfig.toy_len: recorded, not a field on the page",
        "ToyDecodingConfig.toy_size: type recorded 'float', page 'int'",
        "ToyDecodingConfig.toy_size: default recorded 3, page 2",
        "ToyDecodingConfig.toy_size: gt recorded None, page 0",
        "decoding_type table: recorded {'Toy': 'ToyDecodingConfig', 'Old': 'X'}, page {'Toy': 'ToyDecodingConfig'}",
    ]


@pytest.mark.parametrize("track", tracks())
def test_snapshot_matches_release_page(track):
    env = f"SPECDEC_LLM_ARGS_PAGE_{track.replace('.', '_')}"
    page = os.environ.get(env)
    if not page:
        pytest.skip(f"needs a saved copy of the {track} llm_args.html release page in ${env} "
                    "(not stored here: upstream code; this machine has no network)")
    snap = yaml.safe_load((ROOT / "src" / "specdec_guide" / "schemas" / track / "llm_api.yaml").read_text())
    assert regen.check_page(snap, regen.page_facts(Path(page).read_text())) == []


def test_compare_reads_per_family_script_variants():
    """convert_checkpoint.py is recorded as one entry per model family: the GPU-tier comparison
    must compare each family's flags, not report the script as missing."""
    recorded = {"cli": {"commands": {"convert_checkpoint.py": {"variants": {
        "llama": {"flags": ["--model_dir", "--dtype"]}, "eagle": {"flags": ["--model_dir"]}}}}}}
    installed = {"cli": {"commands": {"convert_checkpoint.py": {"variants": {
        "llama": {"flags": ["--model_dir", "--dtype", "--tp_size"]}}}}}}
    assert regen.compare(recorded, installed) == [
        "convert_checkpoint.py (llama): flag --tp_size accepted by the installed release, not recorded",
        "command convert_checkpoint.py (eagle): recorded, not found in the installed release",
    ]
