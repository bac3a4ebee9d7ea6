"""The container-to-release map of the versions page, rendered from ``schemas/containers.yaml``.

Which TensorRT-LLM each Triton ``-trtllm-python-py3`` container ships, and so which of this
guide's tracks (``schemas/tracks.yaml``) covers it. The data is what each tensorrtllm_backend
branch's Dockerfile pins, beside what Triton's own compatibility matrix says the published image
has (``matrix_tensorrt_llm``; a ``matrix_note`` where the two differ, and "Covered by" follows the
matrix); the rendered table is the snippet ``snippets/versions/container_map.md``, which the page
includes and ``tests/test_container_map.py`` keeps equal to this render.

    python -m specdec_guide.releases.containers   # print the table
    make regen WHAT=container-map                 # refresh the snippet (specdec_guide.regen)
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

from specdec_guide.diagnostics import UserError, load_data_yaml

DATA = Path(__file__).resolve().parent.parent / "schemas" / "containers.yaml"
SNIPPET = Path("snippets/versions/container_map.md")
REPO = "triton-inference-server/tensorrtllm_backend"
DOCKERFILE = "dockerfile/Dockerfile.triton.trt_llm_backend"


def load(path: Path = DATA) -> list[dict]:
    try:
        data = load_data_yaml(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as err:
        raise UserError(f"{path}: cannot read the container map: {err}") from None
    rows = data.get("containers")
    if not isinstance(rows, list) or not rows:
        raise UserError(f"{path}: no `containers:` list")
    for i, row in enumerate(rows):
        missing = [k for k in ("tag", "branch", "commit", "tensorrt_llm", "matrix_tensorrt_llm", "app_files_from")
                   if not row.get(k)]
        if missing:
            raise UserError(f"{path}: containers[{i}] lacks {', '.join(missing)}")
        differs = str(row["matrix_tensorrt_llm"]) != str(row["tensorrt_llm"])
        if differs != bool(row.get("matrix_note")):
            raise UserError(f"{path}: containers[{i}] ({row['tag']}): " + (
                "Triton's matrix and the Dockerfile differ: say where and why in matrix_note" if differs
                else "matrix_note on a row where Triton's matrix and the Dockerfile agree"))
    return rows


def matrix_source(path: Path = DATA) -> dict:
    """Where the matrix column was read: Triton's compatibility.md at a recorded commit."""
    data = load_data_yaml(path.read_text(encoding="utf-8")) or {}
    src = data.get("matrix") or {}
    if not all(src.get(k) for k in ("repo", "path", "branch", "commit")) or len(str(src["commit"])) != 40:
        raise UserError(f"{path}: `matrix:` needs repo, path, branch and a 40-hex commit")
    return src


def track_of(version: str, tracks: dict[str, str]) -> str:
    """The guide's track for a TensorRT-LLM version, or what it is when no track covers it."""
    if version in tracks:
        return f"track {tracks[version]}"
    if "rc" in version:
        return "a release candidate: no track"
    return "an older release: no track"


def _tracks() -> dict[str, str]:
    """TensorRT-LLM version -> track id, from the track registry (tracks.yaml beside the map)."""
    from specdec_guide.releases.tracks import Registry

    return {track.trtllm_version: track.id for track in Registry(DATA.parent).tracks}


def markdown(rows: list[dict] | None = None, tracks: dict[str, str] | None = None,
             matrix: dict | None = None) -> str:
    rows = load() if rows is None else rows
    tracks = _tracks() if tracks is None else tracks
    matrix = matrix_source() if matrix is None else matrix
    lines = ["| Container tag (`nvcr.io/nvidia/tritonserver:`) | TensorRT-LLM, Triton's matrix | "
             "TensorRT-LLM, Dockerfile | `/app` files from branch | Covered by | Dockerfile |",
             "| --- | --- | --- | --- | --- | --- |"]
    notes = []
    for r in rows:
        src = f"[`{r['branch']}` @ `{r['commit'][:8]}`](https://github.com/{REPO}/blob/{r['commit']}/{DOCKERFILE})"
        shipped, pinned = str(r["matrix_tensorrt_llm"]), str(r["tensorrt_llm"])
        covered = track_of(shipped, tracks)  # the published image, as Triton's matrix gives it
        if r.get("note"):
            covered += f" ({r['note']})"
        if shipped != pinned:
            covered += " (the two columns differ: see below the table)"
            notes.append(f"- `{r['tag']}`: {' '.join(str(r['matrix_note']).split())}.")
        lines.append(f"| `{r['tag']}` | {shipped} | {pinned} | `{r['app_files_from']}` | {covered} | {src} |")
    url = f"https://github.com/{matrix['repo']}/blob/{matrix['commit']}/{matrix['path']}"
    out = "\n".join(lines) + "\n\n"
    out += (f"Triton's matrix: [`{matrix['path']}`, branch `{matrix['branch']}` @ `{matrix['commit'][:8]}`]({url}). "
            "Where it and the Dockerfile differ:\n\n" if notes else
            f"Triton's matrix: [`{matrix['path']}`, branch `{matrix['branch']}` @ `{matrix['commit'][:8]}`]({url}).\n")
    return out + ("\n".join(notes) + "\n" if notes else "")


def main(argv: list[str]) -> int:
    sys.stdout.write(markdown())
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
