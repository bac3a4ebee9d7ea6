#!/usr/bin/env python3
"""Regenerate the llm_api.yaml and cli.yaml facts of a schema snapshot from an installed TensorRT-LLM.

    python scripts/regen_schema.py OUT_DIR [--like src/specdec_guide/schemas/1.1.0]

Run it where ``tensorrt_llm`` is installed (the Triton ``-trtllm-python-py3`` container, a GPU
machine). It reads facts only: pydantic ``model_fields`` of the LLM-args classes and of every
class they reference, the decoding-config subclasses and their ``decoding_type`` spellings,
``SamplingParams`` dataclass fields, module ``__all__``, the Drafter interface's abstract
methods, and the options of the console scripts (click introspection, else ``--help``).
``--like`` names a recorded snapshot whose modules, classes and commands are regenerated as
well, so nothing recorded goes unchecked. Every fact's ``source:`` points at the installed
package and version. triton.yaml is not regenerated (it describes files in the container).

The GPU tier (tests/gpu/test_schema_snapshot.py) calls :func:`regenerate` and :func:`compare`.

Without an installed release, the LLM-API facts can be re-derived from the release's rendered
source page instead (TensorRT-LLM gh-pages ``<version>/_modules/tensorrt_llm/llmapi/llm_args.html``,
the page each snapshot names under ``sources.llm_args``):

    python scripts/regen_schema.py --page llm_args.html --check src/specdec_guide/schemas/1.2.1

parses the page (HTML -> Python source -> ``ast``), extracts every pydantic class's fields and
the ``decoding_type`` table of ``DecodingBaseConfig.from_dict``, prints the page's length and
SHA-256, and exits 1 when the snapshot and the page disagree. The page is not stored in this
repository (upstream code), so the test suite runs this only where a copy is provided
(``SPECDEC_LLM_ARGS_PAGE_<version with underscores>``) and skips, saying so, elsewhere.
"""

from __future__ import annotations

import argparse
import dataclasses
import enum
import importlib
import inspect
import re
import subprocess
import sys
import typing
from pathlib import Path

import yaml

SOURCE = "installed"
ROOT_CLASSES = ("TorchLlmArgs", "TrtLlmArgs", "SamplingParams")
ARGS_MODULE = "tensorrt_llm.llmapi.llm_args"
DEFAULT_MODULES = ("tensorrt_llm", "tensorrt_llm.llmapi")
DEFAULT_COMMANDS = ("trtllm-serve", "trtllm-bench", "trtllm-build", "trtllm-eval")
DRAFTER_IMPORT = "tensorrt_llm._torch.speculative.drafter.Drafter"


def import_trtllm():
    """Import tensorrt_llm only when asked; a clear message and exit 2 when it is absent."""
    try:
        return importlib.import_module("tensorrt_llm")
    except Exception as err:  # ImportError, or a CUDA library missing on a CPU machine
        print(f"regen_schema: cannot import tensorrt_llm ({type(err).__name__}: {err}).\n"
              "Run this where TensorRT-LLM is installed, e.g. inside "
              "nvcr.io/nvidia/tritonserver:<yy.mm>-trtllm-python-py3 on an NVIDIA GPU machine.", file=sys.stderr)
        raise SystemExit(2) from None


