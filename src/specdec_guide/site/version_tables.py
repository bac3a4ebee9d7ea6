"""The per-track tables and tabs of the pages, rendered from the registries and snapshots at build time.

The pages carry three of the markers of :mod:`specdec_guide.markers` that these functions render
(the site hook, ``hooks.expand_markers``, calls them):

* :data:`MARKER` (versions page): :func:`markdown`, so the YAML spellings, draft-model key names and
  rule counts a reader sees are the ones ``specdec-guide validate`` checks against, never a hand-typed copy;
* :data:`TRACKS_MARKER` (versions page): :func:`tracks_table`, one row per track of ``schemas/tracks.yaml``;
* ``<!-- specdec-guide: track-tabs LANG PATH -->`` (any page): :func:`track_tabs`, one
  tab per track including ``snippets/PATH`` with ``{track}`` replaced by the track's id (for example
  ``llm_api/{track}/ngram.yaml``), so a new track gets its tab on every block of every page. The
  marker may be indented (inside another tab or an admonition): the hook indents the tabs with it.

Every per-track tab of every page is titled :attr:`Track.tab_label`, so mkdocs-material's linked
tabs (``content.tabs.link``) switch all of them together when a reader picks a release.
"""

from __future__ import annotations

from specdec_guide import markers
from specdec_guide.releases import methods as _methods
from specdec_guide.releases.tracks import Registry, Track

MARKER = markers.html_marker("llm-api-tables")
TRACKS_MARKER = markers.html_marker("tracks-table")
SNIPPETS = "snippets"
KIND_WORDS = {"requires": "required once the type is chosen", "backend": "backend support",
              "cuda_graph_batch_sizes": "cross-field", "exclusive": "cross-field", "when_nonneg": "cross-field",
              "requires_value": "cross-field", "not_less_than": "cross-field"}
FIELD_RULE_KEYS = ("gt", "ge", "lt", "le", "min_items", "items_gt", "choices_ci")


def _tracks(registry: Registry) -> list[Track]:
    return [t for t in registry.tracks if t.exists and t.has_part("llm_api")]


def method_rows(tracks: list[Track]) -> list[list[str]]:
    """One row per method of methods.yaml: on each track the ``decoding_type`` it is written with, or
    that the track does not have it (the method's ``tracks``)."""
    rows = []
    for m in _methods.load():
        cells = [("not on this track" if not m.exists_on(t.id) else f"`{m.spelling(t.id)}`" if m.speculative
                  else "no `speculative_config`") for t in tracks]
        rows.append([m.label, *cells])
    return rows


def decoding_rows(tracks: list[Track]) -> list[list[str]]:
    """One row per ``decoding_type`` spelling seen in any track (accepted or recorded as refused)."""
    spellings: list[str] = []
    for t in tracks:
        union = t.unions().get("SpeculativeConfig") or {}
        for s in list((union.get("from_dict_keys") or {})) + list((union.get("not_accepted") or {})):
            if s not in spellings:
                spellings.append(s)
    rows = []
    for s in spellings:
        row = [f"`{s}`"]
        for t in tracks:
            union = t.unions().get("SpeculativeConfig") or {}
            member = (union.get("from_dict_keys") or {}).get(s)
            refused = (union.get("not_accepted") or {}).get(s)
            row.append(f"accepted: `{member}`" if member else f"**refused**: {refused}" if refused else "refused")
        rows.append(row)
    return rows


def draft_key(track: Track) -> str:
    name = track.draft_key_field
    if name is None:
        return "not recorded"
    aliases = track.classes()["DraftTargetDecodingConfig"]["fields"][name].get("aliases") or []
    return f"`{name}`" + (f" (alias {', '.join(f'`{a}`' for a in aliases)})" if aliases else "")


def rule_count(track: Track) -> tuple[int, int]:
    """(class-level rules, field-level bounds/element/choice rules) recorded for the track.

    A base-class bound copied into every decoding config counts once: rules are counted by
    (field, enforcing function), not by the classes that inherit them."""
    cls_rules, field_rules = 0, set()
    for cls in track.classes().values():
        cls_rules += len(cls.get("rules") or [])
        for name, spec in (cls.get("fields") or {}).items():
            if isinstance(spec, dict) and any(k in spec for k in FIELD_RULE_KEYS):
                field_rules.add((name, spec.get("at")))
    return cls_rules, len(field_rules)


