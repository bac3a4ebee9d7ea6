"""The tables of the versions page, rendered from the LLM-API schema snapshots at build time.

``docs/speculative_decoding/versions.md`` carries the marker :data:`MARKER`; the site hook
replaces it with :func:`markdown`, so the YAML spellings, draft-model key names and rule counts
a reader sees are the ones ``specdec-guide validate`` checks against, never a hand-typed copy.
"""

from __future__ import annotations

from specdec_guide.validate.schema import Registry, Track

MARKER = "<!-- specdec-guide: llm-api-tables -->"
KIND_WORDS = {"requires": "required once the type is chosen", "backend": "backend support",
              "cuda_graph_batch_sizes": "cross-field", "exclusive": "cross-field", "when_nonneg": "cross-field",
              "requires_value": "cross-field", "not_less_than": "cross-field"}
FIELD_RULE_KEYS = ("gt", "ge", "lt", "le", "min_items", "items_gt", "choices_ci")


def _tracks(registry: Registry) -> list[Track]:
    return [t for t in registry.tracks if t.exists and t.has_part("llm_api")]


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
    fields = ((track.classes().get("DraftTargetDecodingConfig") or {}).get("fields") or {})
    for name in ("speculative_model", "speculative_model_dir"):
        if name in fields:
            aliases = fields[name].get("aliases") or []
            return f"`{name}`" + (f" (alias {', '.join(f'`{a}`' for a in aliases)})" if aliases else "")
    return "not recorded"


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
    out = ["### `decoding_type` spellings\n",
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


def expand(page_markdown: str, registry: Registry | None = None) -> str:
    """The page with :data:`MARKER` replaced by the tables (unchanged when the marker is absent)."""
    return page_markdown.replace(MARKER, markdown(registry)) if MARKER in page_markdown else page_markdown