# ---- types -------------------------------------------------------------------------
def type_string(ann, seen: list | None = None) -> str:
    """An annotation in the snapshot grammar; referenced pydantic models are appended to ``seen``."""
    if ann is None or ann is type(None):
        return "null"
    if ann is typing.Any:
        return "any"
    origin = typing.get_origin(ann)
    args = typing.get_args(ann)
    if origin is typing.Annotated:
        return type_string(args[0], seen)
    if origin is typing.Union or (origin is not None and getattr(origin, "__name__", "") == "UnionType"):
        parts = []
        for a in args:
            s = type_string(a, seen)
            if s not in parts:
                parts.append(s)
        nulls = [p for p in parts if p == "null"]
        return " | ".join([p for p in parts if p != "null"] + nulls)
    if origin is typing.Literal:
        return "literal[" + ", ".join(str(a.value if isinstance(a, enum.Enum) else a) for a in args) + "]"
    if origin in (list, tuple, set, frozenset) or (origin is not None and getattr(origin, "__name__", "") in
                                                   ("List", "Sequence", "Tuple", "Set")):
        return f"list[{type_string(args[0], seen) if args else 'any'}]"
    if origin is dict or (origin is not None and getattr(origin, "__name__", "") in ("Dict", "Mapping")):
        return f"dict[str, {type_string(args[1], seen) if len(args) == 2 else 'any'}]"
    if isinstance(ann, type):
        if issubclass(ann, bool):
            return "bool"
        if issubclass(ann, enum.Enum):
            return "literal[" + ", ".join(str(m.value) for m in ann) + "]"
        if issubclass(ann, int):
            return "int"
        if issubclass(ann, float):
            return "float"
        if issubclass(ann, str) or ann.__name__ in ("Path", "PosixPath", "PurePath"):
            return "str"
        if ann in (list, tuple, set):
            return "list[any]"
        if ann is dict:
            return "dict[str, any]"
        if hasattr(ann, "model_fields") or dataclasses.is_dataclass(ann):
            if seen is not None and ann not in seen:
                seen.append(ann)
            return ann.__name__
    return "object"


def _plain(value):
    """A default that YAML can hold, else None (left out)."""
    if isinstance(value, enum.Enum):
        value = value.value
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)) and all(isinstance(v, (bool, int, float, str)) for v in value):
        return list(value)
    if isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, (bool, int, float, str, type(None)))
                                       for k, v in value.items()):
        return dict(value)
    return None


def _constraints(field) -> dict:
    out = {}
    for m in getattr(field, "metadata", []) or []:
        for key in ("gt", "ge", "lt", "le"):
            if getattr(m, key, None) is not None:
                out[key] = getattr(m, key)
    return out


def _aliases(field) -> list[str]:
    names = []
    if getattr(field, "alias", None):
        names.append(field.alias)
    va = getattr(field, "validation_alias", None)
    for choice in getattr(va, "choices", []) or ([va] if isinstance(va, str) else []):
        if isinstance(choice, str) and choice not in names:
            names.append(choice)
    return names


def class_facts(cls, seen: list) -> dict:
    facts: dict = {"source": SOURCE, "import": f"{cls.__module__}.{cls.__name__}"}
    fields: dict = {}
    if hasattr(cls, "model_fields"):
        extra = (getattr(cls, "model_config", {}) or {}).get("extra")
        facts["extra"] = str(getattr(extra, "value", extra) or "ignore")
        for name, f in cls.model_fields.items():
            if name.startswith("_"):
                continue
            spec: dict = {"type": type_string(f.annotation, seen)}
            if f.is_required():
                spec["required"] = True
            else:
                d = _plain(f.default)
                if d is not None or f.default is None:
                    spec["default"] = d
            spec.update(_constraints(f))
            aliases = [a for a in _aliases(f) if a != name]
            if aliases:
                spec["aliases"] = aliases
            if "object" in spec["type"].split(" | "):
                spec["yaml"] = False
            fields[name] = spec
    elif dataclasses.is_dataclass(cls):
        hints = typing.get_type_hints(cls)
        for f in dataclasses.fields(cls):
            if f.name.startswith("_") or not f.init:
                continue
            spec = {"type": type_string(hints.get(f.name), seen)}
            if f.default is not dataclasses.MISSING:
                spec["default"] = _plain(f.default)
            elif f.default_factory is dataclasses.MISSING:  # type: ignore[misc]
                spec["required"] = True
            fields[f.name] = spec
    facts["fields"] = fields
    return facts


