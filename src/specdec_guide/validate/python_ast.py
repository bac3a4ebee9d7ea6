"""Python snippets and jupytext notebooks: the parts that name TensorRT-LLM, checked by AST.

* ``from tensorrt_llm.x import Y`` / ``import tensorrt_llm.x``: the module and name must be in
  the track's ``modules`` (or be an ``interfaces``/``classes`` ``import:`` path).
* ``Y(kw=...)`` where ``Y`` is an imported TensorRT-LLM class the snapshot describes: every
  keyword must be one of its fields or aliases, literal values are type-checked; ``LLM(...)``
  takes the fields of ``TorchLlmArgs``.
* ``class D(Drafter)``: the abstract methods of the interface must be defined with parameters
  TensorRT-LLM can call.

Everything else in the file is left alone; running it is the job of the CPU tests.
"""

from __future__ import annotations

import ast
import re
import unicodedata

from specdec_guide.validate.behaviour_rules import counter_assert_findings
from specdec_guide.validate.fields import FieldChecker
from specdec_guide.releases.tracks import Registry, Track
from specdec_guide.validate.values import PVal, from_ast

ROOT = "tensorrt_llm"
_MAGIC = re.compile(r"^\s*[%!]")
# Calls whose keywords are the fields of another class.
CALL_CLASS = {"LLM": "TorchLlmArgs"}


def strip_magics(text: str) -> str:
    """IPython magics and shell escapes are not Python; blank them, keeping line numbers."""
    return "\n".join("" if _MAGIC.match(line) else line for line in text.split("\n"))


def count_cells(text: str) -> int:
    """Code cells of a jupytext percent notebook (at least 1)."""
    cells = [ln for ln in text.split("\n") if ln.startswith("# %%")]
    code = [ln for ln in cells if "[markdown]" not in ln and "[md]" not in ln]
    return max(1, len(code))


class _Snapshot:
    """Name lookups in one track's llm_api.yaml."""

    def __init__(self, track: Track):
        self.track = track
        self.modules = {str(k): v or {} for k, v in track.modules().items()}
        self.import_paths = {}  # "pkg.mod.Name" -> ("interface"|"class", Name)
        for name, spec in track.interfaces().items():
            if isinstance(spec, dict) and spec.get("import"):
                self.import_paths[str(spec["import"])] = ("interface", str(name))
        for name, spec in track.classes().items():
            if isinstance(spec, dict) and spec.get("import"):
                self.import_paths[str(spec["import"])] = ("class", str(name))
        self.private_modules = {p.rsplit(".", 1)[0] for p in self.import_paths}

    def module_known(self, mod: str) -> bool:
        known = set(self.modules) | self.private_modules
        return mod in known or any(k.startswith(mod + ".") for k in known)

    def name_known(self, mod: str, name: str) -> bool:
        if f"{mod}.{name}" in self.import_paths or self.module_known(f"{mod}.{name}"):
            return True
        spec = self.modules.get(mod)
        if spec is None:
            return False
        names = spec.get("names")
        return names is None or name in names

    def module_listed(self, mod: str) -> bool:
        return mod in self.modules or mod in self.private_modules


def _elsewhere(registry: Registry | None, track: Track, pred) -> str:
    if not registry:
        return ""
    hits = [t.id for t in registry.others(track) if pred(_Snapshot(t))]
    return f"; it exists in {', '.join(hits)}" if hits else ""


