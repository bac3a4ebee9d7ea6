"""Shell snippets: every invocation of a TensorRT-LLM / Triton CLI, flag by flag.

The text is split into logical lines (backslash continuations joined, heredoc bodies skipped),
each tokenized with :mod:`shlex` and cut into simple commands at ``;``, ``&&``, ``||``, ``|``.
A command whose program is a known CLI (``trtllm-serve``, ``trtllm-bench``, ``trtllm-build``,
``python3 .../launch_triton_server.py``, ``.../fill_template.py``, ``convert_checkpoint.py``...)
is checked against the track's ``cli.yaml``/``triton.yaml``: each ``--flag`` must exist for
that (sub)command, a CLI the track does not ship is an error, and fill_template.py
``key:value`` pairs must be template keys of the model whose config.pbtxt it fills.
"""

from __future__ import annotations

import difflib
import os
import re
import shlex

from specdec_guide.validate.schema import Registry, Track

# TRT-LLM / Triton programs the guide may show; any of them missing from a track is an error.
BUILTIN_CLIS = ("trtllm-serve", "trtllm-bench", "trtllm-build", "trtllm-eval", "trtllm-llmapi-launch",
                "convert_checkpoint.py", "launch_triton_server.py", "fill_template.py")
WRAPPERS = {"sudo", "env", "nohup", "time", "exec", "command", "stdbuf", "nice"}
PYTHONS = re.compile(r"^python(\d(\.\d+)?)?$")
LLM_YAML_FLAGS = ("--extra_llm_api_options", "--config")
_HEREDOC = re.compile(r"<<-?\s*(['\"]?)([\w.\-]+)\1")
_SEPARATORS = {";", "&&", "||", "|", "&", "(", ")", ";;", "|&"}


def logical_lines(text: str):
    """Yield ``(logical_text, positions)``; ``positions[i]`` is the 1-based (line, col) of char i."""
    lines = text.split("\n")
    buf, pos = [], []
    heredoc = None
    for ln, raw in enumerate(lines, 1):
        if heredoc is not None:
            if raw.strip() == heredoc:
                heredoc = None
            continue
        body = raw
        cont = False
        stripped = raw.rstrip()
        if stripped.endswith("\\") and (len(stripped) - len(stripped.rstrip("\\"))) % 2 == 1 \
                and not stripped.lstrip().startswith("#"):
            body, cont = stripped[:-1], True
        for col, ch in enumerate(body, 1):
            buf.append(ch)
            pos.append((ln, col))
        buf.append(" ")
        pos.append((ln, len(body) + 1))
        if cont:
            continue
        logical = "".join(buf)
        if _open_quote(logical):
            # A quoted argument spans lines (curl -d '{...}'): keep the newline and read on.
            buf[-1] = "\n"
            continue
        if logical.strip():
            yield logical, pos
            m = _HEREDOC.search(logical.split("#", 1)[0]) if "<<<" not in logical else None
            if m:
                heredoc = m.group(2)
        buf, pos = [], []
    if buf and "".join(buf).strip():
        yield "".join(buf), pos


def _open_quote(text: str) -> bool:
    """True when ``text`` ends inside a quoted string (comments and escapes respected)."""
    quote = ""
    i = 0
    while i < len(text):
        ch = text[i]
        if quote == "'":
            if ch == "'":
                quote = ""
        elif quote == '"':
            if ch == "\\":
                i += 1
            elif ch == '"':
                quote = ""
        elif ch == "\\":
            i += 1
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or text[i - 1].isspace()):
            break
        i += 1
    return bool(quote)


def _tokenize(logical: str) -> list[str]:
    lex = shlex.shlex(logical, posix=True, punctuation_chars=";&|()<>")
    lex.whitespace_split = True
    lex.commenters = "#"
    return list(lex)


class _Locator:
    """Finds each token's position in the raw logical line, left to right."""

    def __init__(self, logical: str, positions: list):
        self.logical, self.positions, self.cursor = logical, positions, 0

    def find(self, needle: str, advance: bool = True) -> tuple[int, int]:
        i = self.logical.find(needle, self.cursor) if needle else -1
        if i < 0:
            return self.positions[min(self.cursor, len(self.positions) - 1)]
        if advance:
            self.cursor = i + len(needle)
        return self.positions[i]


def _simple_commands(tokens: list[str]):
    cmd: list[str] = []
    skip_next = False
    for tok in tokens:
        if skip_next:
            skip_next = False
            continue
        if tok in _SEPARATORS:
            if cmd:
                yield cmd
            cmd = []
        elif set(tok) <= set("<>&|") and ("<" in tok or ">" in tok):
            skip_next = not tok.endswith("&")  # redirection: its target is not an argument
        else:
            cmd.append(tok)
    if cmd:
        yield cmd


