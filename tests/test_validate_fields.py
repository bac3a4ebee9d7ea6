"""The validator's field types, values and rules (validate/fields.py, values.py, rules.py) on a
small hand-written snapshot: each type, bound and rule kind accepts what the release accepts and
refuses the rest with its message at the value's line:col. No files, no registry of releases.
(tests/test_validate_rules.py runs the same code over the real snapshots' rule fixtures.)"""

from __future__ import annotations

import ast
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from specdec_guide.releases.tracks import Track
from specdec_guide.validate.fields import FieldChecker, field_index
from specdec_guide.validate.rules import class_rules, cuda_graph_sizes, field_rules
from specdec_guide.validate.values import PVal, from_ast, from_yaml

SNAP = {
    "classes": {
        "Conf": {
            "fields": {
                "n": {"type": "int", "ge": 1, "at": "Conf.check_n"},
                "ratio": {"type": "float", "gt": 0, "lt": 1},
                "cap": {"type": "int", "le": 8, "ge": None},
                "flag": "bool",
                "name": {"type": "str", "aliases": ["title"], "choices_ci": ["auto", "Dummy"], "at": "load"},
                "sizes": {"type": "list[int]", "min_items": 1, "items_gt": 0, "at": "sizes_ok"},
                "opts": "dict[str, int]",
                "mode": "literal[a, b]",
                "maybe": "int | None",
                "either": "int | str",
                "sub": "Sub",
                "subs": "Sub | list[Sub]",
                "spec": "Spec",
                "callback": {"type": "object", "yaml": False, "note": "it takes a callable"},
                "tokenizer": {"type": "PreTrainedTokenizer", "yaml": False},
                "untyped": {"yaml": False},
                "obj": "object",
                "anything": "any",
                "nothing": "null",
                "unknown_type": "SomethingNotDescribed",
                "must": {"type": "int", "required": True},
                "loose": "int | any",
                "table": "int | dict[str, int]",
            },
        },
        "TrtOnly": {"fields": {"x": {"type": "int"}}, "rules": [{"kind": "backend", "allowed": ["tensorrt"]}]},
        "Holder": {"fields": {"must": {"type": "int", "required": True},
                              "hidden": {"type": "object", "required": True, "yaml": False}}},
        "Sub": {"extra": "allow", "fields": {"x": "int"}},
        "NGramConf": {
            "decoding_type": ["NGram"],
            "fields": {"decoding_type": {"type": "str"}, "max_draft_len": {"type": "int", "aliases": ["k"]},
                       "size": {"type": "int"}},
            "rules": [{"kind": "requires", "fields": ["max_draft_len", "size"], "positive": True, "at": "NGram.check"},
                      {"kind": "backend", "allowed": ["pytorch"], "at": "NGram.supports"}],
        },
        "EagleConf": {"decoding_type": ["Eagle"], "fields": {"decoding_type": {"type": "str"},
                                                              "max_draft_len": {"type": "int"},
                                                              "speculative_model_dir": {"type": "str"}}},
        "TorchLlmArgs": {"fields": {"model": {"type": "str"}, "speculative_config": {"type": "Spec | None"}}},
    },
    "unions": {
        "Spec": {"discriminator": "decoding_type", "members": ["NGramConf", "EagleConf"], "case_insensitive": True,
                 "not_accepted": {"Medusa": "Medusa needs the TensorRT backend"}},
        "Strict": {"members": ["NGramConf"]},
        "Kinded": {"discriminator": "kind", "members": ["EagleConf"]},
    },
}


def track(tid: str = "9.9", snap: dict = SNAP) -> Track:
    return Track(tid, [], Path("/nonexistent"), _parts={"llm_api": snap})


class Registry:
    """The two methods the checker asks of a registry."""

    def __init__(self, *others: Track):
        self._others = others

    def others(self, current):
        return [t for t in self._others if t is not current]


def y(text: str) -> PVal:
    return from_yaml(yaml.compose(text))


def check(text: str, cls: str = "Conf", yaml_mode: bool = True, registry=None, backend=None) -> list:
    checker = FieldChecker(track(), registry, yaml_mode)
    checker.backend = backend
    return checker.check_class(cls, y(text))


def one(text: str, **kw) -> tuple:
    """The one finding of a Conf mapping that also sets the required key."""
    got = check("must: 1\n" + text, **kw)
    assert len(got) == 1, got
    return got[0]


# -- values ------------------------------------------------------------------------------------
def test_yaml_values_keep_their_type_and_position():
    v = y("a: 1\nb:\n  - 2.5\n  - x\nc: true\nd: null\ne: '3'\n")
    assert (v.kind, v.line, v.col) == ("map", 1, 1)
    assert [(k, line, col) for k, line, col, _ in v.entries] == [("a", 1, 1), ("b", 2, 1), ("c", 5, 1), ("d", 6, 1),
                                                                 ("e", 7, 1)]
    a, b, c, d, e = (v.get(k) for k in "abcde")
    assert (a.kind, a.value, a.tag, a.line, a.col) == ("scalar", 1, "int", 1, 4)
    assert (b.kind, b.line, b.col, len(b.items)) == ("seq", 3, 3, 2)
    assert [(i.value, i.tag, i.line, i.col) for i in b.items] == [(2.5, "float", 3, 5), ("x", "str", 4, 5)]
    assert (c.value, c.tag) == (True, "bool")
    assert (d.value, d.tag) == (None, "null")
    assert (e.value, e.tag) == ("3", "str")


