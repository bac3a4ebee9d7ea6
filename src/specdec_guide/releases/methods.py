"""The methods registry: ``schemas/methods.yaml``, the one list of the methods this guide teaches.

Each method names the tracks it exists on (``tracks:``, ids of ``schemas/tracks.yaml``): a
method a release lacks, or one that only a newer release has, is listed only where it exists, and
:func:`require` refuses it elsewhere. Everything that lists methods reads it from here: ``repo render --method`` (:mod:`specdec_guide.templates`), the
CPU engine's runnable ``decoding_type`` list (:mod:`specdec_guide.engine.config`), ``doctor``, the versions page
and the tests. The tracks have their own registry, ``schemas/tracks.yaml``
(:class:`specdec_guide.releases.tracks.Registry`). Only PyYAML is imported: the CLI loads this on
every start.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from specdec_guide.diagnostics import UserError, load_yaml_file
from specdec_guide.releases.tracks import Registry

METHODS_PATH = Path(__file__).resolve().parent.parent / "schemas" / "methods.yaml"
NEEDS = (None, "draft_model", "drafter")


@dataclass(frozen=True)
class Method:
    id: str
    label: str
    decoding_type: str | None  # None: no speculation (the baseline)
    template: str
    snippet: str | None
    cpu_engine: bool
    trtllm_model: bool
    needs: str | None
    teaches: str
    tracks: tuple[str, ...] = ()  # the track ids it exists on
    decoding_type_by_track: dict = field(default_factory=dict, hash=False, compare=False)
    cost: dict | None = field(default=None, hash=False, compare=False)  # read by specdec_guide.payoff

    @property
    def speculative(self) -> bool:
        """It drafts (every method but the baseline)."""
        return self.decoding_type is not None

    @property
    def gpu_only(self) -> bool:
        """Nothing but TensorRT-LLM on a GPU runs it: the CPU engine refuses it."""
        return not self.cpu_engine

    def exists_on(self, track_id: str) -> bool:
        """Whether the method is available on the track (a track id, as methods.yaml lists them)."""
        return str(track_id) in self.tracks

    def spelling(self, track_id: str) -> str | None:
        """The ``decoding_type`` to write for this method on a track."""
        return self.decoding_type_by_track.get(str(track_id), self.decoding_type)


def _need(entry: dict, key: str, kind: type, where: str):
    if key not in entry:
        raise UserError(f"{where}: missing key '{key}'")
    value = entry[key]
    if value is not None and not isinstance(value, kind):
        raise UserError(f"{where}: '{key}' must be {kind.__name__}, not {value!r}")
    return value


def _tracks(entry: dict, where: str) -> tuple[str, ...]:
    """``tracks:``: a non-empty list of track ids, each a string (``"1.2"`` unquoted would be a number)."""
    value = _need(entry, "tracks", list, where)
    if not value or not all(isinstance(t, str) and t for t in value):
        raise UserError(f"{where}: 'tracks' must be a non-empty list of quoted track ids "
                        f"(\"1.1.0\"), not {value!r}")
    if len(set(value)) != len(value):
        raise UserError(f"{where}: 'tracks' names a track twice: {value!r}")
    return tuple(value)


def _cost(cost, where: str) -> dict | None:
    """The ``cost`` block (format: schemas/README.md and methods.yaml's header), checked."""
    if cost is None:
        return None
    forms = cost.get("forms") if isinstance(cost, dict) else None
    if not isinstance(forms, list) or not forms:
        raise UserError(f"{where}: 'cost' needs a non-empty list 'forms'")
    for f in forms:
        if not (isinstance(f, dict) and isinstance(f.get("id"), str) and isinstance(f.get("label"), str)
                and isinstance(f.get("overlap_scheduler"), bool)):
            raise UserError(f"{where}: each of cost.forms needs id, label and overlap_scheduler (true or false)")
        if f["overlap_scheduler"] is False and f.get("why") not in ("release", "guide_config"):
            raise UserError(f"{where}: a form without the overlap scheduler says why: release or guide_config")
    draft = cost.get("draft_cost")
    if not (draft is None or draft == "draft_pass" or (isinstance(draft, (int, float)) and not isinstance(draft, bool)
                                                       and draft >= 0)):
        raise UserError(f"{where}: cost.draft_cost must be a number >= 0, draft_pass or null, not {draft!r}")
    if not isinstance(cost.get("draft_cost_source"), str):
        raise UserError(f"{where}: cost.draft_cost_source must say where the draft cost comes from")
    return cost


def load(path: Path | None = None) -> tuple[Method, ...]:
    """Every method of ``methods.yaml`` in its order (a :class:`UserError` names a bad entry)."""
    path = Path(path) if path else METHODS_PATH
    st = path.stat() if path.is_file() else None
    return _load(str(path.resolve()), (st.st_mtime_ns, st.st_size) if st else None)


@lru_cache(maxsize=4)
def _load(path_str: str, _stamp) -> tuple[Method, ...]:
    path = Path(path_str)
    data = load_yaml_file(path, "the methods registry") or {}
    entries = data.get("methods") if isinstance(data, dict) else None
    if not isinstance(entries, list) or not entries:
        raise UserError(f"{path}: needs a non-empty list 'methods'")
    out: list[Method] = []
    for i, entry in enumerate(entries):
        where = f"{path}: methods[{i}]"
        if not isinstance(entry, dict):
            raise UserError(f"{where}: must be a mapping")
        mid = _need(entry, "id", str, where)
        where = f"{path}: method {mid}"
        needs = _need(entry, "needs", str, where)
        if needs not in NEEDS:
            raise UserError(f"{where}: 'needs' must be one of {', '.join(str(n) for n in NEEDS)}, not {needs!r}")
        out.append(Method(
            id=mid, label=_need(entry, "label", str, where), decoding_type=_need(entry, "decoding_type", str, where),
            template=_need(entry, "template", str, where), snippet=_need(entry, "snippet", str, where),
            cpu_engine=bool(_need(entry, "cpu_engine", bool, where)),
            trtllm_model=bool(_need(entry, "trtllm_model", bool, where)), needs=needs,
            teaches=_need(entry, "teaches", str, where), tracks=_tracks(entry, where),
            decoding_type_by_track={str(k): str(v) for k, v in (entry.get("decoding_type_by_track") or {}).items()},
            cost=_cost(entry.get("cost"), where),
        ))
    ids = [m.id for m in out]
    if len(set(ids)) != len(ids):
        raise UserError(f"{path}: a method id appears twice: {sorted({i for i in ids if ids.count(i) > 1})}")
    return tuple(out)


def ids() -> tuple[str, ...]:
    return tuple(m.id for m in load())


def get(method_id: str) -> Method:
    for m in load():
        if m.id == method_id:
            return m
    raise UserError(f"unknown method {method_id!r}; choose one of: {', '.join(ids())}")


def _track_id(track: str | None) -> str:
    """The id of a track named by id or alias (``None``: the default track); a UserError if unknown."""
    return Registry().resolve(track).id


def on_track(track: str | None = None) -> tuple[Method, ...]:
    """The methods available on a track (id or alias; ``None``: the default), in methods.yaml's order."""
    tid = _track_id(track)
    return tuple(m for m in load() if m.exists_on(tid))


def require(method_id: str, track: str | None = None) -> Method:
    """The method, if it exists on the track (id or alias; ``None``: the default); else a UserError."""
    m, tid = get(method_id), _track_id(track)
    if not m.exists_on(tid):
        raise UserError(f"method {method_id} is not available on track {tid} (methods.yaml); "
                        f"it is on {', '.join(m.tracks)}")
    return m


def cpu_ids(track: str | None = None) -> tuple[str, ...]:
    """The methods the CPU engine runs on a track (``cpu_engine: true``), in methods.yaml's order, baseline first."""
    return tuple(m.id for m in on_track(track) if m.cpu_engine)


def render_arguments(method_id: str, *, draft_model=None, drafter=None) -> dict:
    """What ``templates.render`` needs for the method besides the target (its ``needs``): ``{}``,
    ``{"draft_model": ...}`` or ``{"drafter": "module:Class"}``, from what the caller offers."""
    need = get(method_id).needs
    if need is None:
        return {}
    offered = {"draft_model": draft_model, "drafter": drafter}.get(need)
    if offered is None:
        raise UserError(f"method {method_id} needs {need}; none was given")
    return {need: str(offered)}


def cpu_decoding_types(track: str | None = None) -> tuple[str, ...]:
    """The ``decoding_type`` spellings the CPU engine runs on a track (``None``: the default track)."""
    tid = _track_id(track)
    return tuple(dict.fromkeys(m.spelling(tid) for m in on_track(tid) if m.cpu_engine and m.speculative))


def spellings(method_id: str) -> tuple[str, ...]:
    """Every ``decoding_type`` spelling the registry gives a method, over the tracks it exists on."""
    m = get(method_id)
    return tuple(dict.fromkeys(s for s in (m.spelling(t) for t in m.tracks) if s))
