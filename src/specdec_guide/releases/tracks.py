"""Loads ``schemas/tracks.yaml`` and the per-track snapshot files (format: schemas/README.md).

A :class:`Track` reads its ``llm_api.yaml``, ``cli.yaml`` and ``triton.yaml`` on first use, so
checking a shell snippet never parses the LLM API facts. ``SPECDEC_GUIDE_SCHEMA_DIR`` points the
whole tool at another schema folder (the tests use small fixture snapshots).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from specdec_guide.diagnostics import UserError, load_data_yaml
from specdec_guide.releases.behaviour import Behaviour, load_folder

SCHEMA_DIR_ENV = "SPECDEC_GUIDE_SCHEMA_DIR"
PARTS = ("llm_api", "cli", "triton")


def default_schema_dir() -> Path:
    env = os.environ.get(SCHEMA_DIR_ENV)
    if env:
        return Path(env)
    return Path(__file__).resolve().parent.parent / "schemas"


#: Parsed snapshot files by (path, mtime, size): every ``Registry()`` (one per validate run, doctor
#: call or test) reads the same megabyte of YAML, which is most of a small run's time. The data is
#: read-only for every caller.
_PARSED: dict[tuple[str, int, int], dict] = {}


def _load_yaml(path: Path) -> dict:
    try:
        st = path.stat()
        key = (str(path.resolve()), st.st_mtime_ns, st.st_size)
    except OSError:
        key = None
    if key in _PARSED:
        return _PARSED[key]
    data = _parse_yaml(path)
    if key is not None:
        _PARSED[key] = data
    return data


def _parse_yaml(path: Path) -> dict:
    try:
        data = load_data_yaml(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as err:
        raise UserError(f"cannot read schema snapshot {path}: {err}") from None
    except yaml.YAMLError as err:
        raise UserError(f"schema snapshot {path} is not valid YAML: {err}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise UserError(f"schema snapshot {path} must be a mapping at the top")
    return data


@dataclass
class Track:
    id: str
    aliases: list[str]
    folder: Path
    engine_backend: bool = False
    label: str = ""
    container: str = ""
    trtllm_version: str = ""
    triton_version: str = ""
    docs_pages: dict = field(default_factory=dict)  # {commit, built_from}: the release's gh-pages docs
    _parts: dict = field(default_factory=dict, repr=False)

    @property
    def exists(self) -> bool:
        return self.folder.is_dir()

    @property
    def container_tag(self) -> str:
        """``25.12`` for ``nvcr.io/nvidia/tritonserver:25.12-trtllm-python-py3`` (empty without a container)."""
        return self.container.rsplit(":", 1)[-1].split("-", 1)[0] if ":" in self.container else ""

    @property
    def draft_key_field(self) -> str | None:
        """The DraftTargetDecodingConfig field that names the draft model in this release
        (``speculative_model`` or ``speculative_model_dir``), or None when the snapshot has neither."""
        fields = (self.classes().get("DraftTargetDecodingConfig") or {}).get("fields") or {}
        return next((name for name in ("speculative_model", "speculative_model_dir") if name in fields), None)

    @property
    def tab_label(self) -> str:
        """The title of this track's tab on every page (linked tabs switch on equal titles)."""
        return f"TensorRT-LLM {self.id} (Triton {self.container_tag})" if self.container_tag else f"TensorRT-LLM {self.id}"

    def has_part(self, part: str) -> bool:
        return (self.folder / f"{part}.yaml").is_file()

    def part(self, part: str) -> dict:
        """The parsed ``<part>.yaml``; ``{}`` when this track has no such file."""
        if part not in self._parts:
            path = self.folder / f"{part}.yaml"
            self._parts[part] = _load_yaml(path) if path.is_file() else {}
        return self._parts[part]

    @property
    def llm_api(self) -> dict:
        return self.part("llm_api")

    @property
    def cli(self) -> dict:
        return self.part("cli")

    @property
    def triton(self) -> dict:
        return self.part("triton")

    # ---- LLM API lookups -------------------------------------------------------------
    def classes(self) -> dict:
        return self.llm_api.get("classes") or {}

    def unions(self) -> dict:
        return self.llm_api.get("unions") or {}

    def modules(self) -> dict:
        return self.llm_api.get("modules") or {}

    def interfaces(self) -> dict:
        return self.llm_api.get("interfaces") or {}

    @property
    def behaviour(self) -> Behaviour:
        """The track's behaviour record (``behaviour/*.yaml``): what the release does, by fact id."""
        return load_folder(self.folder / "behaviour", self.id)

    def decoding_spellings(self, union: str = "SpeculativeConfig") -> dict[str, str]:
        """spelling -> member class name, for the union's discriminator."""
        spec = self.unions().get(union) or {}
        out: dict[str, str] = {}
        for member in spec.get("members") or []:
            for spelling in (self.classes().get(member) or {}).get("decoding_type") or []:
                out.setdefault(str(spelling), member)
        return out

    def __str__(self) -> str:
        return self.id


class Registry:
    """Every track of ``tracks.yaml``; resolves ids and aliases."""

    def __init__(self, schema_dir: Path | None = None):
        self.schema_dir = Path(schema_dir) if schema_dir else default_schema_dir()
        data = _load_yaml(self.schema_dir / "tracks.yaml") if (self.schema_dir / "tracks.yaml").is_file() else None
        if not data:
            raise UserError(f"no tracks.yaml in {self.schema_dir}")
        self.tracks: list[Track] = []
        for entry in data.get("tracks") or []:
            tid = str(entry["id"])
            self.tracks.append(
                Track(
                    id=tid,
                    aliases=[str(a) for a in entry.get("aliases") or []],
                    folder=self.schema_dir / str(entry.get("folder", tid)),
                    engine_backend=bool(entry.get("engine_backend", False)),
                    label=str(entry.get("label", "")),
                    container=str(entry.get("container", "")),
                    trtllm_version=str(entry.get("trtllm_version", tid)),
                    triton_version=str(entry.get("triton_version", "")),
                    docs_pages=dict(entry.get("docs_pages") or {}),
                )
            )
        if not self.tracks:
            raise UserError(f"{self.schema_dir / 'tracks.yaml'} lists no tracks")
        self.default_name = str(data.get("default", self.tracks[0].id))

    def names(self) -> list[str]:
        out = []
        for t in self.tracks:
            out.append(t.id)
            out.extend(t.aliases)
        return out

    def find(self, name: str) -> Track | None:
        for t in self.tracks:
            if name == t.id or name in t.aliases:
                return t
        return None

    def resolve(self, name: str | None) -> Track:
        """The track for an id or alias (``None``: the default); a :class:`UserError` if unknown."""
        track = self.find(str(name) if name is not None else self.default_name)
        if track is None:
            raise UserError(f"unknown TRT-LLM track {name!r} (known: {', '.join(self.names())})")
        if not track.exists:
            raise UserError(f"TRT-LLM track {track.id}: no snapshot folder {track.folder}")
        return track

    def others(self, track: Track) -> list[Track]:
        """The other tracks that have a snapshot folder, for "it exists in X" hints."""
        return [t for t in self.tracks if t is not track and t.exists]