def test_yaml_merge_keys_odd_keys_and_unreadable_tags():
    v = y("base: &b {x: 1}\nuse:\n  <<: *b\n  y: 2\n")
    assert [k for k, *_ in v.get("use").entries] == ["x", "y"]
    assert y("? [1, 2]\n: 3\n").entries[0][0] == "<a non-scalar key>"
    bad_merge = y("a:\n  <<: 5\n  y: 2\n")  # not a mapping to merge: the rest is still read
    assert [k for k, *_ in bad_merge.get("a").entries] == ["y"]
    odd = y("a: !!binary 'é'\n").get("a")  # a tag whose value cannot be built: read as text
    assert (odd.value, odd.tag) == ("é", "str")
    stamp = y("a: 2020-01-01\n").get("a")
    assert stamp.tag == "str" and stamp.value.year == 2020


def test_pval_lookups_and_how_values_are_shown():
    v = y("a: 1\nb: x\n")
    assert v.get("a").value == 1 and v.get("zz") is None
    assert v.key_pos("b") == (2, 1)
    assert v.key_pos("zz") == (1, 1)  # a missing key: the mapping's own place
    assert v.get("a").show() == "1" and v.get("b").show() == "'x'"
    assert y("a: null\n").get("a").show() == "null"
    assert v.show() == "a mapping" and y("[1]").show() == "a list" and PVal("opaque", 1, 1).show() == "an expression"


def expr(text: str, call_class=None) -> PVal:
    return from_ast(ast.parse(text, mode="eval").body, call_class)


def test_python_literals():
    assert [(p.value, p.tag) for p in expr("[None, True, 3, 2.5, 'x']").items] == [
        (None, "null"), (True, "bool"), (3, "int"), (2.5, "float"), ("x", "str")]
    assert (expr("-3").value, expr("-3").tag) == (-3, "int")
    assert (expr("-2.5").value, expr("-2.5").tag) == (-2.5, "float")
    assert expr("-'x'").kind == "opaque" and expr("b'x'").kind == "opaque" and expr("f(1)").kind == "opaque"
    assert expr("(1, 2)").kind == "seq" and expr("[*a]").kind == "opaque"
    d = expr("{'a': 1,\n 'b': [2]}")
    assert d.kind == "map" and [(k, line, col) for k, line, col, _ in d.entries] == [("a", 1, 2), ("b", 2, 2)]
    assert d.get("b").items[0].value == 2
    assert expr("{1: 2}").kind == "opaque" and expr("{**x}").kind == "opaque"
    v = expr("  x", None) if False else expr("[1,\n    2]")
    assert (v.line, v.col) == (1, 1) and (v.items[1].line, v.items[1].col) == (2, 5)


def test_a_config_call_is_a_mapping_of_its_keywords():
    names = {"NGram": "NGramConf"}

    def call_class(func):
        return names.get(getattr(func, "id", ""))

    v = expr("NGram(k=2,\n      size=[1, 2])", call_class)
    assert (v.kind, v.tag) == ("map", "call:NGramConf")
    assert [(k, line, col) for k, line, col, _ in v.entries] == [("k", 1, 7), ("size", 2, 7)]
    assert v.get("size").items[1].value == 2  # the keywords' values are read with call_class too
    nested = expr("[NGram(k=1)]", call_class)
    assert nested.items[0].tag == "call:NGramConf"
    assert expr("NGram(1, k=2)", call_class).kind == "opaque"  # positional arguments: not a config mapping
    assert expr("NGram(**kw)", call_class).kind == "opaque"
    assert expr("Other(k=2)", call_class).kind == "opaque"
    assert expr("NGram(k=2)").kind == "opaque"  # without call_class


# -- types -------------------------------------------------------------------------------------
def test_field_index_names_aliases_after_their_field():
    idx = field_index(SNAP["classes"]["Conf"])
    assert idx["title"] == ("name", SNAP["classes"]["Conf"]["fields"]["name"])
    assert idx["flag"] == ("flag", {"type": "bool"})  # a bare type string is a spec with that type
    assert field_index({}) == {}


@pytest.mark.parametrize("text, ok", [
    ("n: 3", True), ("n: 3.0", True), ("n: '4'", True), ("n: '+4'", True), ("n: ' 4 '", True),
    ("n: 2.5", False), ("n: '4.0'", False), ("n: true", False), ("n: [1]", False), ("n: x", False),
    ("ratio: 0.5", True), ("ratio: '0.5'", True), ("ratio: 'half'", False), ("ratio: false", False),
    ("flag: true", True), ("flag: 1", True), ("flag: 0", True), ("flag: 2", False), ("flag: 'Yes'", True),
    ("flag: 'off'", True), ("flag: 'maybe'", False), ("flag: 1.0", False), ("flag: {}", False),
    ("flag: 'true'", True), ("flag: 'FALSE'", True), ("flag: 'no'", True), ("flag: 'On'", True), ("flag: '0'", True),
    ("flag: '1'", True), ("flag: '2'", False), ("n: 'X4'", False), ("n: '-4'", True),
    ("name: auto", True), ("name: 3", False), ("name: [auto]", False),
])
def test_primitive_types_follow_pydantic_lax_mode(text, ok):
    assert (check("must: 1\n" + text) == []) is ok


