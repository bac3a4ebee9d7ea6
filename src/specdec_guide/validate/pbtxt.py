"""Triton ``config.pbtxt``: protobuf syntax, unique tensor names, and the TRT-LLM llmapi model.

The text is parsed by ``google.protobuf.text_format`` into tritonclient's ``ModelConfig`` (the
same message the server loads), so a syntax error carries protobuf's own line:col. Positions of
individual fields come from a small tokenizer below, because the protobuf parser keeps none.

A config is the llmapi model when its backend is ``python`` and the folder has ``1/model.yaml``:
then its inputs/outputs must match what that release's model.py reads (the track's
``triton.yaml: llmapi_model``) and ``decoupled``/``max_batch_size`` must agree with
``model.yaml: triton_config`` and be written here: behind the container's launcher, which turns
auto-complete off (behaviour fact ``launcher_disables_auto_complete``), Triton reads only this file. ``${key}`` placeholders (fill_template.py templates) are
substituted before parsing and their keys checked against the recorded template keys.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from specdec_guide.releases.tracks import Registry, Track

PLACEHOLDER_RE = re.compile(r"\$\{(\w+)\}")
_TOKEN_RE = re.compile(r'\s+|#[^\n]*|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|[\w.+\-]+|[{}\[\]:,;<>]')


@dataclass
class Node:
    name: str
    line: int
    col: int
    value: object = None  # a scalar token, a list of them, or None for a message
    vline: int = 0
    vcol: int = 0
    children: list = field(default_factory=list)

    def first(self, name: str):
        return next((c for c in self.children if c.name == name), None)

    def all(self, name: str):
        return [c for c in self.children if c.name == name]


def _tokens(text: str):
    line, col, pos = 1, 1, 0
    while pos < len(text):
        m = _TOKEN_RE.match(text, pos)
        if not m:  # protobuf already accepted the text; skip what we do not model
            m = re.compile(r".").match(text, pos)
        tok = m.group(0)
        if not (tok.isspace() or tok.startswith("#")):
            yield tok, line, col
        nl = tok.count("\n")
        if nl:
            line += nl
            col = len(tok) - tok.rfind("\n")
        else:
            col += len(tok)
        pos = m.end()


def _unq(tok: str) -> str:
    return tok[1:-1] if tok[:1] in "\"'" else tok


def position_tree(text: str) -> Node:
    toks = list(_tokens(text))
    i = 0

    def message(end: str | None) -> list:
        nonlocal i
        out = []
        while i < len(toks) and toks[i][0] != end:
            name, line, col = toks[i]
            i += 1
            if i < len(toks) and toks[i][0] == ":":
                i += 1
            if i >= len(toks):
                break
            tok, vl, vc = toks[i]
            if tok in "{<":
                i += 1
                node = Node(name, line, col, None, vl, vc, message("}" if tok == "{" else ">"))
                i += 1
                out.append(node)
            elif tok == "[":
                i += 1
                scalars = []
                while i < len(toks) and toks[i][0] != "]":
                    t, l2, c2 = toks[i]
                    if t in "{<":
                        i += 1
                        out.append(Node(name, line, col, None, l2, c2, message("}" if t == "{" else ">")))
                        i += 1
                    elif t == ",":
                        i += 1
                    else:
                        scalars.append(_unq(t))
                        i += 1
                i += 1
                if scalars or not any(n.name == name and n.line == line for n in out):
                    out.append(Node(name, line, col, scalars, vl, vc))
            else:
                out.append(Node(name, line, col, _unq(tok), vl, vc))
                i += 1
            while i < len(toks) and toks[i][0] in ",;":
                i += 1
        return out

    return Node("", 1, 1, None, 1, 1, message(None))


def substitute_placeholders(text: str) -> tuple[str, list]:
    """Replace unquoted ``${key}`` with ``0`` (parses as int, float, bool or enum); quoted ones
    stay as they are. Returns the new text and ``[(key, line, col)]``."""
    found, lines = [], []
    for ln, raw in enumerate(text.split("\n"), 1):
        out, last = [], 0
        for m in PLACEHOLDER_RE.finditer(raw):
            found.append((m.group(1), ln, m.start() + 1))
            quoted = raw[: m.start()].count('"') % 2 == 1
            out.append(raw[last : m.start()])
            out.append(m.group(0) if quoted else "0")
            last = m.end()
        out.append(raw[last:])
        lines.append("".join(out))
    return "\n".join(lines), found


def parse(text: str):
    """``(ModelConfig, None)`` or ``(None, (line, col, message))``."""
    from google.protobuf import text_format
    from tritonclient.grpc import model_config_pb2

    config = model_config_pb2.ModelConfig()
    try:
        text_format.Parse(text, config)
    except text_format.ParseError as err:
        msg = re.sub(r"^\d+:\d+\s*:\s*", "", str(err))
        msg = re.sub(r"^'.*?':\s*", "", msg)  # protobuf repeats the offending line
        return None, (err.GetLine() or 1, err.GetColumn() or 1, f"config.pbtxt syntax: {msg}")
    return config, None


def check(text: str, path: Path, track: Track, registry: Registry | None) -> list:
    parsed_text, placeholders = substitute_placeholders(text)
    config, err = parse(parsed_text)
    if err:
        return [err]
    tree = position_tree(parsed_text)
    out = []
    for kind in ("input", "output"):
        seen: dict[str, int] = {}
        for node in tree.all(kind):
            nm = node.first("name")
            if nm is None:
                continue
            if nm.value in seen:
                out.append((nm.vline, nm.vcol, f"duplicate {kind} name '{nm.value}' (first at line {seen[nm.value]})"))
            else:
                seen[nm.value] = nm.vline
    out.extend(_check_placeholders(config, path, track, placeholders))
    if config.backend == "python" and (path.parent / "1" / "model.yaml").is_file():
        out.extend(_check_llmapi(config, tree, path, track, registry, placeholders))
    return sorted(out)


def _check_placeholders(config, path: Path, track: Track, placeholders: list) -> list:
    if not placeholders:
        return []
    legacy = track.triton.get("legacy_inflight_batcher_llm") or {}
    models = legacy.get("models") or {}
    model = models.get(config.name) or models.get(path.parent.name)
    if not model or "keys" not in model:
        return []
    keys = set(model["keys"])
    return [(ln, col, f"template key '{key}' is not a fill_template.py key of model "
                      f"'{config.name or path.parent.name}' in TRT-LLM {track.id}")
            for key, ln, col in placeholders if key not in keys]


def _check_llmapi(config, tree: Node, path: Path, track: Track, registry, placeholders) -> list:
    spec = track.triton.get("llmapi_model")
    if not isinstance(spec, dict):
        return [(1, 1, f"the TRT-LLM {track.id} snapshot has no triton.yaml llmapi_model: cannot check this model")]
    out = []
    out.extend(_check_tensors("input", tree, spec.get("inputs") or [], track, registry))
    if spec.get("outputs"):
        out.extend(_check_tensors("output", tree, spec["outputs"], track, registry))
    out.extend(_check_agreement(config, tree, path, placeholders, track))
    return out


def _check_tensors(kind: str, tree: Node, recorded: list, track: Track, registry) -> list:
    by_name = {str(t["name"]): t for t in recorded if isinstance(t, dict) and "name" in t}
    reader = "reads" if kind == "input" else "produces"
    out, present = [], set()
    for node in tree.all(kind):
        nm = node.first("name")
        if nm is None:
            continue
        present.add(nm.value)
        want = by_name.get(nm.value)
        if want is None:
            hint = ""
            if registry:
                hits = [t.id for t in registry.others(track)
                        if any(str(x.get("name")) == nm.value
                               for x in (t.triton.get("llmapi_model") or {}).get(f"{kind}s") or [])]
                hint = f"; it exists in {', '.join(hits)}" if hits else ""
            out.append((nm.vline, nm.vcol, f"{kind} '{nm.value}' is not one the llmapi model.py of TRT-LLM "
                                           f"{track.id} {reader} (known: {', '.join(by_name)}){hint}"))
            continue
        dt = node.first("data_type")
        want_dt = str(want.get("data_type") or "")
        if want_dt and not want_dt.startswith("TYPE_"):
            want_dt = "TYPE_" + want_dt
        if want_dt and (dt is None or dt.value != want_dt):
            where = dt or nm
            got = dt.value if dt else "unset"
            out.append((where.vline, where.vcol, f"{kind} '{nm.value}' must have data_type {want_dt} "
                                                 f"in TRT-LLM {track.id}, got {got}"))
        dims = node.first("dims")
        if want.get("dims") is not None and dims is not None:
            got = [int(x) for x in dims.value] if isinstance(dims.value, list) else [int(dims.value)]
            if got != [int(x) for x in want["dims"]]:
                out.append((dims.vline, dims.vcol, f"{kind} '{nm.value}' must have dims {list(want['dims'])}, got {got}"))
    if kind == "input":
        anchor = next(iter(tree.all("input")), None)
        line, col = (anchor.line, anchor.col) if anchor else (1, 1)
        for name, t in by_name.items():
            if t.get("optional") is False and name not in present:
                out.append((line, col, f"required input '{name}' of the llmapi model is missing"))
    return out


def launcher_disables_auto_complete(track: Track) -> tuple[bool, str]:
    """Whether the track's container launcher turns auto-complete off, and where that is recorded.

    The fact ``launcher_disables_auto_complete`` of the behaviour record decides. A record without it
    falls back to triton.yaml's description of launch_triton_server.py, which says the script always
    passes --disable-auto-complete-config (unconfirmed there): the safe reading, because a
    config.pbtxt that carries the policy itself works either way.
    """
    try:
        fact = track.behaviour.facts.get("launcher_disables_auto_complete")
    except Exception:  # a broken record is reported by its own loader; keep the safe reading here
        fact = None
    if fact is not None:
        return fact.value is not False, f"behaviour launcher_disables_auto_complete: {str(fact.value).lower()}, {fact.confidence}"
    return True, "triton.yaml launch_triton_server, unconfirmed"


def _launcher_note(track: Track) -> str:
    launcher = str((track.triton.get("launch_triton_server") or {}).get("path") or "launch_triton_server.py")
    _, where = launcher_disables_auto_complete(track)
    return (f"the container's {launcher} starts Triton with --disable-auto-complete-config ({where}), so Triton "
            f"reads only config.pbtxt and model.py never applies 1/model.yaml's triton_config")


def _check_agreement(config, tree: Node, path: Path, placeholders, track: Track | None = None) -> list:
    """config.pbtxt and 1/model.yaml's triton_config must say the same decoupled / max_batch_size.

    With auto-complete on, model.py copies triton_config into the config, and an explicit value here that
    differs makes Triton refuse the model. Behind the container's launcher auto-complete is off and only
    this file counts: a policy left out here means "not decoupled" whatever model.yaml says. A repository
    that writes both values in both files works either way.
    """
    try:
        data = yaml.safe_load((path.parent / "1" / "model.yaml").read_text(encoding="utf-8")) or {}
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return []  # model.yaml is reported on its own
    tc = data.get("triton_config") if isinstance(data, dict) else None
    if not isinstance(tc, dict):
        return []
    placeholder_lines = {ln for _, ln, _ in placeholders}
    off = launcher_disables_auto_complete(track)[0] if track is not None else True
    why = _launcher_note(track) if track is not None else "Triton reads only config.pbtxt when auto-complete is off"
    anchor = tree.first("name") or tree.first("backend")
    aline, acol = (anchor.line, anchor.col) if anchor else (1, 1)
    out = []
    mtp = tree.first("model_transaction_policy")
    dnode = mtp.first("decoupled") if mtp else None
    want = tc.get("decoupled")
    if isinstance(want, bool) and not (dnode is not None and dnode.vline in placeholder_lines):
        mine = config.model_transaction_policy.decoupled
        if dnode is not None and mine != want:
            out.append((dnode.vline, dnode.vcol, f"config.pbtxt says decoupled: {str(mine).lower()} but 1/model.yaml "
                                                 f"triton_config.decoupled is {str(want).lower()}; they must agree: "
                                                 f"{why} (streaming needs both true)"))
        elif dnode is None and want and off:
            line, col = (mtp.line, mtp.col) if mtp else (aline, acol)
            out.append((line, col, f"config.pbtxt sets no model_transaction_policy {{ decoupled: true }} while 1/model.yaml "
                                   f"triton_config.decoupled is true: {why}; the model then runs non-decoupled and "
                                   f"streaming fails; add model_transaction_policy {{ decoupled: true }} to config.pbtxt"))
    mbs = tree.first("max_batch_size")
    want_mbs = tc.get("max_batch_size")
    if isinstance(want_mbs, int) and not isinstance(want_mbs, bool) and not (mbs is not None and mbs.vline in placeholder_lines):
        if mbs is not None and config.max_batch_size != want_mbs:
            out.append((mbs.vline, mbs.vcol, f"config.pbtxt says max_batch_size: {config.max_batch_size} but 1/model.yaml "
                                             f"triton_config.max_batch_size is {want_mbs}; they must agree: {why}"))
        elif mbs is None and want_mbs != 0 and off:
            out.append((aline, acol, f"config.pbtxt sets no max_batch_size (0) while 1/model.yaml "
                                     f"triton_config.max_batch_size is {want_mbs}: {why}; add max_batch_size: "
                                     f"{want_mbs} to config.pbtxt"))
    return out
