"""Construction-time rules of a release: the checks TensorRT-LLM runs in validators, not in types.

A snapshot records them as data (format: schemas/README.md, "Rules"), each naming the function that
enforces it (``at:``), so the same code checks a model.yaml key and an ``LLM(...)`` keyword:

* field keys ``min_items``, ``items_gt`` (list elements), ``choices_ci`` (a string matched
  case-insensitively, as ``load_format`` is); ``gt``/``ge``/``lt``/``le`` stay in :mod:`fields`;
* class ``rules:`` of kind ``requires`` (fields that must be set, optionally to a positive
  number), ``backend`` (the backends a decoding config supports), ``cuda_graph_batch_sizes``,
  ``exclusive``, ``when_nonneg``, ``not_less_than`` and ``requires_value``.

Findings are ``(line, col, message)``; a value we cannot read (a Python expression) is skipped.
"""

from __future__ import annotations

import math

from specdec_guide.validate.values import PVal


def _where(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def _src(track, rule: dict) -> str:
    at = rule.get("at")
    return f" (TRT-LLM {track.id}: {at})" if at else ""


def _num(v: PVal | None):
    if v is not None and v.kind == "scalar" and v.tag in ("int", "float"):
        return v.value
    return None


def _lookup(v: PVal, name: str, spec: dict | None) -> tuple[str, PVal] | None:
    """The entry for a field or one of its aliases: ``(key as written, value)``."""
    names = [name, *((spec or {}).get("aliases") or [])]
    for key, _, _, val in v.entries:
        if key in names:
            return key, val
    return None


def field_rules(track, spec: dict, v: PVal, where: str) -> list:
    """Element and choice rules of one field whose type already checked out."""
    out = []
    src = f" (TRT-LLM {track.id}: {spec['at']})" if spec.get("at") else ""
    if v.kind == "seq":
        if spec.get("min_items") is not None and len(v.items) < int(spec["min_items"]):
            out.append((v.line, v.col, f"'{where}' must not be empty{src}"))
        if spec.get("items_gt") is not None:
            for i, item in enumerate(v.items):
                x = _num(item)
                if x is not None and not x > spec["items_gt"]:
                    out.append((item.line, item.col, f"'{where}[{i}]' must be > {spec['items_gt']} (got {x}){src}"))
    if spec.get("choices_ci") and v.kind == "scalar" and v.tag == "str":
        allowed = [str(c).lower() for c in spec["choices_ci"]]
        if str(v.value).lower() not in allowed:
            out.append((v.line, v.col, f"'{where}' must be one of {', '.join(spec['choices_ci'])} "
                                       f"(any case), got {v.value!r}{src}"))
    return out


def cuda_graph_sizes(max_batch_size: int, padding: bool) -> list[int]:
    """The batch sizes TensorRT-LLM captures for a CUDA-graph max_batch_size (1.1/1.2 rule)."""
    sizes = [1, 2, 4] + [8 * i for i in range(1, 17)] if padding else list(range(1, 32)) + [32, 64, 128]
    if max_batch_size > 1:
        sizes += [2 ** i for i in range(8, math.ceil(math.log(max_batch_size, 2)))]
    sizes = sorted(s for s in sizes if s <= max_batch_size)
    if not sizes or sizes[-1] != max_batch_size:
        sizes.append(max_batch_size)
    return sizes


def class_rules(checker, cls_name: str, cls: dict, v: PVal, where: str, require: bool, only=None) -> list:
    """Findings of the class-level ``rules:`` for one mapping (or keyword call) ``v``."""
    track = checker.track
    fields = cls.get("fields") or {}
    out = []
    disc = v.key_pos("decoding_type") if v.get("decoding_type") is not None else (v.line, v.col)
    for rule in cls.get("rules") or []:
        kind = rule.get("kind")
        if only and kind not in only:
            continue
        src = _src(track, rule)
        if kind == "requires" and require:
            for name in rule.get("fields") or []:
                hit = _lookup(v, name, fields.get(name))
                if hit is None or (hit[1].kind == "scalar" and hit[1].tag == "null"):
                    out.append((*disc, f"{cls_name} needs '{_where(where, name)}'{src}"))
                elif rule.get("positive"):
                    x = _num(hit[1])
                    if x is not None and x <= 0:
                        out.append((hit[1].line, hit[1].col, f"'{_where(where, hit[0])}' must be > 0 for {cls_name} "
                                                             f"(got {x}){src}"))
        elif kind == "backend" and checker.backend:
            allowed, refused = rule.get("allowed"), rule.get("refused") or []
            if (allowed and checker.backend not in allowed) or checker.backend in refused:
                out.append((*disc, f"{cls_name} does not support the {checker.backend} backend"
                                   f"{' (it needs ' + ' or '.join(allowed) + ')' if allowed else ''}{src}"))
        elif kind == "cuda_graph_batch_sizes":
            sizes, mbs = v.get("batch_sizes"), _num(v.get("max_batch_size"))
            pad = v.get("enable_padding")
            padding = bool(pad.value) if pad is not None and pad.kind == "scalar" and pad.tag == "bool" else False
            if pad is not None and not (pad.kind == "scalar" and pad.tag == "bool"):
                continue
            if sizes is None or sizes.kind != "seq" or not sizes.items or not mbs:
                continue
            values = [_num(i) for i in sizes.items]
            if any(x is None for x in values):
                continue
            if sorted(values) != cuda_graph_sizes(int(mbs), padding):
                line, col = v.key_pos("max_batch_size")
                out.append((line, col, f"'{_where(where, 'batch_sizes')}' and a non-zero "
                                       f"'{_where(where, 'max_batch_size')}' are both set and do not agree: set one "
                                       f"of them{src}"))
        elif kind == "exclusive":
            first, second = (rule.get("fields") or [None, None])[:2]
            a, b = v.get(first), v.get(second)
            a_set = a is not None and not (a.kind == "scalar" and a.tag == "null")
            b_set = b is not None and b.kind == "scalar" and b.value is True
            if a_set and b_set:
                out.append((*v.key_pos(second), f"'{_where(where, first)}' and '{_where(where, second)}: true' "
                                                f"cannot be used together{src}"))
        elif kind == "when_nonneg":
            when = rule.get("when") or {}
            if all((v.get(k) is not None and v.get(k).kind == "scalar" and v.get(k).value == want)
                   for k, want in when.items()):
                for name in rule.get("fields") or []:
                    x = _num(v.get(name))
                    if x is not None and x < 0:
                        val = v.get(name)
                        out.append((val.line, val.col, f"'{_where(where, name)}' must be >= 0 when "
                                                       f"{', '.join(f'{k}: {w}' for k, w in when.items())}{src}"))
        elif kind == "not_less_than":
            # best_of >= n: an unset field takes its `defaults_to` field's value, as upstream does
            a, b = _num(v.get(rule.get("field"))), _num(v.get(rule.get("other")))
            if b is None and v.get(rule.get("other")) is None:
                b = rule.get("other_default")
            if a is not None and b is not None and a < b:
                val = v.get(rule.get("field"))
                out.append((val.line, val.col, f"'{_where(where, rule['field'])}' ({a}) must not be less than "
                                               f"'{_where(where, rule['other'])}' ({b}){src}"))
        elif kind == "requires_value":
            name = rule.get("field")
            val = v.get(name)
            if val is None or (val.kind == "scalar" and val.tag == "null"):
                continue
            for key, want in (rule.get("needs") or {}).items():
                got = v.get(key)
                if got is None or got.kind != "scalar" or got.value != want:
                    if got is not None and got.kind == "opaque":
                        continue
                    out.append((*v.key_pos(name), f"'{_where(where, name)}' needs {key}: {want}{src}"))
    return out