def decoding_spellings(cls, base, candidates) -> list[str]:
    """The discriminator values that select ``cls``: its own literal/ClassVar, plus any candidate
    that ``base.from_dict`` turns into an instance of ``cls``."""
    found: list[str] = []
    field = getattr(cls, "model_fields", {}).get("decoding_type")
    if field is not None and typing.get_origin(field.annotation) is typing.Literal:
        found += [str(a) for a in typing.get_args(field.annotation)]
    own = cls.__dict__.get("decoding_type")
    if isinstance(own, str) and own not in found:
        found.append(own)
    from_dict = getattr(base, "from_dict", None)
    for cand in candidates:
        if cand in found or from_dict is None:
            continue
        try:
            obj = from_dict({"decoding_type": cand, "max_draft_len": 1})
        except Exception:
            continue
        if type(obj) is cls:
            found.append(cand)
    return found


def llm_api_facts(recorded: dict | None = None) -> dict:
    trtllm = import_trtllm()
    recorded = recorded or {}
    args_mod = importlib.import_module(ARGS_MODULE)
    seen: list = []
    for name in ROOT_CLASSES + tuple((recorded.get("classes") or {}).keys()):
        obj = getattr(args_mod, name, None) or getattr(trtllm, name, None)
        if obj is not None and obj not in seen:
            seen.append(obj)
    base = getattr(args_mod, "DecodingBaseConfig", None)
    members = []
    if base is not None:
        stack = list(base.__subclasses__())
        while stack:
            sub = stack.pop(0)
            if sub not in members:
                members.append(sub)
                stack.extend(sub.__subclasses__())
        for m in members:
            if m not in seen:
                seen.append(m)
    classes: dict = {}
    i = 0
    while i < len(seen):  # class_facts appends referenced models to `seen`
        cls = seen[i]
        classes[cls.__name__] = class_facts(cls, seen)
        i += 1
    candidates = set()
    for spec in (recorded.get("classes") or {}).values():
        candidates.update(str(s) for s in (spec or {}).get("decoding_type") or [])
    for m in members:
        spellings = decoding_spellings(m, base, sorted(candidates))
        if spellings:
            classes[m.__name__]["decoding_type"] = spellings
    modules = {}
    for mod_name in sorted(set(DEFAULT_MODULES) | set((recorded.get("modules") or {}).keys())):
        try:
            mod = importlib.import_module(mod_name)
        except Exception as err:
            modules[mod_name] = {"source": SOURCE, "error": f"{type(err).__name__}: {err}"}
            continue
        names = getattr(mod, "__all__", None) or [n for n in dir(mod) if not n.startswith("_")]
        modules[mod_name] = {"source": SOURCE, "names": sorted(set(map(str, names)))}
    facts = {
        "version": str(trtllm.__version__),
        "sources": {SOURCE: {"package": "tensorrt_llm", "version": str(trtllm.__version__),
                             "note": "regenerated by scripts/regen_schema.py from the installed package"}},
        "modules": modules,
        "classes": classes,
        "unions": {"SpeculativeConfig": {"discriminator": "decoding_type",
                                         "members": [m.__name__ for m in members if "decoding_type" in classes[m.__name__]]}},
        "interfaces": interface_facts(recorded),
    }
    return facts


def interface_facts(recorded: dict) -> dict:
    out = {}
    wanted = {name: (spec or {}).get("import") for name, spec in (recorded.get("interfaces") or {}).items()}
    wanted.setdefault("Drafter", DRAFTER_IMPORT)
    for name, path in wanted.items():
        if not path:
            continue
        mod_name, _, attr = str(path).rpartition(".")
        try:
            cls = getattr(importlib.import_module(mod_name), attr)
        except Exception as err:
            out[name] = {"import": path, "source": SOURCE, "error": f"{type(err).__name__}: {err}"}
            continue
        methods = {}
        abstract = getattr(cls, "__abstractmethods__", set())
        for mname, fn in inspect.getmembers(cls, inspect.isfunction):
            if mname.startswith("_"):
                continue
            params = []
            for p in list(inspect.signature(fn).parameters.values())[1:]:
                if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                    params.append(("*" if p.kind == p.VAR_POSITIONAL else "**") + p.name)
                elif p.default is p.empty:
                    params.append(p.name)
                else:
                    params.append(f"{p.name}={p.default!r}")
            methods[mname] = {"params": params, "abstract": mname in abstract}
        out[name] = {"import": path, "source": SOURCE, "methods": methods}
    return out