def test_a_non_integer_is_not_an_int():
    assert one("n: 2.5") == (2, 4, "'n' must be int, got 2.5")
    assert one("n: '2.5'") == (2, 4, "'n' must be int, got '2.5'")


def test_bounds_name_the_validator():
    assert one("n: 0") == (2, 4, "'n' must be >= 1 (got 0) (TRT-LLM 9.9: Conf.check_n)")
    assert check("must: 1\nn: 1") == []
    assert one("ratio: 0") == (2, 8, "'ratio' must be > 0 (got 0)")
    assert one("ratio: 1.0") == (2, 8, "'ratio' must be < 1 (got 1.0)")
    assert check("must: 1\nratio: 0.99") == []
    assert one("cap: 9") == (2, 6, "'cap' must be <= 8 (got 9)")
    assert check("must: 1\ncap: 8\n") == [] and check("must: 1\ncap: -5\n") == []  # ge: null is no bound
    assert check("must: 1\nn: '0'") == []  # text is not compared with a number


def test_lists_dicts_and_literals():
    assert one("sizes: [1, x]") == (2, 12, "'sizes[1]' must be int, got 'x'")
    assert one("sizes: 3") == (2, 8, "'sizes' must be list[int], got 3")
    assert one("opts: {a: 1, b: x}") == (2, 17, "'opts.b' must be int, got 'x'")
    assert one("opts: [1]") == (2, 7, "'opts' must be dict[str, int], got a list")
    assert check("must: 1\nmode: a\n") == [] and check("must: 1\nmode: b\n") == []
    assert one("mode: c") == (2, 7, "'mode' must be one of 'a', 'b', got 'c'")
    assert one("mode: [a]") == (2, 7, "'mode' must be one of 'a', 'b', got a list")


def test_unions_null_any_object():
    assert check("must: 1\nmaybe: null\nmaybe: 3\n") == []
    assert one("maybe: x") == (2, 8, "'maybe' must be int | null, got 'x'")
    assert one("either: null") == (2, 9, "'either' must be int | str, got null")
    assert check("must: 1\neither: 3\n") == [] and check("must: 1\neither: x\n") == []
    assert check("must: 1\nanything: [1, {a: 2}]\nnothing: null\n") == []
    assert one("nothing: 0") == (2, 10, "'nothing' must be null, got 0")
    assert one("obj: 3") == (2, 6, "'obj' takes a Python object; it cannot be given in YAML")
    assert check("must: 1\nobj: 3\n", yaml_mode=False) == []
    assert check("must: 1\nunknown_type: {anything: 1}\n") == []  # a type the snapshot does not describe


def test_a_union_reports_the_alternative_of_the_same_shape():
    # Sub | list[Sub]: a mapping is checked as Sub (its error says more than the union's).
    assert one("subs: {x: y}") == (2, 11, "'subs.x' must be int, got 'y'")
    assert one("subs: [{x: y}]") == (2, 12, "'subs[0].x' must be int, got 'y'")
    assert one("subs: 3") == (2, 7, "'subs' must be Sub | list[Sub], got 3")
    assert check("must: 1\nsubs: [{x: 1}]\nsubs: {x: 2}\n") == []


def test_nested_classes():
    assert one("sub: {x: y, free: 1}") == (2, 10, "'sub.x' must be int, got 'y'")  # extra allowed in Sub
    assert one("sub: null") == (2, 6, "'sub' must be Sub, got null")
    assert one("sub: 3") == (2, 6, "sub must be a mapping (Sub), got 3")


def test_unknown_keys():
    assert one("nme: x") == (2, 1, "unknown key 'nme': Conf in TRT-LLM 9.9 has no such field (did you mean 'name'?)")
    assert one("zzz: 1") == (2, 1, "unknown key 'zzz': Conf in TRT-LLM 9.9 has no such field")
    assert check("must: 1\nsub: {zzz: 1}\n") == []  # Sub allows extra keys
    assert check("must: 1\ntitle: auto\n") == []  # an alias
    # in Python, a keyword; a key another track knows is pointed at
    other = track("9.10", {"classes": {"Conf": {"fields": {"zzz": "int"}}}})
    checker = FieldChecker(track(), Registry(other), yaml_mode=False)
    checker.call_label = " for LLM()"
    got = checker.check_class("Conf", expr("{'must': 1, 'zzz': 1}"))
    assert got == [(1, 13, "unknown keyword 'zzz' for LLM(): Conf in TRT-LLM 9.9 has no such field; it exists in 9.10")]
    nested = FieldChecker(track(), Registry(other), yaml_mode=False)
    nested.call_label = " for LLM()"
    assert nested.check_class("Sub", y("x: 1"), where="sub") == []
    assert nested.check_class("NGramConf", y("{k: 1, size: 1, zz: 1}"), where="spec") == [
        (1, 17, "unknown keyword 'spec.zz': NGramConf in TRT-LLM 9.9 has no such field")]  # no label below the top


