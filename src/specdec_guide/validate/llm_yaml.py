"""LLM API YAML: the Triton llmapi ``model.yaml`` and trtllm-serve/trtllm-bench option files.

Every key except ``triton_config`` is a field of ``TorchLlmArgs`` (``TrtLlmArgs`` when the
file says ``backend: tensorrt`` on a track that still has the engine backend). In ``model.yaml``
Triton passes the keys to ``LLM(**args)``, so required fields must be present; an
``--extra_llm_api_options``/``--config`` file is merged with the command line, which supplies
``model``, so required top-level fields are not demanded there.

A ``model.yaml`` marked ``# specdec-guide: engine=cpu`` is written for our CPU reference engine
and is checked the same way, with one documented difference: ``triton_config`` may carry the
engine's own keys (:data:`CPU_ENGINE_TRITON_KEYS`, which TensorRT-LLM's model.py never reads), and
``triton_config.cpu_drafter`` stands in for a UserProvided config's ``drafter`` object, which no
YAML file can hold.
"""

from __future__ import annotations

import yaml

from specdec_guide import markers
from specdec_guide.validate.fields import FieldChecker
from specdec_guide.releases.tracks import Registry, Track
from specdec_guide.validate.typegrammar import parse_type
from specdec_guide.validate.values import PVal, from_yaml


#: triton_config keys of the CPU reference engine, with their types.
CPU_ENGINE_TRITON_KEYS = {"cpu_drafter": "str", "cpu_behaviour": "list[str]"}


def yaml_error(err: yaml.YAMLError) -> tuple[int, int, str]:
    mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
    problem = getattr(err, "problem", None) or str(err)
    context = getattr(err, "context", None)
    msg = f"YAML syntax error: {problem}" + (f" ({context})" if context else "")
    return (mark.line + 1, mark.column + 1, msg) if mark else (1, 1, msg)


def duplicate_keys(node) -> list:
    """Findings for repeated keys: PyYAML keeps the last silently, and so would LLM(**kwargs)."""
    out, stack = [], [node]
    while stack:
        node = stack.pop()
        if isinstance(node, yaml.MappingNode):
            seen = set()
            for k, v in node.value:
                if isinstance(k, yaml.ScalarNode):
                    if k.value in seen:
                        out.append((k.start_mark.line + 1, k.start_mark.column + 1, f"duplicate key '{k.value}'"))
                    seen.add(k.value)
                stack.append(v)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
    return out


#: More nodes than this once aliases are expanded is no configuration (a "billion laughs" file).
MAX_EXPANDED_NODES = 200_000
TOO_DEEP = "YAML nests too deeply to check"


def alias_problem(root) -> tuple[int, int, str] | None:
    """An alias that refers to a node containing it, or aliases that expand past
    :data:`MAX_EXPANDED_NODES`: either would make every reader of the file loop or explode."""
    size: dict[int, int] = {}
    on_path: set[int] = set()
    stack = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        children = ([c for kv in node.value for c in kv] if isinstance(node, yaml.MappingNode) else
                    list(node.value) if isinstance(node, yaml.SequenceNode) else [])
        if done:
            on_path.discard(key)
            size[key] = 1 + sum(size[id(c)] for c in children)
            if size[key] > MAX_EXPANDED_NODES:
                m = node.start_mark
                return (m.line + 1, m.column + 1, f"its aliases expand to more than {MAX_EXPANDED_NODES} values: "
                                                  "not a configuration any reader can load")
            continue
        if key in size:
            continue
        on_path.add(key)
        stack.append((node, True))
        for c in children:
            if id(c) in on_path:
                m = c.start_mark
                return (m.line + 1, m.column + 1, "this anchor's value contains an alias to itself (a recursive "
                                                  "structure no LLM-API option can be)")
            if id(c) not in size:
                stack.append((c, False))
    return None