def requirement_cell(track: Track, cls_name: str) -> str:
    """What choosing a decoding class demands on a track: fields, backends, YAML at all."""
    cls = track.classes().get(cls_name)
    if cls is None:
        return "not in this release"
    parts = []
    for rule in cls.get("rules") or []:
        if rule.get("kind") == "requires":
            names = ", ".join(f"`{f}`" for f in rule.get("fields") or [])
            parts.append(f"needs {names}" + (" (> 0)" if rule.get("positive") else ""))
        elif rule.get("kind") == "backend":
            if rule.get("allowed"):
                parts.append("backend " + " or ".join(f"`{b}`" for b in rule["allowed"]))
            else:
                parts.append("not on " + ", ".join(f"`{b}`" for b in rule.get("refused") or []))
    if cls.get("yaml") is False:
        parts.append("Python API only")
    return "; ".join(parts) or "no extra requirement recorded"


def requirement_rows(tracks: list[Track]) -> list[list[str]]:
    names: list[str] = []
    for t in tracks:
        for m in (t.unions().get("SpeculativeConfig") or {}).get("members") or []:
            if m not in names:
                names.append(m)
    return [[f"`{n}`", *[requirement_cell(t, n) for t in tracks]] for n in names]


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def markdown(registry: Registry | None = None) -> str:
    tracks = _tracks(registry or Registry())
    head = ["`decoding_type` in YAML"] + [f"TensorRT-LLM {t.id}" for t in tracks]
    out = ["### The guide's methods on each track\n",
           "From the guide's methods registry (`methods.yaml`): which of its methods each track has (`repo render "
           "--trtllm` and the CPU engine refuse a method on a track without it) and the `decoding_type` written "
           "for it.\n",
           _table(["Method", *[f"TensorRT-LLM {t.id}" for t in tracks]], method_rows(tracks))]
    out += ["### `decoding_type` spellings\n",
           "Read from each release's `DecodingBaseConfig.from_dict` table, which turns a YAML "
           "`speculative_config` into a config object.\n", _table(head, decoding_rows(tracks))]
    out += ["### What choosing a decoding type demands\n",
            "From each release's construction-time checks (`validate_speculative_config`, `supports_backend`).\n",
            _table(["Config class", *[f"TensorRT-LLM {t.id}" for t in tracks]], requirement_rows(tracks))]
    facts = []
    facts.append(["Draft-model key"] + [draft_key(t) for t in tracks])
    facts.append(["`TorchLlmArgs` fields (YAML keys and `LLM()` keywords)"] +
                 [str(len((t.classes().get("TorchLlmArgs") or {}).get("fields") or {})) for t in tracks])
    facts.append(["Configuration classes described"] + [str(len(t.classes())) for t in tracks])
    counts = [rule_count(t) for t in tracks]
    facts.append(["Construction-time rules checked"] +
                  [f"{c} cross-field/backend/required + {f} bounds" for c, f in counts])
    src = []
    for t in tracks:
        s = (t.llm_api.get("sources") or {}).get("llm_args") or {}
        commit = str(s.get("commit", ""))[:7]
        src.append(f"[`{s.get('path', 'llm_args')}`]({s.get('url', '')}) (gh-pages `{commit}`)" if s.get("url") else "not recorded")
    facts.append(["Source read"] + src)
    out += ["### What each snapshot records\n", _table(["", *[f"TensorRT-LLM {t.id}" for t in tracks]], facts)]
    return "\n".join(out)


def tracks_table(registry: Registry | None = None) -> str:
    """One row per pinned track: release, container (the ``latest`` alias's: and later tags), engine workflow."""
    rows = []
    for t in (registry or Registry()).tracks:
        newest = "latest" in t.aliases
        container = f"`{t.container}` (Triton {t.triton_version})" + (" and later tags" if newest else "")
        rows.append([t.id + (" (newest stable)" if newest else ""), t.trtllm_version, container,
                     "still shipped" if t.engine_backend else "not shipped"])
    return _table(["Track", "TensorRT-LLM", "Triton container", "Engine workflow (`trtllm-build`)"], rows)


def tab_files(path: str, registry: Registry | None = None) -> list[tuple[Track, str]]:
    """``(track, repository-relative file)`` for every track: what a marker's tab for it includes."""
    return [(t, f"{SNIPPETS}/{path.replace('{track}', t.id)}") for t in (registry or Registry()).tracks]


def track_tabs(lang: str, path: str, root=None, registry: Registry | None = None) -> str:
    """A tab per track that has ``snippets/<path with {track}>``, each including that file."""
    from pathlib import Path

    root = Path(root) if root else Path(__file__).resolve().parents[3]
    out = []
    for t, rel in tab_files(path, registry):
        if (root / rel).is_file():
            out.append(f'=== "{t.tab_label}"\n\n    ```{lang}\n    --8<-- "{rel}"\n    ```\n')
    return "\n".join(out)


def marker_paths(page_markdown: str) -> list[str]:
    """The ``snippets/``-relative path templates (with ``{track}``) of a page's track-tabs markers."""
    return [m.args["path"] for m in markers.find(page_markdown, "track-tabs", "page")]