def test_required_keys_and_objects_yaml_cannot_hold():
    assert check("n: 1") == [(1, 1, "missing required key 'must' (Conf)")]
    assert check("x: 1", cls="Holder") == [
        (1, 1, "unknown key 'x': Holder in TRT-LLM 9.9 has no such field"),
        (1, 1, "missing required key 'must' (Holder)"),
        (1, 1, "missing required key 'hidden' (Holder); it takes a Python object, so Holder cannot be loaded from "
               "YAML at all: build it in Python (LLM API)")]
    checker = FieldChecker(track(), None, yaml_mode=False)
    assert checker.check_class("Holder", expr("{}")) == [(1, 1, "missing required key 'must' (Holder)"),
                                                         (1, 1, "missing required key 'hidden' (Holder)")]
    assert checker.check_class("Holder", expr("{}"), require=False) == []
    assert checker.check_class("Holder", expr("{'hidden': f}"), skip=("must",)) == []
    assert checker.check_class("Holder", expr("{'hidden': f, 'must': 2}")) == []
    assert one("callback: x", yaml_mode=True)[2] == (
        "'callback' cannot be set in YAML: it takes a callable; set it from Python (LLM API)")
    assert one("tokenizer: x") == (2, 1, "'tokenizer' cannot be set in YAML: it takes a Python object "
                                         "(PreTrainedTokenizer); set it from Python (LLM API)")
    assert one("untyped: x") == (2, 1, "'untyped' cannot be set in YAML: it takes a Python object (object); set it from "
                                       "Python (LLM API)")


def test_what_cannot_be_read_is_not_checked():
    checker = FieldChecker(track(), None, yaml_mode=False)
    assert checker.check_class("Conf", PVal("opaque", 1, 1)) == []
    assert checker.check_class("NoSuchClass", y("a: 1")) == []
    assert checker.check_class("Conf", expr("{'must': x, 'n': y, 'sizes': [z]}")) == []


# -- the speculative-config union ---------------------------------------------------------------
def spec(text: str, backend: str | None = "pytorch", registry=None) -> list:
    return check("must: 1\nspec:\n" + "".join(f"  {line}\n" for line in text.splitlines()), backend=backend,
                 registry=registry)


def test_a_union_member_is_chosen_by_its_discriminator():
    assert spec("decoding_type: NGram\nmax_draft_len: 2\nsize: 1") == []
    assert spec("decoding_type: ngram\nk: 2\nsize: 1") == []  # case-insensitive union; an alias
    assert spec("decoding_type: Eagle\nmax_draft_len: x") == [(4, 18, "'spec.max_draft_len' must be int, got 'x'")]
    assert spec("max_draft_len: 2") == [(3, 3, "'spec' needs 'decoding_type' (TRT-LLM 9.9 knows: Eagle, NGram)")]
    assert check("must: 1\nspec: 3\n") == [(2, 7, "'spec' must be a mapping with 'decoding_type', got 3")]


def test_an_unknown_spelling_says_what_the_release_knows():
    assert spec("decoding_type: Lookahead") == [
        (3, 18, "'Lookahead' is not a decoding_type in TRT-LLM 9.9 (known: Eagle, NGram)")]
    assert spec("decoding_type: Medusa") == [
        (3, 18, "'Medusa' is not a decoding_type in TRT-LLM 9.9 (known: Eagle, NGram); Medusa needs the TensorRT "
                "backend")]
    later = track("9.10", {"classes": {"M": {"decoding_type": ["Lookahead"]}}, "unions": {"Spec": {"members": ["M"]}}})
    assert spec("decoding_type: Lookahead", registry=Registry(later))[0][2].endswith("(known: Eagle, NGram); it exists "
                                                                                      "in 9.10")
    strict = FieldChecker(track(), None, yaml_mode=True)
    assert strict.check_union("Strict", y("decoding_type: ngram"), "s") == [
        (1, 16, "'ngram' is not a decoding_type in TRT-LLM 9.9 (known: NGram)")]  # not case-insensitive
    assert strict.check_union("Strict", y("decoding_type: [NGram]"), "s")[0][2].startswith("'' is not a decoding_type")
    assert strict.check_union("Nothing", y("decoding_type: x"), "s")[0][2] == (
        "'x' is not a decoding_type in TRT-LLM 9.9 (known: none recorded)")


def test_a_member_class_built_by_its_own_call():
    checker = FieldChecker(track(), None, yaml_mode=False)
    call = PVal("map", 1, 1, tag="call:NGramConf", entries=[("max_draft_len", 1, 7, PVal("scalar", 1, 21, 0, "int"))])
    # on its own, every rule of the class
    assert checker.check_class("NGramConf", call) == [
        (1, 21, "'max_draft_len' must be > 0 for NGramConf (got 0) (TRT-LLM 9.9: NGram.check)"),
        (1, 1, "NGramConf needs 'size' (TRT-LLM 9.9: NGram.check)")]
    # as another call's keyword, only the backend is left (its keywords were checked at its own call)
    assert checker.check_union("Spec", call, "spec") == []
    checker.backend = "tensorrt"
    assert checker.check_union("Spec", call, "spec") == [
        (1, 1, "NGramConf does not support the tensorrt backend (it needs pytorch) (TRT-LLM 9.9: NGram.supports)")]
    assert checker.check_value(("ref", "Spec"), call, "spec") == checker.check_union("Spec", call, "spec")
    other = PVal("map", 1, 1, tag="call:Unrelated", entries=[])
    assert checker.check_union("Spec", other, "spec") == []