# ---- CLIs --------------------------------------------------------------------------
_FLAG = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)")


def _click_facts(cmd) -> dict:
    import click

    facts: dict = {"flags": sorted({o for p in cmd.params if isinstance(p, click.Option)
                                    for o in (*p.opts, *p.secondary_opts)})}
    if isinstance(cmd, click.Group):
        facts["subcommands"] = {name: _click_facts(sub) for name, sub in sorted(cmd.commands.items())}
        if not facts["flags"]:
            del facts["flags"]
    return facts


def _help_flags(argv: list[str]) -> list[str] | None:
    try:
        proc = subprocess.run([*argv, "--help"], capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = proc.stdout + proc.stderr
    if proc.returncode != 0 and "usage" not in text.lower():
        return None
    return sorted(set(_FLAG.findall(text)) - {"-h", "--help"})


def cli_facts(recorded: dict | None = None) -> dict:
    trtllm = import_trtllm()
    from importlib import metadata

    recorded = recorded or {}
    wanted = list(DEFAULT_COMMANDS) + [c for c in (recorded.get("commands") or {}) if c not in DEFAULT_COMMANDS]
    scripts = {}
    for dist_name in ("tensorrt_llm", "tensorrt-llm"):
        try:
            scripts = {ep.name: ep for ep in metadata.distribution(dist_name).entry_points
                       if ep.group == "console_scripts"}
            break
        except metadata.PackageNotFoundError:
            continue
    commands = {}
    for name in wanted:
        facts = None
        ep = scripts.get(name)
        if ep is not None:
            try:
                obj = ep.load()
                import click

                if isinstance(obj, click.Command):
                    facts = _click_facts(obj)
            except Exception:
                facts = None
            if facts is None:
                flags = _help_flags([name])
                facts = {"flags": flags} if flags is not None else None
        elif name.endswith(".py"):
            path = ((recorded.get("commands") or {}).get(name) or {}).get("container_path") or \
                   ((recorded.get("commands") or {}).get(name) or {}).get("path")
            if path and Path(path).is_file():
                flags = _help_flags([sys.executable, str(path)])
                facts = {"flags": flags} if flags is not None else None
        if facts is not None:
            default = ((recorded.get("commands") or {}).get(name) or {}).get("default_subcommand")
            if default and default in facts.get("subcommands", {}):
                facts["default_subcommand"] = default
            commands[name] = {"source": SOURCE, **facts}
    return {
        "version": str(trtllm.__version__),
        "sources": {SOURCE: {"package": "tensorrt_llm", "version": str(trtllm.__version__),
                             "note": "regenerated by scripts/regen_schema.py (click introspection or --help)"}},
        "commands": commands,
    }


def regenerate(like: Path | None = None) -> dict:
    """``{"llm_api": facts, "cli": facts}`` from the installed package."""
    def load(part):
        p = like / f"{part}.yaml" if like else None
        return (yaml.safe_load(p.read_text()) or {}) if p and p.is_file() else {}

    return {"llm_api": llm_api_facts(load("llm_api")), "cli": cli_facts(load("cli"))}


# ---- comparison ----------------------------------------------------------------------
def _norm_type(text) -> tuple:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    from specdec_guide.validate.typegrammar import parse_type

    t = parse_type(text)
    if t[0] == "union":
        return ("union", tuple(sorted(t[1], key=repr)))
    return t


def _fields(cls: dict) -> dict:
    return {str(k): (v if isinstance(v, dict) else {"type": v}) for k, v in (cls.get("fields") or {}).items()}


def compare(recorded: dict, installed: dict) -> list[str]:
    """Differences between a recorded snapshot and regenerated facts (both ``{"llm_api", "cli"}``)."""
    diffs: list[str] = []
    rl, il = recorded.get("llm_api") or {}, installed.get("llm_api") or {}
    rclasses, iclasses = rl.get("classes") or {}, il.get("classes") or {}
    for cname, rc in rclasses.items():
        ic = iclasses.get(cname)
        if ic is None:
            diffs.append(f"class {cname}: recorded, not in the installed release")
            continue
        rf, inf = _fields(rc), _fields(ic)
        for fname in sorted(set(rf) - set(inf)):
            diffs.append(f"{cname}.{fname}: recorded, not a field of the installed release")
        for fname in sorted(set(inf) - set(rf)):
            diffs.append(f"{cname}.{fname}: a field of the installed release, not recorded")
        for fname in sorted(set(rf) & set(inf)):
            a, b = rf[fname], inf[fname]
            if a.get("type_check") != "loose" and _comparable(a.get("type")) != _comparable(b.get("type")):
                diffs.append(f"{cname}.{fname}: type recorded {a.get('type')!r}, installed {b.get('type')!r}")
            if bool(a.get("required")) != bool(b.get("required")):
                diffs.append(f"{cname}.{fname}: required recorded {bool(a.get('required'))}, installed "
                             f"{bool(b.get('required'))}")
            if "default" in a and "default" in b and a["default"] != b["default"]:
                diffs.append(f"{cname}.{fname}: default recorded {a['default']!r}, installed {b['default']!r}")
            for key in ("gt", "ge", "lt", "le"):
                if a.get(key) != b.get(key) and (key in a or key in b):
                    diffs.append(f"{cname}.{fname}: {key} recorded {a.get(key)!r}, installed {b.get(key)!r}")
        if sorted(rc.get("decoding_type") or []) != sorted(ic.get("decoding_type") or []):
            diffs.append(f"{cname}: decoding_type recorded {sorted(rc.get('decoding_type') or [])}, installed "
                         f"{sorted(ic.get('decoding_type') or [])}")
    for uname, ru in (rl.get("unions") or {}).items():
        iu = (il.get("unions") or {}).get(uname) or {}
        if sorted(ru.get("members") or []) != sorted(iu.get("members") or []):
            diffs.append(f"union {uname}: members recorded {sorted(ru.get('members') or [])}, installed "
                         f"{sorted(iu.get('members') or [])}")
    for mname, rm in (rl.get("modules") or {}).items():
        im = (il.get("modules") or {}).get(mname) or {}
        if "names" not in (rm or {}) or "names" not in im:
            if "error" in im:
                diffs.append(f"module {mname}: {im['error']}")
            continue
        for n in sorted(set(rm["names"]) - set(im["names"])):
            diffs.append(f"module {mname}: '{n}' recorded, not importable from the installed release")
        for n in sorted(set(im["names"]) - set(rm["names"])):
            diffs.append(f"module {mname}: '{n}' exported by the installed release, not recorded")
    for iname, ri in (rl.get("interfaces") or {}).items():
        ii = (il.get("interfaces") or {}).get(iname) or {}
        for mname, rmeth in ((ri or {}).get("methods") or {}).items():
            imeth = (ii.get("methods") or {}).get(mname)
            if imeth is None:
                diffs.append(f"interface {iname}.{mname}: recorded, not in the installed release")
            elif [p.split("=")[0] for p in rmeth.get("params") or []] != [p.split("=")[0] for p in imeth.get("params") or []]:
                diffs.append(f"interface {iname}.{mname}: params recorded {rmeth.get('params')}, installed "
                             f"{imeth.get('params')}")
    rcmds = (recorded.get("cli") or {}).get("commands") or {}
    icmds = (installed.get("cli") or {}).get("commands") or {}

    def flags_diff(label, r, i):
        if "flags" in (r or {}) and "flags" in (i or {}):
            rs, is_ = set(r["flags"]), set(i["flags"])
            for f in sorted(rs - is_):
                diffs.append(f"{label}: flag {f} recorded, not accepted by the installed release")
            for f in sorted(is_ - rs - {"--help"}):
                diffs.append(f"{label}: flag {f} accepted by the installed release, not recorded")

    for cname, rc in rcmds.items():
        ic = icmds.get(cname)
        if ic is None:
            diffs.append(f"command {cname}: recorded, not found in the installed release")
            continue
        flags_diff(cname, rc, ic)
        for sname, rs in ((rc or {}).get("subcommands") or {}).items():
            is_ = (ic.get("subcommands") or {}).get(sname)
            if is_ is None:
                diffs.append(f"command {cname} {sname}: recorded, not found in the installed release")
            else:
                flags_diff(f"{cname} {sname}", rs, is_)
    return diffs


# ---- the rendered release source page ----------------------------------------------------
_TAG = re.compile(r"<[^>]+>")


def page_source(html_text: str) -> str:
    """The Python source shown on a Sphinx ``_modules`` page: the highlighted block, tags removed."""
    import html as html_mod

    start = html_text.find('<div class="highlight"><pre>')
    end = html_text.find("</pre></div>", start)
    body = html_text[start:end] if start >= 0 and end > start else html_text
    body = re.sub(r'<a class="viewcode-back"[^>]*>\[docs\]</a>\n?', "", body)
    return html_mod.unescape(_TAG.sub("", body))


_PAGE_PRIMS = {"int": "int", "float": "float", "bool": "bool", "str": "str", "Path": "str", "Any": "any",
               "object": "object", "dict": "dict[str, any]", "list": "list[any]"}


def _page_type(node, enums: dict, known: set) -> str:
    """An annotation from the page's source in the snapshot grammar (same rules as :func:`type_string`)."""
    import ast

    if isinstance(node, ast.Constant) and node.value is None:
        return "null"
    if isinstance(node, ast.Name):
        if node.id in enums and enums[node.id] is None:
            return f"{node.id} | null"
        if node.id in enums:
            return "literal[" + ", ".join(enums[node.id]) + "]"
        if node.id in _PAGE_PRIMS:
            return _PAGE_PRIMS[node.id]
        return node.id if node.id in known else "object"
    if isinstance(node, ast.Attribute):
        return "object"
    if isinstance(node, ast.BinOp):  # A | B
        return " | ".join(dict.fromkeys([_page_type(node.left, enums, known), _page_type(node.right, enums, known)]))
    if isinstance(node, ast.Subscript):
        head = node.value.id if isinstance(node.value, ast.Name) else ""
        args = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
        if head == "Optional":
            inner = _page_type(args[0], enums, known)
            return inner if inner.endswith("null") else f"{inner} | null"
        if head == "Union":
            parts = list(dict.fromkeys(_page_type(a, enums, known) for a in args))
            nulls = [x for x in parts if x == "null"]
            return " | ".join([x for x in parts if x != "null"] + nulls)
        if head in ("List", "list", "Set", "set", "Tuple", "tuple", "Sequence"):
            return f"list[{_page_type(args[0], enums, known)}]"
        if head in ("Dict", "dict", "Mapping"):
            return f"dict[str, {_page_type(args[-1], enums, known)}]"
        if head == "Literal":
            return "literal[" + ", ".join(str(a.value) for a in args if isinstance(a, ast.Constant)) + "]"
    return "object"


def _page_field(item, enums: dict, known: set) -> dict:
    """``{type, required | default, gt/ge/lt/le}`` of one annotated class attribute."""
    import ast

    spec: dict = {"type": _page_type(item.annotation, enums, known)}
    value = item.value
    if value is None:
        spec["required"] = True
        return spec
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in ("Field", "PydanticField"):
        kw = {k.arg: k.value for k in value.keywords if k.arg}
        default = kw.get("default", value.args[0] if value.args else None)
        if "default_factory" in kw:
            spec["default"] = {} if getattr(kw["default_factory"], "id", "") != "list" else []
        elif default is None or (isinstance(default, ast.Constant) and default.value is Ellipsis):
            spec["required"] = True
        else:
            try:
                spec["default"] = ast.literal_eval(default)
            except ValueError:
                pass  # an expression (an enum member, a C++ default): left out
        for bound in ("gt", "ge", "lt", "le"):
            if bound in kw and isinstance(kw[bound], ast.Constant):
                spec[bound] = kw[bound].value
        return spec
    try:
        spec["default"] = ast.literal_eval(value)
    except ValueError:
        pass
    return spec


def _comparable(text) -> tuple:
    """A type for page-vs-snapshot comparison: Python-only alternatives (``object``) dropped when
    others remain, and literal alternatives folded into a ``str`` alternative (``Union[str, Enum]``)."""
    t = _norm_type(text)
    if t[0] != "union":
        return t
    members = [m for m in t[1] if m != ("object",)] or [("object",)]
    if ("prim", "str") in members:
        members = [m for m in members if m[0] != "literal"]
    return ("union", tuple(sorted(set(members), key=repr))) if len(set(members)) > 1 else members[0]


def page_facts(html_text: str) -> dict:
    """``{"classes": {name: {field: spec}}, "from_dict_keys": {...}, "chars", "sha256"}`` from a page.

    Field specs carry ``type`` (snapshot grammar), ``required`` or a literal ``default``, and the
    pydantic ``Field`` bounds; inherited fields are included, private and ``ClassVar`` ones left out.
    """
    import ast
    import hashlib

    tree = ast.parse(page_source(html_text))
    class_nodes = [n for n in tree.body if isinstance(n, ast.ClassDef)]
    enums: dict[str, list[str]] = {}
    python_only = set()  # enums whose members are not strings: a YAML file cannot name them
    for node in class_nodes:
        base_names = {getattr(b, "id", "") for b in node.bases}
        if base_names & {"Enum", "StrEnum", "IntEnum"}:
            members = [a.value.value for a in node.body if isinstance(a, ast.Assign)
                       and isinstance(a.value, ast.Constant) and isinstance(a.value.value, str)]
            if members:
                enums[node.name] = members
            else:
                python_only.add(node.name)
    known = {n.name for n in class_nodes} - python_only
    # `Name: TypeAlias = Optional[Union[...]]` at module level: the snapshot records it as a union
    for node in tree.body:
        if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
                and ast.unparse(node.annotation) == "TypeAlias"):
            optional = isinstance(node.value, ast.Subscript) and getattr(node.value.value, "id", "") == "Optional"
            enums.pop(node.target.id, None)
            known.add(node.target.id)
            if optional:
                enums[node.target.id] = None  # marker: alias of an Optional union
    own: dict[str, dict] = {}
    bases: dict[str, list[str]] = {}
    keys: dict[str, str] = {}
    for node in class_nodes:
        bases[node.name] = [b.id for b in node.bases if isinstance(b, ast.Name)]
        fields = {}
        for item in node.body:
            if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                ann = ast.unparse(item.annotation)
                if not item.target.id.startswith("_") and not ann.startswith("ClassVar"):
                    fields[item.target.id] = _page_field(item, enums, known)
            if isinstance(item, ast.FunctionDef) and item.name == "from_dict" and node.name == "DecodingBaseConfig":
                for sub in ast.walk(item):
                    if isinstance(sub, ast.Assign) and isinstance(sub.value, ast.Dict) and any(
                            isinstance(tg, ast.Name) and tg.id == "config_classes" for tg in sub.targets):
                        for k, v in zip(sub.value.keys, sub.value.values):
                            if isinstance(k, ast.Constant) and isinstance(v, ast.Name):
                                keys[str(k.value)] = v.id
        own[node.name] = fields

    def all_fields(name, seen=()):
        out: dict = {}
        for b in bases.get(name, []):
            if b in own and b not in seen:
                out.update(all_fields(b, (*seen, name)))
        out.update(own.get(name, {}))
        return out

    data = html_text.encode("utf-8")
    return {"classes": {n: all_fields(n) for n in own}, "from_dict_keys": keys,
            "chars": len(html_text), "sha256": hashlib.sha256(data).hexdigest()}