def _known_clis(track: Track) -> dict[str, tuple[str, dict]]:
    """program name -> (kind, spec) for this track. kind: "cli", "launch", "fill"."""
    out: dict[str, tuple[str, dict]] = {}
    for name, spec in (track.cli.get("commands") or {}).items():
        spec = spec or {}
        out[str(name)] = ("cli", spec)
        if spec.get("path"):
            out[os.path.basename(str(spec["path"]))] = ("cli", spec)
    launch = track.triton.get("launch_triton_server")
    if isinstance(launch, dict):
        out[os.path.basename(str(launch.get("path") or "launch_triton_server.py"))] = ("launch", launch)
    legacy = track.triton.get("legacy_inflight_batcher_llm")
    if isinstance(legacy, dict) and isinstance(legacy.get("fill_template"), dict):
        fill = dict(legacy["fill_template"])
        fill["models"] = legacy.get("models") or {}
        out[os.path.basename(str(fill.get("path") or "fill_template.py"))] = ("fill", fill)
    for name, spec in (track.triton.get("scripts") or {}).items():  # other recorded scripts
        if isinstance(spec, dict):
            out[os.path.basename(str(spec.get("path") or name))] = ("cli", spec)
    return out


def _program(cmd: list[str], names: set[str]) -> int | None:
    """Index of the program word in ``cmd`` if it is a CLI named in ``names``."""
    i = 0
    while i < len(cmd):
        tok = cmd[i]
        if re.match(r"^[A-Za-z_]\w*=", tok):
            i += 1
            continue
        if tok in WRAPPERS:
            i += 1
            continue
        if tok == "timeout":
            i += 2
            continue
        if PYTHONS.match(os.path.basename(tok)):
            i += 1
            while i < len(cmd) and cmd[i].startswith("-") and cmd[i] != "-m":
                i += 1
            if i < len(cmd) and cmd[i] == "-m":
                return None
            continue
        break
    if i < len(cmd) and os.path.basename(cmd[i]) in names:
        return i
    # `docker run ... image trtllm-serve ...`, `mpirun -n 2 trtllm-bench ...`
    for j, tok in enumerate(cmd):
        if tok in names and tok.startswith("trtllm-"):
            return j
    return None


def check(text: str, track: Track, registry: Registry | None) -> tuple[list, int, list]:
    """``(findings, invocations checked, [(flag, yaml path)] for LLM API option files)``."""
    known = _known_clis(track)
    everywhere = set(BUILTIN_CLIS) | set(known)
    others = registry.others(track) if registry else []
    for t in others:
        everywhere |= set(_known_clis(t))
    out, count, yaml_refs = [], 0, []
    for logical, positions in logical_lines(text):
        if logical.lstrip().startswith("#"):
            continue
        try:
            tokens = _tokenize(logical)
        except ValueError as err:
            ln, col = positions[len(logical) - len(logical.lstrip())]
            out.append((ln, col, f"shell syntax: {err}"))
            continue
        loc = _Locator(logical, positions)
        for cmd in _simple_commands(tokens):
            idx = _program(cmd, everywhere)
            if idx is None:
                for tok in cmd:
                    loc.find(tok)
                continue
            for tok in cmd[:idx]:
                loc.find(tok)
            prog = os.path.basename(cmd[idx])
            ppos = loc.find(cmd[idx])
            count += 1
            if prog not in known:
                out.append((*ppos, _missing_cli(prog, track, others)))
                continue
            kind, spec = known[prog]
            args = cmd[idx + 1:]
            if kind == "fill":
                out.extend(_check_fill(prog, spec, args, loc, track))
            else:
                out.extend(_check_flags(prog, spec, args, loc, track, others))
            for a, b in zip(args, args[1:] + [""]):
                for flag in LLM_YAML_FLAGS:
                    if a == flag and b:
                        yaml_refs.append((flag, b))
                    elif a.startswith(flag + "="):
                        yaml_refs.append((flag, a.split("=", 1)[1]))
    return sorted(out), count, yaml_refs


def _missing_cli(prog: str, track: Track, others: list[Track]) -> str:
    hits = [t.id for t in others if prog in _known_clis(t)]
    why = ""
    if not track.engine_backend and prog in ("trtllm-build", "convert_checkpoint.py", "fill_template.py"):
        why = " (this release has no TensorRT engine backend)"
    where = f"; it exists in {', '.join(hits)}" if hits else ""
    return f"'{prog}' is not part of TRT-LLM {track.id}{why}{where}"


def _flags_of(spec: dict) -> list[str]:
    return [str(f) for f in spec.get("flags") or []]