# -- rules -------------------------------------------------------------------------------------
def test_requires_rules():
    assert spec("decoding_type: NGram\nsize: 1") == [
        (3, 3, "NGramConf needs 'spec.max_draft_len' (TRT-LLM 9.9: NGram.check)")]
    assert spec("decoding_type: NGram\nsize: 1\nmax_draft_len: null") == [
        (5, 18, "'spec.max_draft_len' must be int, got null"),
        (3, 3, "NGramConf needs 'spec.max_draft_len' (TRT-LLM 9.9: NGram.check)")]
    assert spec("decoding_type: NGram\nsize: 1\nk: 0") == [
        (5, 6, "'spec.k' must be > 0 for NGramConf (got 0) (TRT-LLM 9.9: NGram.check)")]
    assert spec("decoding_type: NGram\nsize: 1\nk: 1") == []
    assert spec("decoding_type: NGram\nsize: -1\nk: 1") == [
        (4, 9, "'spec.size' must be > 0 for NGramConf (got -1) (TRT-LLM 9.9: NGram.check)")]


def test_backend_rules():
    assert spec("decoding_type: NGram\nsize: 1\nk: 1", backend="tensorrt") == [
        (3, 3, "NGramConf does not support the tensorrt backend (it needs pytorch) (TRT-LLM 9.9: NGram.supports)")]
    assert spec("decoding_type: NGram\nsize: 1\nk: 1", backend=None) == []


def rule_check(rule: dict, text: str, fields: dict | None = None, backend: str | None = None) -> list:
    checker = FieldChecker(track(), None, yaml_mode=True)
    checker.backend = backend
    cls = {"fields": fields or {}, "rules": [rule]}
    return class_rules(checker, "C", cls, y(text), "w", require=True)


def test_a_refused_backend_and_a_rule_without_its_source():
    rule = {"kind": "backend", "refused": ["tensorrt"]}
    assert rule_check(rule, "a: 1", backend="tensorrt") == [(1, 1, "C does not support the tensorrt backend")]
    assert rule_check(rule, "a: 1", backend="pytorch") == []
    assert rule_check({"kind": "backend", "allowed": ["x", "y"]}, "decoding_type: T", backend="z") == [
        (1, 1, "C does not support the z backend (it needs x or y)")]


def test_a_requires_rule_when_requirements_are_off():
    checker = FieldChecker(track(), None, yaml_mode=True)
    cls = {"rules": [{"kind": "requires", "fields": ["a"]}]}
    assert class_rules(checker, "C", cls, y("b: 1"), "", require=False) == []
    assert class_rules(checker, "C", cls, y("b: 1"), "", require=True) == [(1, 1, "C needs 'a'")]
    only = {"rules": [{"kind": "requires", "fields": ["a"]}, {"kind": "backend", "allowed": ["p"]}]}
    checker.backend = "q"
    assert class_rules(checker, "C", only, y("b: 1"), "", require=True, only=("backend",)) == [
        (1, 1, "C does not support the q backend (it needs p)")]


@pytest.mark.parametrize("mbs, padding, sizes", [
    (1, False, [1]),
    (4, False, [1, 2, 3, 4]),
    (33, False, list(range(1, 33)) + [33]),
    (128, False, list(range(1, 32)) + [32, 64, 128]),
    (300, False, list(range(1, 32)) + [32, 64, 128, 256, 300]),
    (512, False, list(range(1, 32)) + [32, 64, 128, 256, 512]),
    (1, True, [1]),
    (3, True, [1, 2, 3]),
    (20, True, [1, 2, 4, 8, 16, 20]),
    (128, True, [1, 2, 4] + [8 * i for i in range(1, 17)]),
    (1000, True, [1, 2, 4] + [8 * i for i in range(1, 17)] + [256, 512, 1000]),
])
def test_cuda_graph_sizes_follow_the_release(mbs, padding, sizes):
    assert cuda_graph_sizes(mbs, padding) == sizes


CG = {"kind": "cuda_graph_batch_sizes", "at": "validate_cuda_graph_config"}


def test_cuda_graph_rule():
    msg = ("'w.batch_sizes' and a non-zero 'w.max_batch_size' are both set and do not agree: set one of them "
           "(TRT-LLM 9.9: validate_cuda_graph_config)")
    assert rule_check(CG, "batch_sizes: [1, 2]\nmax_batch_size: 4") == [(2, 1, msg)]
    assert rule_check(CG, "batch_sizes: [4, 2, 3, 1]\nmax_batch_size: 4") == []  # the same sizes, any order
    assert rule_check(CG, "batch_sizes: [1, 2, 4, 8, 16, 20]\nmax_batch_size: 20\nenable_padding: true") == []
    assert rule_check(CG, "batch_sizes: [1, 2, 4, 8, 16, 20]\nmax_batch_size: 20\nenable_padding: false") == [
        (2, 1, msg)]
    assert rule_check(CG, "batch_sizes: [1, 2, 3, 20]\nmax_batch_size: 20\nenable_padding: true") == [(2, 1, msg)]
    # nothing to compare: a zero or missing max_batch_size, no or empty sizes, values or padding not literal
    for text in ("batch_sizes: [1, 2]\nmax_batch_size: 0", "batch_sizes: [1, 2]", "max_batch_size: 4",
                 "batch_sizes: []\nmax_batch_size: 4", "batch_sizes: 3\nmax_batch_size: 4",
                 "batch_sizes: [1, x]\nmax_batch_size: 4", "batch_sizes: [1]\nmax_batch_size: 4\nenable_padding: x"):
        assert rule_check(CG, text) == [], text