def check(text: str, track: Track, registry: Registry | None, notebook: bool = False) -> tuple[list, int]:
    """``(findings, references)``: references counts the TensorRT-LLM names the file uses."""
    source = strip_magics(text) if notebook else text
    try:
        tree = ast.parse(source)
    except SyntaxError as err:
        return [(err.lineno or 1, err.offset or 1, f"Python syntax error: {err.msg}")], 0
    # Names in an import are NFKC-normalised by the parser: a file whose normalised text never
    # names the package imports nothing of it, and no call or base class can resolve to it.
    if ROOT not in unicodedata.normalize("NFKC", source):
        return [], 0
    snap = _Snapshot(track)
    bound: dict[str, tuple] = {}  # local name -> ("module", mod) | ("name", mod, name)
    out: list = []
    refs = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name != ROOT and not alias.name.startswith(ROOT + "."):
                    continue
                refs += 1
                pos = (alias.lineno, alias.col_offset + 1)
                if not snap.module_known(alias.name):
                    hint = _elsewhere(registry, track, lambda s, m=alias.name: s.module_known(m))
                    out.append((*pos, f"module '{alias.name}' is not in TRT-LLM {track.id}{hint}"))
                if alias.asname:
                    bound[alias.asname] = ("module", alias.name)
                else:
                    bound[ROOT] = ("module", ROOT)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            mod = node.module
            if mod != ROOT and not mod.startswith(ROOT + "."):
                continue
            refs += 1
            if not snap.module_listed(mod):
                hint = _elsewhere(registry, track, lambda s, m=mod: s.module_listed(m))
                out.append((node.lineno, node.col_offset + 1,
                            f"module '{mod}' is not in the TRT-LLM {track.id} snapshot{hint}"))
                continue
            for alias in node.names:
                if alias.name == "*":
                    continue
                if not snap.name_known(mod, alias.name):
                    hint = _elsewhere(registry, track, lambda s, m=mod, n=alias.name: s.name_known(m, n))
                    out.append((alias.lineno, alias.col_offset + 1,
                                f"'{alias.name}' cannot be imported from {mod} in TRT-LLM {track.id}{hint}"))
                bound[alias.asname or alias.name] = ("name", mod, alias.name)
    if refs:  # a file that uses TensorRT-LLM: what its release does with the counters applies
        out.extend(counter_assert_findings(tree, track, source))
    if not bound:  # calls and base classes resolve only through a bound name
        return sorted(set(out)), refs
    checker = FieldChecker(track, registry, yaml_mode=False)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            out.extend(_check_call(node, bound, snap, checker, track))
        elif isinstance(node, ast.ClassDef):
            out.extend(_check_subclass(node, bound, snap, track))
    return sorted(set(out)), refs


def _resolve(expr: ast.AST, bound: dict) -> tuple[str, str] | None:
    """``(module, name)`` for ``Name`` or ``alias.attr.Name`` bound to TensorRT-LLM."""
    if isinstance(expr, ast.Name):
        b = bound.get(expr.id)
        return (b[1], b[2]) if b and b[0] == "name" else None
    if isinstance(expr, ast.Attribute):
        chain = []
        cur = expr
        while isinstance(cur, ast.Attribute):
            chain.append(cur.attr)
            cur = cur.value
        if isinstance(cur, ast.Name) and bound.get(cur.id, ("",))[0] == "module":
            parts = [bound[cur.id][1], *reversed(chain)]
            return ".".join(parts[:-1]), parts[-1]
    return None


def _check_call(node: ast.Call, bound, snap: _Snapshot, checker: FieldChecker, track: Track) -> list:
    target = _resolve(node.func, bound)
    if target is None:
        return []
    mod, name = target
    out = []
    if isinstance(node.func, ast.Attribute) and snap.module_listed(mod) and not snap.name_known(mod, name):
        out.append((node.func.lineno, node.func.col_offset + 1, f"'{mod}.{name}' is not in TRT-LLM {track.id}"))
    cls = CALL_CLASS.get(name, name)
    if name in track.classes():
        cls = name
    if cls not in track.classes():
        return out
    def call_class(func):
        hit = _resolve(func, bound)
        return hit[1] if hit and hit[1] in track.classes() else None

    entries = [(kw.arg, kw.lineno, kw.col_offset + 1, from_ast(kw.value, call_class)) for kw in node.keywords if kw.arg]
    complete = not node.args and all(kw.arg for kw in node.keywords)
    pv = PVal("map", node.lineno, node.col_offset + 1, entries=entries)
    checker.call_label = f" for {name}()"
    checker.backend = _call_backend(cls, mod, pv)
    out.extend(checker.check_class(cls, pv, require=complete))
    checker.call_label = ""
    checker.backend = None
    return out


