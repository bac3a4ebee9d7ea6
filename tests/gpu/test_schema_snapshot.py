"""GPU tier: the recorded schema snapshot of the installed TensorRT-LLM matches the release.

scripts/regen_schema.py regenerates the llm_api/cli facts from the installed package (pydantic
fields, decoding_type spellings, module exports, Drafter methods, CLI flags); any difference
with src/specdec_guide/schemas/<version>/ fails, listing every difference.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
import yaml

from specdec_guide.gpu_tier import SKIP_REASON, missing

REPO = Path(__file__).resolve().parents[2]


pytestmark = [pytest.mark.gpu, pytest.mark.skipif(bool(missing()), reason=SKIP_REASON)]


def _regen_module():
    spec = importlib.util.spec_from_file_location("regen_schema", REPO / "scripts" / "regen_schema.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["regen_schema"] = module
    spec.loader.exec_module(module)
    return module


def test_recorded_snapshot_matches_installed_release():
    import tensorrt_llm

    from specdec_guide.releases.tracks import Registry

    version = str(tensorrt_llm.__version__)
    registry = Registry()
    track = next((t for t in registry.tracks if t.trtllm_version == version or t.id == version), None)
    assert track is not None, f"no track in tracks.yaml records tensorrt_llm {version}: add its snapshot"
    regen = _regen_module()
    installed = regen.regenerate(like=track.folder)
    recorded = {part: yaml.safe_load((track.folder / f"{part}.yaml").read_text()) or {}
                for part in ("llm_api", "cli")}
    diffs = regen.compare(recorded, installed)
    assert not diffs, (f"snapshot {track.folder.relative_to(REPO)} differs from the installed tensorrt_llm "
                       f"{version} ({len(diffs)}); rerun scripts/regen_schema.py:\n  " + "\n  ".join(diffs))