def test_exclusive_rule():
    rule = {"kind": "exclusive", "fields": ["a", "b"], "at": "X"}
    msg = "'w.a' and 'w.b: true' cannot be used together (TRT-LLM 9.9: X)"
    assert rule_check(rule, "a: 1\nb: true") == [(2, 1, msg)]
    assert rule_check(rule, "a: 0\nb: true") == [(2, 1, msg)]  # set, whatever its value
    assert rule_check(rule, "a: null\nb: true") == [] and rule_check(rule, "a: 1\nb: false") == []
    assert rule_check(rule, "a: 1\nb: 1") == [] and rule_check(rule, "b: true") == [] and rule_check(rule, "a: 1") == []


def test_when_nonneg_rule():
    rule = {"kind": "when_nonneg", "when": {"on": True, "mode": "x"}, "fields": ["p", "q"], "at": "Y"}
    msg = "'w.{}' must be >= 0 when on: True, mode: x (TRT-LLM 9.9: Y)"
    assert rule_check(rule, "on: true\nmode: x\np: -1\nq: -2") == [(3, 4, msg.format("p")), (4, 4, msg.format("q"))]
    assert rule_check(rule, "on: true\nmode: x\np: 0\nq: x") == []
    assert rule_check(rule, "on: false\nmode: x\np: -1") == [] and rule_check(rule, "on: true\np: -1") == []


def test_not_less_than_rule():
    rule = {"kind": "not_less_than", "field": "best_of", "other": "n", "other_default": 1, "at": "Z"}
    assert rule_check(rule, "best_of: 1\nn: 2") == [(1, 10, "'w.best_of' (1) must not be less than 'w.n' (2) "
                                                             "(TRT-LLM 9.9: Z)")]
    assert rule_check(rule, "best_of: 2\nn: 2") == [] and rule_check(rule, "n: 5") == []
    assert rule_check(rule, "best_of: 0") == [(1, 10, "'w.best_of' (0) must not be less than 'w.n' (1) "
                                                      "(TRT-LLM 9.9: Z)")]  # n unset: its default
    assert rule_check(rule, "best_of: 0\nn: x") == []  # n set to something unreadable: not its default


def test_requires_value_rule():
    rule = {"kind": "requires_value", "field": "a", "needs": {"mode": "fast", "k": 2}, "at": "V"}
    assert rule_check(rule, "a: 1\nmode: slow\nk: 2") == [(1, 1, "'w.a' needs mode: fast (TRT-LLM 9.9: V)")]
    assert rule_check(rule, "a: 1") == [(1, 1, "'w.a' needs mode: fast (TRT-LLM 9.9: V)"),
                                        (1, 1, "'w.a' needs k: 2 (TRT-LLM 9.9: V)")]
    assert rule_check(rule, "a: 1\nmode: [fast]\nk: 2") == [(1, 1, "'w.a' needs mode: fast (TRT-LLM 9.9: V)")]
    assert rule_check(rule, "a: 1\nmode: fast\nk: 2") == [] and rule_check(rule, "a: null\nmode: slow") == []
    assert rule_check(rule, "mode: slow") == []
    checker = FieldChecker(track(), None, yaml_mode=False)
    opaque = PVal("map", 1, 1, entries=[("a", 1, 2, PVal("scalar", 1, 5, 1, "int")), ("mode", 1, 8, PVal("opaque", 1, 9)),
                                        ("k", 1, 12, PVal("scalar", 1, 15, 2, "int"))])
    assert class_rules(checker, "C", {"rules": [rule]}, opaque, "", require=True) == []  # unreadable: not judged


def test_unknown_rule_kinds_are_ignored():
    assert rule_check({"kind": "future_kind"}, "a: 1") == []


def test_element_and_choice_rules():
    t = track()
    spec_ = SNAP["classes"]["Conf"]["fields"]["sizes"]
    assert field_rules(t, spec_, y("[]"), "sizes") == [(1, 1, "'sizes' must not be empty (TRT-LLM 9.9: sizes_ok)")]
    assert field_rules(t, spec_, y("[1, 0, -2, x]"), "sizes") == [
        (1, 5, "'sizes[1]' must be > 0 (got 0) (TRT-LLM 9.9: sizes_ok)"),
        (1, 8, "'sizes[2]' must be > 0 (got -2) (TRT-LLM 9.9: sizes_ok)")]
    assert field_rules(t, spec_, y("[1]"), "sizes") == []
    assert field_rules(t, {"min_items": 2}, y("[1]"), "s") == [(1, 1, "'s' must not be empty")]
    assert field_rules(t, {"min_items": 2}, y("[1, 2]"), "s") == []
    name = SNAP["classes"]["Conf"]["fields"]["name"]
    assert field_rules(t, name, y("AUTO"), "name") == [] and field_rules(t, name, y("dummy"), "name") == []
    assert field_rules(t, name, y("other"), "name") == [
        (1, 1, "'name' must be one of auto, Dummy (any case), got 'other' (TRT-LLM 9.9: load)")]
    assert field_rules(t, name, y("3"), "name") == []  # not text: the type check's business
    assert one("name: other")[2].startswith("'name' must be one of auto, Dummy (any case)")