def compose(text: str) -> tuple[PVal | None, list]:
    """Compose ``text`` into a PVal (None when empty) plus findings: a syntax error, repeated keys."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as err:
        return None, [yaml_error(err)]
    except RecursionError:
        return None, [(1, 1, TOO_DEEP)]
    if node is None:
        return None, []
    bad = alias_problem(node)
    if bad:
        return None, [bad]
    try:
        return from_yaml(node), duplicate_keys(node)
    except RecursionError:
        return None, [(1, 1, TOO_DEEP)]


def args_class(track: Track, root: PVal) -> str:
    backend = root.get("backend")
    if (backend is not None and backend.kind == "scalar" and str(backend.value) in ("tensorrt", "trt")
            and track.engine_backend and "TrtLlmArgs" in track.classes()):
        return "TrtLlmArgs"
    return "TorchLlmArgs"


def yaml_backend(cls: str, root: PVal) -> str | None:
    """The backend the file's LLM-args class runs on, for the decoding configs' backend rules."""
    if cls == "TrtLlmArgs":
        return "tensorrt"
    b = root.get("backend")
    if b is None or (b.kind == "scalar" and b.tag == "null"):
        return "pytorch"  # TorchLlmArgs fills 'pytorch' when unset
    return str(b.value) if b.kind == "scalar" and not str(b.value).startswith("${") else None


def check(text: str, track: Track, registry: Registry | None, model_yaml: bool,
          cpu_engine: bool | None = None) -> list:
    """Findings ``(line, col, message)`` for one LLM API YAML file.

    ``cpu_engine``: the file is read by our CPU reference engine (default: it carries the
    ``engine=cpu`` marker); the engine itself passes True.
    """
    root, errs = compose(text)
    if root is None and errs:  # a syntax error: nothing else can be checked
        return errs
    if root is None:
        root = PVal("map", 1, 1)
    if root.kind != "map":
        return [(root.line, root.col, f"an LLM API YAML file must be a mapping, got {root.show()}")]
    cls = args_class(track, root)
    if cls not in track.classes():
        return [(1, 1, f"the TRT-LLM {track.id} snapshot has no {cls} class: cannot check this file")]
    checker = FieldChecker(track, registry, yaml_mode=True)
    checker.backend = yaml_backend(cls, root)
    out = list(errs)  # repeated keys
    skip = ()
    if cpu_engine is None:
        cpu_engine = markers.value(text, "engine") == "cpu"
    cpu_engine = model_yaml and cpu_engine
    tc = root.get("triton_config")
    if model_yaml:
        skip = ("triton_config",)
        if tc is not None:
            out.extend(check_triton_config(track, tc, cpu_engine))
    found = checker.check_class(cls, root, skip=skip, require=model_yaml)
    if cpu_engine:
        has_drafter = tc is not None and tc.kind == "map" and tc.get("cpu_drafter") is not None
        missing = "missing required key 'speculative_config.drafter'"
        found = [f for f in found if not (has_drafter and f[2].startswith(missing))]
        found = [(ln, col, "UserProvided on the CPU engine needs triton_config.cpu_drafter: module:Class "
                           "(a drafter object cannot come from YAML)") if msg.startswith(missing) else (ln, col, msg)
                 for ln, col, msg in found]
    out.extend(found)
    return sorted(out)


def check_triton_config(track: Track, tc: PVal, cpu_engine: bool = False) -> list:
    spec = ((track.triton.get("llmapi_model") or {}).get("model_yaml") or {}).get("triton_config")
    if not isinstance(spec, dict):
        return []
    if cpu_engine:
        spec = {**spec, **{k: {"type": t} for k, t in CPU_ENGINE_TRITON_KEYS.items()}}
    if tc.kind != "map":
        return [(tc.line, tc.col, f"'triton_config' must be a mapping, got {tc.show()}")]
    checker = FieldChecker(track, None, yaml_mode=True)
    out = []
    for key, kl, kc, val in tc.entries:
        if key not in spec:
            out.append((kl, kc, f"unknown key 'triton_config.{key}': the llmapi model.py of TRT-LLM "
                                f"{track.id} reads only {', '.join(spec)}"))
            continue
        t = spec[key].get("type") if isinstance(spec[key], dict) else spec[key]
        out.extend(checker.check_value(parse_type(t), val, f"triton_config.{key}"))
    return out