def check_page(recorded: dict, facts: dict) -> list[str]:
    """Differences between a snapshot's llm_api facts and a parsed release page: field names,
    types, required/defaults where the page states a literal, bounds, the decoding_type table,
    and the recorded page length/hash."""
    diffs = []
    for cname, spec in (recorded.get("classes") or {}).items():
        if spec.get("source") != "llm_args":
            continue
        if cname not in facts["classes"]:
            diffs.append(f"class {cname}: recorded, not defined on the page")
            continue
        rf, pf = _fields(spec), facts["classes"][cname]
        for f in sorted(set(rf) - set(pf)):
            diffs.append(f"{cname}.{f}: recorded, not a field on the page")
        for f in sorted(set(pf) - set(rf)):
            diffs.append(f"{cname}.{f}: a field on the page, not recorded")
        for f in sorted(set(rf) & set(pf)):
            a, b = rf[f], pf[f]
            loose = a.get("type_check") == "loose"  # deliberately looser than the annotation: see the note
            if not loose and b["type"] != "object" and _comparable(a.get("type")) != _comparable(b["type"]):
                diffs.append(f"{cname}.{f}: type recorded {a.get('type')!r}, page {b['type']!r}")
            if bool(a.get("required")) != bool(b.get("required")):
                diffs.append(f"{cname}.{f}: required recorded {bool(a.get('required'))}, page {bool(b.get('required'))}")
            if "default" in a and "default" in b and a["default"] != b["default"]:
                diffs.append(f"{cname}.{f}: default recorded {a['default']!r}, page {b['default']!r}")
            for key in ("gt", "ge", "lt", "le"):
                if key in b and a.get(key) != b[key]:
                    diffs.append(f"{cname}.{f}: {key} recorded {a.get(key)!r}, page {b[key]!r}")
    rk = ((recorded.get("unions") or {}).get("SpeculativeConfig") or {}).get("from_dict_keys") or {}
    if facts["from_dict_keys"] and rk != facts["from_dict_keys"]:
        diffs.append(f"decoding_type table: recorded {rk}, page {facts['from_dict_keys']}")
    src = (recorded.get("sources") or {}).get("llm_args") or {}
    if src.get("chars") and src["chars"] != facts["chars"]:
        diffs.append(f"page length: recorded {src['chars']}, page {facts['chars']}")
    if src.get("sha256") and src["sha256"] != facts["sha256"]:
        diffs.append(f"page sha256: recorded {src['sha256']}, page {facts['sha256']}")
    return diffs


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path, nargs="?", help="folder to write llm_api.yaml and cli.yaml into")
    ap.add_argument("--like", type=Path, help="a recorded snapshot folder whose entries are regenerated too")
    ap.add_argument("--page", type=Path, help="a saved copy of the release's llm_args.html (no install needed)")
    ap.add_argument("--check", type=Path, help="with --page: the snapshot folder to compare against")
    args = ap.parse_args(argv)
    if args.page:
        facts = page_facts(args.page.read_text(encoding="utf-8"))
        print(f"{args.page}: {facts['chars']} chars, sha256 {facts['sha256']}, {len(facts['classes'])} classes")
        if not args.check:
            # the regenerated facts, in the snapshot's format: diff them against a recorded llm_api.yaml
            print(yaml.safe_dump({"classes": {n: {"source": "llm_args", "fields": f} for n, f in facts["classes"].items()},
                                  "unions": {"SpeculativeConfig": {"from_dict_keys": facts["from_dict_keys"]}}},
                                 sort_keys=False, width=110))
            return 0
        diffs = check_page(yaml.safe_load((args.check / "llm_api.yaml").read_text()) or {}, facts)
        for d in diffs:
            print(f"  differs: {d}")
        return 1 if diffs else 0
    if args.out is None:
        ap.error("give an output folder, or --page")
    facts = regenerate(args.like)
    args.out.mkdir(parents=True, exist_ok=True)
    for part, data in facts.items():
        (args.out / f"{part}.yaml").write_text(yaml.safe_dump(data, sort_keys=False, width=110))
    print(f"wrote {args.out}/llm_api.yaml and cli.yaml for tensorrt_llm {facts['llm_api']['version']}")
    if args.like:
        diffs = compare({p: yaml.safe_load((args.like / f"{p}.yaml").read_text()) or {}
                         for p in ("llm_api", "cli") if (args.like / f"{p}.yaml").is_file()}, facts)
        for d in diffs:
            print(f"  differs: {d}")
        return 1 if diffs else 0
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
