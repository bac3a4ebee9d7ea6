"""Is this machine able to run the GPU tier? ``make test-gpu`` asks before it runs anything.

The GPU tier executes the notebooks that need TensorRT-LLM itself. On a machine without an
NVIDIA GPU or without ``tensorrt_llm`` it must fail loudly, never pass with nothing run.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys

SKIP_REASON = "needs an NVIDIA GPU and tensorrt_llm"


def missing() -> list[str]:
    """What the GPU tier lacks here; empty when it can run."""
    lacks = []
    if not _has_nvidia_gpu():
        lacks.append("an NVIDIA GPU (nvidia-smi lists none)")
    if importlib.util.find_spec("tensorrt_llm") is None:
        lacks.append("the tensorrt_llm package (use the TensorRT-LLM or Triton TRT-LLM container)")
    return lacks


def _has_nvidia_gpu() -> bool:
    smi = shutil.which("nvidia-smi")
    if not smi:
        return False
    try:
        out = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0 and "GPU" in out.stdout


def gpu_name_and_driver(smi: str = "nvidia-smi") -> tuple[str, str]:
    """The first GPU's name and driver version from nvidia-smi, for a run's provenance stamp
    (``("unknown", "unknown")`` where nvidia-smi is missing or says nothing)."""
    try:
        out = subprocess.run([smi, "--query-gpu=name,driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30)
        if out.returncode == 0 and out.stdout.strip():
            name, driver = (p.strip() for p in out.stdout.strip().splitlines()[0].split(",", 1))
            return name, driver
    except (OSError, subprocess.TimeoutExpired, ValueError):
        pass
    return "unknown", "unknown"


def main() -> int:
    lacks = missing()
    if lacks:
        print("The GPU tier cannot run on this machine: it needs " + " and ".join(lacks) + ".", file=sys.stderr)
        return 1
    print("GPU tier: NVIDIA GPU and tensorrt_llm found.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