def _is_flag(tok: str) -> bool:
    return tok.startswith("--") and len(tok) > 2 or (
        len(tok) > 1 and tok[0] == "-" and tok[1].isalpha())


def _check_flags(prog: str, spec: dict, args: list[str], loc: _Locator, track: Track, others) -> list:
    subs = spec.get("subcommands") or {}
    default = spec.get("default_subcommand")
    scope, scope_spec = prog, spec
    in_sub = not subs
    out = []
    for tok in args:
        if tok == "--":
            break
        if not _is_flag(tok):
            loc.find(tok)
            if not in_sub and tok in subs:
                scope, scope_spec, in_sub = f"{prog} {tok}", subs[tok] or {}, True
            elif not in_sub and default and default in subs:
                scope, scope_spec, in_sub = f"{prog} {default}", subs[default] or {}, True
            continue
        name = tok.split("=", 1)[0]
        pos = loc.find(name)
        if name in ("--help", "-h"):
            continue
        # Group options belong before the subcommand; with a default subcommand
        # (`trtllm-serve MODEL --port ...`) the two sets are indistinguishable, so both count.
        flags = _flags_of(scope_spec)
        if default and default in subs and scope in (prog, f"{prog} {default}"):
            flags += _flags_of(spec) + _flags_of(subs[default] or {})
        if not name.startswith("--") and not any(not f.startswith("--") for f in flags):
            continue  # the snapshot records no short flags for this command: cannot judge
        if name in flags:
            continue
        # Before any positional, `trtllm-serve --flag` means the default subcommand's flag.
        effective = (subs[default] or {}) if (default and default in subs and scope == prog) else scope_spec
        if name in [str(f) for f in effective.get("likely_flags") or []]:
            out.append((*pos, f"'{name}' is recorded only as a likely flag of {scope} in TRT-LLM {track.id} "
                              f"(unconfirmed): confirm it and list it under flags in the snapshot"))
            continue
        if "flags" not in effective and "flags" not in scope_spec:
            out.append((*pos, f"the TRT-LLM {track.id} snapshot does not record the flags of {scope}: "
                              f"cannot check '{name}'"))
            continue
        sub = scope.split(" ", 1)[1] if " " in scope else None
        hits = []
        for t in others:
            tk = _known_clis(t).get(prog)
            if tk:
                ts = tk[1] if sub is None else ((tk[1].get("subcommands") or {}).get(sub) or {})
                if name in _flags_of(ts):
                    hits.append(t.id)
        close = difflib.get_close_matches(name, flags, n=1, cutoff=0.75)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        where = f"; it exists in {', '.join(hits)}" if hits else ""
        out.append((*pos, f"unknown flag '{name}' for {scope} in TRT-LLM {track.id}{hint}{where}"))
    return out


def _check_fill(prog: str, spec: dict, args: list[str], loc: _Locator, track: Track) -> list:
    """``fill_template.py -i path/<model>/config.pbtxt key:value,key:value``."""
    out, target, pairs = [], None, []
    flags = _flags_of(spec)
    expect_path = False
    for tok in args:
        if expect_path:
            target, expect_path = tok, False
            loc.find(tok)
            continue
        if _is_flag(tok):
            name = tok.split("=", 1)[0]
            pos = loc.find(name)
            if flags and name not in flags and name not in ("--help", "-h"):
                out.append((*pos, f"unknown flag '{name}' for {prog} in TRT-LLM {track.id}"))
            if name in ("-i", "--in_place", "--input") and "=" not in tok:
                expect_path = True
            continue
        if tok.endswith(".pbtxt") and target is None:
            target = tok
            loc.find(tok)
            continue
        pairs.append(tok)
    model = os.path.basename(os.path.dirname(target)) if target else None
    models = spec.get("models") or {}
    keys = set((models.get(model) or {}).get("keys") or []) if model else set()
    for tok in pairs:
        for part in tok.split(","):
            key = re.split(r"[:=]", part, maxsplit=1)[0].strip()
            if not key:
                continue
            pos = loc.find(key)
            if model is None:
                out.append((*pos, f"{prog}: no config.pbtxt to fill (expected -i <model>/config.pbtxt)"))
                return out
            if model not in models:
                out.append((*pos, f"{prog}: model '{model}' has no recorded template in TRT-LLM {track.id} "
                                  f"(known: {', '.join(models)})"))
                return out
            if key not in keys:
                close = difflib.get_close_matches(key, sorted(keys), n=1, cutoff=0.75)
                hint = f" (did you mean '{close[0]}'?)" if close else ""
                out.append((*pos, f"unknown template key '{key}' for model '{model}' in TRT-LLM {track.id}{hint}; "
                                  f"fill_template.py fails on keys the template lacks"))
    return out