def test_null_or_anything_and_a_dict_alternative():
    assert check("must: 1\nloose: null\nloose: [1]\n") == []  # any admits null too
    assert one("table: {a: x}") == (2, 12, "'table.a' must be int, got 'x'")  # the dict alternative's own error
    assert one("table: [1]") == (2, 8, "'table' must be int | dict[str, int], got a list")
    assert check("must: 1\ntable: {a: 1}\ntable: 2\n") == []


def test_a_key_known_elsewhere_names_every_track_that_has_it():
    first = track("9.10", {"classes": {"Conf": {"fields": {"zzz": "int"}}}})
    second = track("9.11", {"classes": {"Conf": {"fields": {"zzz": "int"}}}})
    assert one("zzz: 1", registry=Registry(first, second))[2].endswith("; it exists in 9.10, 9.11")
    assert one("zzz: 1", registry=Registry())[2].endswith("has no such field")


def test_a_suggestion_only_for_a_close_spelling():
    assert one("sizeof: 1")[2] == "unknown key 'sizeof': Conf in TRT-LLM 9.9 has no such field"  # 0.73 like sizes
    assert one("sizs: [1]")[2].endswith("(did you mean 'sizes'?)")


def test_a_union_with_its_own_discriminator():
    checker = FieldChecker(track(), None, yaml_mode=True)
    assert checker.check_union("Kinded", y("decoding_type: Eagle"), "k") == [
        (1, 1, "'k' needs 'kind' (TRT-LLM 9.9 knows: Eagle)")]
    assert checker.check_union("Kinded", y("kind: Eagle\nmax_draft_len: 2"), "k") == []
    assert checker.check_union("Kinded", y("kind: Eagle\nmax_draft_len: x"), "k") == [
        (2, 16, "'k.max_draft_len' must be int, got 'x'")]
    assert checker.check_union("Kinded", y("[1]"), "k") == [(1, 1, "'k' must be a mapping with 'kind', got a list")]


def test_a_config_call_of_a_class_outside_the_union_is_not_checked_as_a_member():
    checker = FieldChecker(track(), None, yaml_mode=False)
    checker.backend = "pytorch"
    trt_only = PVal("map", 1, 1, tag="call:TrtOnly", entries=[])
    assert checker.check_class("TrtOnly", trt_only, where="w") == [
        (1, 1, "TrtOnly does not support the pytorch backend (it needs tensorrt)")]
    assert checker.check_union("Spec", trt_only, "spec") == []


def test_python_values_carry_their_kind_and_position():
    got = expr("[None, True, 3, 2.5, 'x', b'y',\n -3, -2.5, name]")
    assert got.items == [
        PVal("scalar", 1, 2, value=None, tag="null"), PVal("scalar", 1, 8, value=True, tag="bool"),
        PVal("scalar", 1, 14, value=3, tag="int"), PVal("scalar", 1, 17, value=2.5, tag="float"),
        PVal("scalar", 1, 22, value="x", tag="str"), PVal("opaque", 1, 27),
        PVal("scalar", 2, 2, value=-3, tag="int"), PVal("scalar", 2, 6, value=-2.5, tag="float"),
        PVal("opaque", 2, 12)]
    # a node built by hand, without a position: line 0, column 0
    assert from_ast(ast.Constant(3)) == PVal("scalar", 0, 0, value=3, tag="int")
    assert from_ast(ast.Name("x")) == PVal("opaque", 0, 0)


def test_config_calls_nest_in_keywords_and_dict_values():
    names = {"NGram": "NGramConf", "Outer": "Conf"}

    def call_class(func):
        return names.get(getattr(func, "id", ""))

    outer = expr("Outer(spec=NGram(k=1))", call_class)
    assert outer.tag == "call:Conf" and outer.get("spec").tag == "call:NGramConf"
    assert expr("{'spec': NGram(k=1)}", call_class).get("spec").tag == "call:NGramConf"


def test_keys_after_an_unknown_one_are_still_checked():
    assert check("must: 1\nzzz: 1\nn: x\n") == [
        (2, 1, "unknown key 'zzz': Conf in TRT-LLM 9.9 has no such field"), (3, 4, "'n' must be int, got 'x'")]


class RecordedTrack(Track):
    """A track whose behaviour record says whether the release downloads hub ids."""

    @property
    def behaviour(self):
        return SimpleNamespace(facts={fid: SimpleNamespace(value=v, confidence="confirmed")
                                      for fid, v in self._parts["facts"].items()})


def test_a_hub_id_where_the_record_says_the_release_will_not_download_it():
    facts = {"hub_id_as_target": False, "hub_id_as_speculative_model": False}
    checker = FieldChecker(RecordedTrack("9.9", [], Path("/nonexistent"), _parts={"llm_api": SNAP, "facts": facts}),
                           None, yaml_mode=True)
    got = checker.check_class("TorchLlmArgs", y("model: org/name\nspeculative_config:\n  decoding_type: Eagle\n"
                                                "  speculative_model_dir: org/draft\n"))
    assert [(line, col) for line, col, _ in got] == [(1, 8), (4, 26)]
    assert got[0][2].startswith("'model' is 'org/name', a Hugging Face hub id, but TRT-LLM 9.9 does not download "
                                "target models (behaviour hub_id_as_target: false, confirmed)")
    assert got[1][2].startswith("'speculative_config.speculative_model_dir' is 'org/draft', a Hugging Face hub id, but "
                                "TRT-LLM 9.9 does not download draft models or EAGLE-3 heads")
    assert checker.check_class("Sub", y("model: org/name")) == []  # `model` of another class is not the target
    facts.update(hub_id_as_target=True)
    assert len(checker.check_class("TorchLlmArgs", y("model: org/name"))) == 0


