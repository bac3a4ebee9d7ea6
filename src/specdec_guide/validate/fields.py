"""Checks a :class:`~values.PVal` against the classes and unions of a track's ``llm_api.yaml``.

Findings are ``(line, col, message)`` tuples; the caller adds the path. The checker is lax where
pydantic is lax (``"4"`` for an int) and strict where TRT-LLM is strict (``extra: forbid``), so a
finding is something the real release would also reject.
"""

from __future__ import annotations

import difflib

from specdec_guide.validate.behaviour_rules import hub_id_findings
from specdec_guide.validate.rules import class_rules, field_rules
from specdec_guide.releases.tracks import Registry, Track
from specdec_guide.validate.typegrammar import describe, parse_type
from specdec_guide.validate.values import PVal

Finding = tuple  # (line, col, message)


def field_index(cls: dict) -> dict[str, tuple[str, dict]]:
    """name or alias -> (canonical name, field spec)."""
    out: dict[str, tuple[str, dict]] = {}
    for name, spec in (cls.get("fields") or {}).items():
        spec = spec if isinstance(spec, dict) else {"type": spec}
        out[str(name)] = (str(name), spec)
        for alias in spec.get("aliases") or []:
            out.setdefault(str(alias), (str(name), spec))
    return out


def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


class FieldChecker:
    def __init__(self, track: Track, registry: Registry | None, yaml_mode: bool):
        self.track = track
        self.registry = registry
        self.yaml_mode = yaml_mode
        self.call_label = ""  # " for LLM()" while checking a call's keywords
        # The backend the LLM-args class runs on ("pytorch", "tensorrt"), for the backend rules of
        # decoding configs; None where the file does not say (a config built on its own).
        self.backend: str | None = None

    # ---- hints ---------------------------------------------------------------------
    def _elsewhere(self, pred) -> str:
        """"; it exists in 1.2.1" when another track satisfies ``pred(track)``."""
        if not self.registry:
            return ""
        hits = [t.id for t in self.registry.others(self.track) if pred(t)]
        return f"; it exists in {', '.join(hits)}" if hits else ""

    @staticmethod
    def _suggest(word: str, candidates) -> str:
        close = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.75)
        return f" (did you mean '{close[0]}'?)" if close else ""

    # ---- classes -------------------------------------------------------------------
    def check_class(self, cls_name: str, v: PVal, where: str = "", skip=(), require: bool = True) -> list[Finding]:
        cls = self.track.classes().get(cls_name)
        if cls is None or v.kind == "opaque":
            return []
        if v.tag.startswith("call:") and where:
            # A config built by its own call inside another call: its keywords were checked at that
            # call; only what depends on the outer call (the backend) is left to check here.
            return class_rules(self, cls_name, cls, v, where, require=False, only=("backend",))
        if v.kind != "map":
            return [(v.line, v.col, f"{where or cls_name} must be a mapping ({cls_name}), got {v.show()}")]
        index = field_index(cls)
        out: list[Finding] = []
        seen: set[str] = set()
        for key, kl, kc, val in v.entries:
            if key in skip:
                continue
            hit = index.get(key)
            if hit is None:
                if str(cls.get("extra", "forbid")) == "forbid":
                    hint = self._elsewhere(lambda t, k=key: k in field_index(t.classes().get(cls_name) or {}))
                    noun = "key" if self.yaml_mode else "keyword"
                    label = self.call_label if not where else ""
                    out.append((kl, kc, f"unknown {noun} '{_join(where, key)}'{label}: {cls_name} in TRT-LLM "
                                        f"{self.track.id} has no such field{self._suggest(key, index)}{hint}"))
                continue
            canonical, spec = hit
            seen.add(canonical)
            out.extend(self.check_field(cls_name, canonical, spec, key, kl, kc, val, _join(where, key)))
        if require:
            for name, (canonical, spec) in index.items():
                if name == canonical and spec.get("required") and canonical not in seen and canonical not in skip:
                    why = ""
                    if self.yaml_mode and spec.get("yaml") is False:
                        why = (f"; it takes a Python object, so {cls_name} cannot be loaded from YAML at all: "
                               f"build it in Python (LLM API)")
                    out.append((v.line, v.col, f"missing required key '{_join(where, canonical)}' ({cls_name}){why}"))
        out.extend(class_rules(self, cls_name, cls, v, where, require))
        return out

    def check_field(self, cls_name, name, spec, key, kl, kc, val: PVal, where: str) -> list[Finding]:
        if self.yaml_mode and spec.get("yaml") is False:
            why = spec.get("note") or f"it takes a Python object ({spec.get('type', 'object')})"
            return [(kl, kc, f"'{where}' cannot be set in YAML: {why}; set it from Python (LLM API)")]
        t = parse_type(spec.get("type"))
        out = self.check_value(t, val, where)
        if not out:
            out = (self._bounds(spec, val, where) + field_rules(self.track, spec, val, where)
                   + hub_id_findings(self, cls_name, key, name, val, where))
        return out

    def _bounds(self, spec: dict, v: PVal, where: str) -> list[Finding]:
        if v.kind != "scalar" or v.tag not in ("int", "float"):
            return []
        x = v.value
        for op, ok, sym in (("gt", lambda a, b: a > b, ">"), ("ge", lambda a, b: a >= b, ">="),
                            ("lt", lambda a, b: a < b, "<"), ("le", lambda a, b: a <= b, "<=")):
            if op in spec and spec[op] is not None and not ok(x, spec[op]):
                at = f" (TRT-LLM {self.track.id}: {spec['at']})" if spec.get("at") else ""
                return [(v.line, v.col, f"'{where}' must be {sym} {spec[op]} (got {x}){at}")]
        return []

    # ---- values --------------------------------------------------------------------
    def check_value(self, t: tuple, v: PVal, where: str) -> list[Finding]:
        if v.kind == "opaque":
            return []
        kind = t[0]
        if kind == "any":
            return []
        if kind == "object":
            if self.yaml_mode:
                return [(v.line, v.col, f"'{where}' takes a Python object; it cannot be given in YAML")]
            return []
        if kind == "null":
            return [] if v.tag == "null" else [self._type_error(t, v, where)]
        if kind == "prim":
            return [] if self._prim_ok(t[1], v) else [self._type_error(t, v, where)]
        if kind == "literal":
            if v.kind == "scalar" and str(v.value) in t[1]:
                return []
            return [(v.line, v.col, f"'{where}' must be {describe(t)}, got {v.show()}")]
        if kind == "list":
            if v.kind != "seq":
                return [self._type_error(t, v, where)]
            return [f for i, item in enumerate(v.items) for f in self.check_value(t[1], item, f"{where}[{i}]")]
        if kind == "dict":
            if v.kind != "map":
                return [self._type_error(t, v, where)]
            return [f for k, _, _, item in v.entries for f in self.check_value(t[1], item, _join(where, k))]
        if kind == "ref":
            return self._check_ref(t[1], v, where)
        return self._check_union(t, v, where)

    def _check_ref(self, name: str, v: PVal, where: str) -> list[Finding]:
        if name in self.track.unions():
            return self.check_union(name, v, where)
        if name in self.track.classes():
            if v.kind == "scalar" and v.tag == "null":
                return [(v.line, v.col, f"'{where}' must be {name}, got null")]
            return self.check_class(name, v, where)
        return []  # a type the snapshot does not describe: nothing to check against

    def _check_union(self, t: tuple, v: PVal, where: str) -> list[Finding]:
        options = t[1]
        if v.kind == "scalar" and v.tag == "null":
            return [] if ("null",) in options or ("any",) in options else [self._type_error(t, v, where)]
        results = [(o, self.check_value(o, v, where)) for o in options if o != ("null",)]
        if any(not errs for _, errs in results):
            return []
        # Report the alternative of the same shape (a mapping against a class), which says more.
        shaped = [errs for o, errs in results if self._shape_matches(o, v)]
        if len(shaped) == 1:
            return shaped[0]
        return [self._type_error(t, v, where)]

    def _shape_matches(self, t: tuple, v: PVal) -> bool:
        if t[0] == "ref":
            return v.kind == "map" and (t[1] in self.track.classes() or t[1] in self.track.unions())
        if t[0] == "list":
            return v.kind == "seq"
        if t[0] == "dict":
            return v.kind == "map"
        return False

    @staticmethod
    def _prim_ok(prim: str, v: PVal) -> bool:
        if v.kind != "scalar":
            return False
        tag, x = v.tag, v.value
        if prim == "int":
            if tag == "int":
                return True
            if tag == "float":
                return float(x).is_integer()
            return tag == "str" and str(x).strip().lstrip("+-").isdigit()  # pydantic lax mode
        if prim == "float":
            if tag in ("int", "float"):
                return True
            if tag == "str":
                try:
                    float(str(x))
                    return True
                except ValueError:
                    return False
            return False
        if prim == "bool":
            return tag == "bool" or (tag == "int" and x in (0, 1)) or (
                tag == "str" and str(x).lower() in ("true", "false", "yes", "no", "on", "off", "0", "1"))
        return tag == "str"

    @staticmethod
    def _type_error(t: tuple, v: PVal, where: str) -> Finding:
        return (v.line, v.col, f"'{where}' must be {describe(t)}, got {v.show()}")

    # ---- unions --------------------------------------------------------------------
    def check_union(self, union: str, v: PVal, where: str) -> list[Finding]:
        spec = self.track.unions().get(union) or {}
        disc = str(spec.get("discriminator", "decoding_type"))
        if v.kind != "map":
            return [(v.line, v.col, f"'{where}' must be a mapping with '{disc}', got {v.show()}")]
        spellings = self.track.decoding_spellings(union)
        known = ", ".join(sorted(spellings)) or "none recorded"
        members = spec.get("members") or []
        if v.tag.startswith("call:"):
            name = v.tag[len("call:"):]
            return self.check_class(name, v, where) if name in members else []
        dv = v.get(disc)
        if dv is None:
            return [(v.line, v.col, f"'{where}' needs '{disc}' (TRT-LLM {self.track.id} knows: {known})")]
        spelling = str(dv.value) if dv.kind == "scalar" else ""
        member = spellings.get(spelling)
        if member is None and spec.get("case_insensitive"):
            member = {k.lower(): m for k, m in spellings.items()}.get(spelling.lower())
        if member is None:
            hint = self._elsewhere(lambda t: spelling in t.decoding_spellings(union))
            why = (spec.get("not_accepted") or {}).get(spelling)
            why = f"; {why}" if why else ""
            return [(dv.line, dv.col, f"'{spelling}' is not a {disc} in TRT-LLM {self.track.id} "
                                      f"(known: {known}){why}{hint}")]
        return self.check_class(member, v, where, skip=(disc,))