def _call_backend(cls: str, mod: str, call: PVal) -> str | None:
    """The backend an LLM-args call runs on: the engine LLM is TensorRT, TorchLlmArgs is PyTorch
    unless a literal ``backend=`` says otherwise; None for any other class."""
    if cls == "TrtLlmArgs" or mod.endswith("_tensorrt_engine"):
        return "tensorrt"
    if cls != "TorchLlmArgs":
        return None
    b = call.get("backend")
    if b is not None and b.kind == "scalar" and b.tag == "str":
        return str(b.value)
    return None if b is not None and b.kind == "opaque" else "pytorch"


def _params(fn: ast.FunctionDef) -> tuple[list, bool, bool, list]:
    """Positional params after self as ``(name, has_default)``, *args, **kwargs, required kw-only."""
    pos = [*fn.args.posonlyargs, *fn.args.args][1:]
    ndef = len(fn.args.defaults)
    allpos = [*fn.args.posonlyargs, *fn.args.args]
    first_default = len(allpos) - ndef
    named = [(a.arg, i + 1 >= first_default) for i, a in enumerate(pos)]
    kwreq = [a.arg for a, d in zip(fn.args.kwonlyargs, fn.args.kw_defaults) if d is None]
    return named, fn.args.vararg is not None, fn.args.kwarg is not None, kwreq


def _check_subclass(node: ast.ClassDef, bound, snap: _Snapshot, track: Track) -> list:
    out = []
    for base in node.bases:
        target = _resolve(base, bound)
        if target is None:
            continue
        mod, name = target
        full = f"{mod}.{name}"
        iface_name = None
        if snap.import_paths.get(full, ("",))[0] == "interface":
            iface_name = snap.import_paths[full][1]
        elif name in track.interfaces():
            iface_name = name
        if iface_name is None:
            continue
        methods = (track.interfaces()[iface_name] or {}).get("methods") or {}
        defined = {f.name: f for f in node.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}
        for mname, mspec in methods.items():
            mspec = mspec or {}
            params = [str(p) for p in mspec.get("params") or []]
            sig = f"{mname}(self{''.join(', ' + p for p in params)})"
            fn = defined.get(mname)
            if fn is None:
                if mspec.get("abstract"):
                    out.append((node.lineno, node.col_offset + 1, f"class {node.name} subclasses {iface_name} but does "
                                f"not define {sig}, which TRT-LLM {track.id} calls"))
                continue
            problem = _incompatible(fn, params)
            if problem:
                out.append((fn.lineno, fn.col_offset + 1, f"{node.name}.{mname}: {problem}; TRT-LLM {track.id} "
                            f"calls {sig}"))
    return out


def _incompatible(fn: ast.FunctionDef, params: list[str]) -> str:
    named, varargs, varkw, kwreq = _params(fn)
    want = [(p.split("=", 1)[0].strip(), "=" in p) for p in params]
    for i, (pname, pdef) in enumerate(want):
        if i < len(named):
            name, has_def = named[i]
            if name != pname and not varkw:
                return f"parameter {i + 1} is '{name}', expected '{pname}'"
            if pdef and not has_def:
                return f"parameter '{name}' needs a default (it may be omitted by the caller)"
        elif not (varargs and varkw):
            return f"missing parameter '{pname}'"
    for name, has_def in named[len(want):]:
        if not has_def:
            return f"extra parameter '{name}' needs a default"
    if kwreq:
        return f"keyword-only parameter '{kwreq[0]}' needs a default"
    return ""