def test_rules_read_float_values():
    t = track()
    assert field_rules(t, {"items_gt": 0}, y("[0.5, -0.5]"), "s") == [(1, 7, "'s[1]' must be > 0 (got -0.5)")]
    rule = {"kind": "requires", "fields": ["k"], "positive": True}
    assert rule_check(rule, "k: 0.0") == [(1, 4, "'w.k' must be > 0 for C (got 0.0)")]


def test_rule_findings_sit_on_the_decoding_type_key_when_there_is_one():
    rule = {"kind": "requires", "fields": ["k"]}
    assert rule_check(rule, "size: 1\ndecoding_type: NGram") == [(2, 1, "C needs 'w.k'")]
    assert rule_check(rule, "size: 1\nother: 2") == [(1, 1, "C needs 'w.k'")]
    checker = FieldChecker(track(), None, yaml_mode=True)
    nested = y("top:\n  size: 1\n  decoding_type: NGram\n").get("top")
    assert class_rules(checker, "C", {"rules": [rule]}, nested, "", require=True) == [(3, 3, "C needs 'k'")]
    bare = y("top:\n  size: 1\n").get("top")
    assert class_rules(checker, "C", {"rules": [rule]}, bare, "", require=True) == [(2, 3, "C needs 'k'")]


def test_a_rule_that_has_nothing_to_judge_does_not_stop_the_next_one():
    later = {"kind": "exclusive", "fields": ["a", "b"]}
    msg = (3, 1, "'w.a' and 'w.b: true' cannot be used together")
    checker = FieldChecker(track(), None, yaml_mode=True)
    for first, text in ((CG, "a: 1\nenable_padding: x\nb: true"), (CG, "a: 1\nmax_batch_size: 4\nb: true"),
                        (CG, "batch_sizes: [x]\nmax_batch_size: 4\nb: true\na: 1"),
                        ({"kind": "requires_value", "field": "zz", "needs": {"a": 2}}, "a: 1\nc: 1\nb: true"),
                        ({"kind": "requires", "fields": ["a"]}, "a: 1\nc: 1\nb: true")):
        got = class_rules(checker, "C", {"rules": [first, later]}, y(text), "w", require=True, only=("exclusive",)
                          if first["kind"] == "requires" else None)
        assert got == [msg], (first, text)


def test_requires_value_goes_on_past_an_unreadable_value():
    rule = {"kind": "requires_value", "field": "a", "needs": {"mode": "fast", "k": 2}}
    checker = FieldChecker(track(), None, yaml_mode=False)
    v = expr("{'x': 0,\n 'a': 1, 'mode': m, 'k': 3}")
    assert class_rules(checker, "C", {"rules": [rule]}, v, "", require=True) == [(2, 2, "'a' needs k: 2")]


def test_an_exclusive_rule_reads_its_first_two_fields():
    rule = {"kind": "exclusive", "fields": ["a", "b", "c"]}
    assert rule_check(rule, "a: 1\nb: true\nc: true") == [(2, 1, "'w.a' and 'w.b: true' cannot be used together")]


def test_a_call_inside_a_call_is_judged_on_its_backend_alone():
    checker = FieldChecker(track(), None, yaml_mode=False)
    cls = {"fields": {"a": {"type": "int"}, "b": {"type": "bool"}},
           "rules": [{"kind": "exclusive", "fields": ["a", "b"]}, {"kind": "backend", "allowed": ["pytorch"]}]}
    checker.track._parts["llm_api"] = {**SNAP, "classes": {**SNAP["classes"], "Both": cls}}
    call = PVal("map", 1, 1, tag="call:Both", entries=[("a", 1, 2, PVal("scalar", 1, 4, 1, "int")),
                                                       ("b", 1, 6, PVal("scalar", 1, 8, True, "bool"))])
    checker.backend = "pytorch"
    assert checker.check_class("Both", call, where="w") == []
    assert checker.check_class("Both", call) == [(1, 6, "'a' and 'b: true' cannot be used together")]


def test_a_scalar_tagged_as_a_collection_is_read_as_its_text():
    """PyYAML builds a mapping, list or set in two steps (an empty one, then its content); only a deep
    build takes the second, where a scalar under such a tag fails and the value falls back to its text,
    as for any tag that cannot be built. A shallow build would hand on the empty collection."""
    for tag in ("!!map", "!!seq", "!!set", "!!omap", "!!pairs"):
        v = y(f"a: {tag} 8\n").get("a")
        assert (v.value, v.tag) == ("8", "str"), tag
    assert check("must: 1\nn: !!map 8\nmode: !!seq a\n") == []


def test_a_checker_knows_no_backend_until_the_file_names_one():
    assert FieldChecker(track(), None, yaml_mode=True).backend is None
