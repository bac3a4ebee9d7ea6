"""A value with its position, built from a YAML node or a Python literal.

The field checker (:mod:`fields`) works on :class:`PVal` so that a model.yaml key and an
``LLM(kw=...)`` keyword are checked by the same code and reported at their own line:col.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

import yaml

_YAML_TAGS = {
    "tag:yaml.org,2002:int": "int",
    "tag:yaml.org,2002:float": "float",
    "tag:yaml.org,2002:bool": "bool",
    "tag:yaml.org,2002:null": "null",
    "tag:yaml.org,2002:str": "str",
}


@dataclass
class PVal:
    """``kind``: "map", "seq", "scalar", or "opaque" (a Python expression we cannot evaluate)."""

    kind: str
    line: int
    col: int
    value: object = None  # scalars: the Python value
    tag: str = ""  # scalars: int|float|bool|null|str; "call:Name" for a map built by a config call
    entries: list = field(default_factory=list)  # map: [(key, key_line, key_col, PVal)]
    items: list = field(default_factory=list)  # seq: [PVal]

    def get(self, key: str) -> PVal | None:
        for k, _, _, v in self.entries:
            if k == key:
                return v
        return None

    def key_pos(self, key: str) -> tuple[int, int]:
        for k, line, col, _ in self.entries:
            if k == key:
                return line, col
        return self.line, self.col

    def show(self) -> str:
        if self.kind == "scalar":
            return "null" if self.tag == "null" else repr(self.value)
        return {"map": "a mapping", "seq": "a list"}.get(self.kind, "an expression")


_constructor = yaml.SafeLoader("")


def from_yaml(node: yaml.Node) -> PVal:
    """Convert a composed YAML node (marks are 0-based) into a 1-based :class:`PVal`."""
    line, col = node.start_mark.line + 1, node.start_mark.column + 1
    if isinstance(node, yaml.MappingNode):
        try:
            _constructor.flatten_mapping(node)  # apply `<<: *anchor` merge keys, as yaml.safe_load does
        except yaml.YAMLError:
            pass
        entries = []
        for knode, vnode in node.value:
            key = knode.value if isinstance(knode, yaml.ScalarNode) else "<a non-scalar key>"
            entries.append((str(key), knode.start_mark.line + 1, knode.start_mark.column + 1, from_yaml(vnode)))
        return PVal("map", line, col, entries=entries)
    if isinstance(node, yaml.SequenceNode):
        return PVal("seq", line, col, items=[from_yaml(n) for n in node.value])
    tag = _YAML_TAGS.get(node.tag, "str")
    try:
        value = _constructor.construct_object(node, deep=True)
    except yaml.YAMLError:
        value, tag = node.value, "str"
    return PVal("scalar", line, col, value=value, tag=tag)


def from_ast(node: ast.AST, call_class=None) -> PVal:
    """Convert a Python literal expression; anything computed becomes "opaque" (accepted).

    ``call_class(func) -> str | None`` names the TensorRT-LLM config class a call builds; such a
    call with keywords only becomes a map tagged ``call:<Name>``, so ``LLM(speculative_config=
    EagleDecodingConfig(...))`` is checked like the YAML mapping it stands for.
    """
    line, col = getattr(node, "lineno", 0), getattr(node, "col_offset", -1) + 1
    if isinstance(node, ast.Call) and call_class is not None and not node.args \
            and all(kw.arg for kw in node.keywords):
        name = call_class(node.func)
        if name:
            entries = [(kw.arg, kw.lineno, kw.col_offset + 1, from_ast(kw.value, call_class)) for kw in node.keywords]
            return PVal("map", line, col, tag=f"call:{name}", entries=entries)
    if isinstance(node, ast.Constant):
        v = node.value
        if v is None:
            return PVal("scalar", line, col, value=None, tag="null")
        if isinstance(v, bool):
            return PVal("scalar", line, col, value=v, tag="bool")
        if isinstance(v, int):
            return PVal("scalar", line, col, value=v, tag="int")
        if isinstance(v, float):
            return PVal("scalar", line, col, value=v, tag="float")
        if isinstance(v, str):
            return PVal("scalar", line, col, value=v, tag="str")
        return PVal("opaque", line, col)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
        inner = from_ast(node.operand)
        if inner.tag in ("int", "float"):
            return PVal("scalar", line, col, value=-inner.value, tag=inner.tag)
    if isinstance(node, (ast.List, ast.Tuple)) and not any(isinstance(e, ast.Starred) for e in node.elts):
        return PVal("seq", line, col, items=[from_ast(e, call_class) for e in node.elts])
    if isinstance(node, ast.Dict) and all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in node.keys):
        entries = [(k.value, k.lineno, k.col_offset + 1, from_ast(v, call_class)) for k, v in zip(node.keys, node.values)]
        return PVal("map", line, col, entries=entries)
    return PVal("opaque", line, col)
