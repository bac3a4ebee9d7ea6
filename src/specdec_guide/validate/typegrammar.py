"""The ``type:`` grammar of the schema snapshots, parsed into small tuples.

Grammar (see schemas/README.md): ``int``, ``float``, ``bool``, ``str``, ``any``, ``object``,
``null``, ``list[T]``, ``dict[str, T]``, ``literal[a, b]``, a class or union name, ``A | B``.
Python spellings that research notes tend to copy verbatim (``Optional[X]``, ``List[X]``,
``None``, ``string``) are accepted too, so a slightly off snapshot degrades to a looser check
instead of a crash.
"""

from __future__ import annotations

from functools import lru_cache

# A parsed type is a tuple whose first item says what it is:
#   ("prim", "int"|"float"|"bool"|"str")   ("any",)   ("object",)   ("null",)
#   ("list", T)   ("dict", T)   ("literal", (v, ...))   ("ref", "Name")   ("union", (T, ...))

_PRIM_ALIASES = {
    "int": "int", "integer": "int", "float": "float", "number": "float", "bool": "bool",
    "boolean": "bool", "str": "str", "string": "str", "path": "str", "Path": "str",
}
_ANY = {"any", "Any", "unknown", "json", "dict", "Dict", "list", "List", "tuple", "Tuple"}
_NULL = {"null", "None", "none", "NoneType"}
_OBJECT = {"object", "callable", "Callable"}


def _split_top(text: str, sep: str) -> list[str]:
    """Split on ``sep`` outside brackets and quotes."""
    parts, depth, quote, cur = [], 0, "", []
    for ch in text:
        if quote:
            cur.append(ch)
            if ch == quote:
                quote = ""
            continue
        if ch in "\"'":
            quote = ch
        elif ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        elif ch == sep and depth == 0:
            parts.append("".join(cur))
            cur = []
            continue
        cur.append(ch)
    parts.append("".join(cur))
    return [p.strip() for p in parts]


def _unquote(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
    return text


@lru_cache(maxsize=None)
def parse_type(text: object) -> tuple:
    """Parse a ``type:`` string; anything unparseable becomes ``("any",)`` (checked loosely)."""
    if text is None:
        return ("any",)
    text = str(text).strip()
    options = _split_top(text, "|")
    if len(options) > 1:
        return ("union", tuple(parse_type(o) for o in options))
    if "[" in text and text.endswith("]"):
        head, inner = text[: text.index("[")].strip(), text[text.index("[") + 1 : -1]
        args = _split_top(inner, ",")
        low = head.lower()
        if low in ("list", "sequence", "set", "tuple", "frozenset"):
            # tuple[int, ...] and friends: check the first item type only.
            return ("list", parse_type(args[0]) if args and args[0] else ("any",))
        if low in ("dict", "mapping"):
            return ("dict", parse_type(args[-1]) if len(args) == 2 else ("any",))
        if low == "literal":
            return ("literal", tuple(_unquote(a) for a in args if a))
        if low == "optional":
            return ("union", (parse_type(inner), ("null",)))
        if low == "union":
            return ("union", tuple(parse_type(a) for a in args))
        return ("any",)
    if text in _PRIM_ALIASES:
        return ("prim", _PRIM_ALIASES[text])
    if text in _NULL:
        return ("null",)
    if text in _OBJECT:
        return ("object",)
    if text in _ANY or not text:
        return ("any",)
    return ("ref", text)


def describe(t: tuple) -> str:
    """Human spelling of a parsed type, for messages."""
    kind = t[0]
    if kind == "prim":
        return t[1]
    if kind in ("any", "object", "null"):
        return kind
    if kind == "list":
        return f"list[{describe(t[1])}]"
    if kind == "dict":
        return f"dict[str, {describe(t[1])}]"
    if kind == "literal":
        return "one of " + ", ".join(repr(v) for v in t[1])
    if kind == "ref":
        return t[1]
    return " | ".join(describe(o) for o in t[1])
