"""Shell snippets: every invocation of a TensorRT-LLM / Triton CLI, flag by flag.

The text is split into logical lines (backslash continuations joined, heredoc bodies set apart),
each tokenized with :mod:`shlex` and cut into simple commands at ``;``, ``&&``, ``||``, ``|``.
A command whose program is a known CLI (``trtllm-serve``, ``trtllm-bench``, ``trtllm-build``,
``python3 .../launch_triton_server.py``, ``.../fill_template.py``, ``convert_checkpoint.py``...)
is checked against the track's ``cli.yaml``/``triton.yaml``: each ``--flag`` must exist for
that (sub)command, a CLI the track does not ship is an error, and each ``key:value`` pair of a
fill_template.py call must name a template key of the model whose config.pbtxt it fills.

fill_template.py sequences: the in-place calls (``-i``/``--in_place``) of one snippet, or of one
notebook's cells in order (:class:`FillLedger`), are gathered per target file, keyed by its path as
written. ``-i``/``--in_place`` is a flag (store_true) and may stand anywhere: the file is the first
argument that ends in ``.pbtxt`` (or, when none does, the one before the key list).

* A key that an earlier call already filled in the file is an error at the key: the fill removed its
  ``${key}``, and fill_template.py asserts that the key's text is still in the file, so it stops there
  (where the text survives elsewhere it substitutes nothing, and the first value stays). Its defaults
  (``max_queue_size``, ``max_queue_delay_microseconds``) count as filled by every call. Calls in two
  branches of one ``if``/``elif``/``else`` are not in sequence.
* A ``cp``/``cp -R``/``cp -r``/``mv`` in the sequence carries what was filled to the destination (per file
  under a copied folder, which replaces what the ledger held there), so filling only the remaining keys
  in the copy is clean; a fresh copy of the templates (``/app/all_models/...``) starts unfilled, and a copy
  of any other file (a tokenizer, an engine) leaves the ledger as it is.
* Once the sequence ends, a template placeholder outside a ``parameters`` string value (the model's
  ``structural_keys`` in triton.yaml: a ``data_type``, ``max_batch_size``, ``decoupled``, an instance
  ``count``, the ``backend`` name) that no call on the file has filled, and that fill_template.py does not
  fill by itself (its ``defaults``), is an error at the file's last call (or the copy that made it): left
  as ``${...}`` it is not "unset", the config does not parse (or names a type or backend that does not
  exist) and Triton does not load the model. So is a parameter without a default (``mandatory_keys``:
  tensorrt_llm ``engine_dir`` and ``batching_strategy``, preprocessing and postprocessing
  ``tokenizer_dir``), which stops the model from initializing.
* A call that has an error of its own (an unknown key, a key already filled, a substitution without
  ':') fills nothing and is reported for that error alone.

Limits of that check (documented, not followed):

* Targets are keyed as written, with variables substituted: no ``cd`` tracking, so ``ensemble/config.pbtxt``
  after ``cd /a`` and after ``cd /b`` is one file, and ``$REPO/x`` and ``x`` after ``cd "$REPO"`` are two.
* A folder copied under another name (``tensorrt_llm_draft``) or a loop over models (``$REPO/$m/...``) is a
  note, not checked: the template is read from the target's folder name, which names none.
* A variable set to something this checker cannot resolve is keyed by that text; ``rm`` is not followed.

Variables: ``NAME=value`` / ``export NAME=value`` lines set them (``${NAME:-default}`` is
understood), so ``python3 ${FILL_TEMPLATE_SCRIPT} ...`` and ``$TRTLLM_BUILD ...`` are checked as the
programs they name; a program word that stays unresolved is a note. A caller may pass the variables
that earlier snippets of the same page set (``env``).

Heredocs: a body written to a ``.yaml``/``.yml`` file or holding LLM-API YAML (recognised by content,
see :func:`specdec_guide.validate.kinds.looks_like_llm_yaml`) is handed to the LLM-API YAML checker,
with positions in this file.

Program output: a block copied from a README often shows what a command printed next to the
command. In a transcript (the first command starts with a ``$ `` prompt) only the prompted lines, with their
continuations, are commands; the rest is output and is not read. Without prompts, a line that
fails to tokenize and does not start like a command (:func:`shell_like`: a known program, a
variable, a path, a shell keyword) is output (``Soyer's wife, ...``): it gets a note, not a syntax
error, and an apostrophe inside a word there does not swallow the lines after it into one quoted
word. A real command with a broken quote is still an error.

What the snapshot cannot judge (a program or flag it does not record) is a
:class:`~specdec_guide.validate.notes.Note`, not an error.
"""

from __future__ import annotations

import difflib
import os
import re
import shlex
from dataclasses import dataclass, field

from specdec_guide.validate.notes import Note, is_note, note
from specdec_guide.releases.tracks import Registry, Track

# TRT-LLM / Triton programs the guide may show; any of them missing from a track is an error.
BUILTIN_CLIS = ("trtllm-serve", "trtllm-bench", "trtllm-build", "trtllm-eval", "trtllm-llmapi-launch",
                "convert_checkpoint.py", "launch_triton_server.py", "fill_template.py")
#: Programs that belong to the TensorRT engine workflow: absent where a track has no engine backend.
ENGINE_CLIS = ("trtllm-build", "convert_checkpoint.py", "fill_template.py")
WRAPPERS = {"sudo", "env", "nohup", "time", "exec", "command", "stdbuf", "nice"}
PYTHONS = re.compile(r"^python(\d(\.\d+)?)?$")
LLM_YAML_FLAGS = ("--extra_llm_api_options", "--config")
_HEREDOC = re.compile(r"<<(-?)\s*(['\"]?)([\w.\-]+)\2")
_SEPARATORS = {";", "&&", "||", "|", "&", "(", ")", ";;", "|&"}
_ASSIGN = re.compile(r"^([A-Za-z_]\w*)=(.*)$", re.S)
_VAR = re.compile(r"\$(?:\{([A-Za-z_]\w*)(?:(:?[-=])([^}]*))?\}|([A-Za-z_]\w*))")
_DECLARERS = {"export", "declare", "readonly", "local", "typeset"}
#: Words a command line starts with: shell keywords and builtins, and the programs a serving guide or
#: README runs. A line that starts otherwise and cannot be tokenized is taken for program output.
SHELL_WORDS = frozenset("""
    if then else elif fi for while until do done case esac function select in time { } ! [ [[ (( ( )
    export declare local readonly typeset unset set source . cd pushd popd echo printf read eval exec exit
    return shift trap wait kill test true false alias unalias ulimit umask type hash command builtin let
    python python3 pip pip3 uv uvx conda mamba micromamba pipx poetry virtualenv docker podman enroot
    singularity apptainer kubectl helm curl wget git git-lfs make cmake ninja bash sh zsh ls cat cp mv rm
    mkdir rmdir ln chmod chown touch tar unzip zip gzip gunzip grep egrep sed awk find xargs head tail
    sort uniq wc tee cut tr jq yq ssh scp rsync sudo env nohup nvidia-smi nvcc tritonserver mpirun
    mpiexec srun sbatch salloc huggingface-cli hf modelopt apt apt-get yum dnf brew npm node npx go cargo
    java perl ruby pytest mkdocs jupyter jupytext genai-perf aiperf perf_analyzer nc lsof ps pkill
    pgrep sleep watch timeout date which whoami hostname export source openssl base64 diff patch
    du df free top htop less more vim nano code open xdg-open clear history man tmux screen stdbuf nice
""".split())


@dataclass
class Heredoc:
    """A here-document: its header line, where its body starts, and the body's lines."""

    header: str
    header_line: int
    delimiter: str
    quoted: bool
    strip_tabs: bool
    first_line: int = 0
    lines: list = field(default_factory=list)


@dataclass
class _Origin:
    """Where a key of a target file was filled: the call's line, the caller's tag for it (FillLedger.scope),
    the if/else branches it stood in, whether fill_template.py filled it by itself (``defaults``), and the
    file it was filled in when this one is a copy of it."""

    line: int
    scope: object
    branches: tuple = ()
    default: bool = False
    via: str | None = None


@dataclass
class _Fill:
    """The in-place fill_template.py calls on one target file so far."""

    model: str
    structural: list
    filled: dict  # key -> _Origin
    target: str  # as the last call (or the copy that made the file) wrote it
    pos: tuple  # (line, col) of the last call's substitutions (its target when it has none; the copy's destination)
    scope: object  # the caller's tag for that call (FillLedger.scope when it was made)
    prog: str
    track: str
    broken: bool = False  # the last call has an error of its own (fill_template.py stops): that error stands
    mandatory: list = field(default_factory=list)  # parameters without a default (triton.yaml mandatory_keys)
    copied_from: str | None = None  # the file this one is a copy of, until a call fills it


class FillLedger:
    """fill_template.py ``-i`` calls of one sequence, by target file (:func:`check` with ``fills=``).

    A caller that checks a sequence in parts (a notebook, cell by cell) passes one ledger to every
    :func:`check`, sets :attr:`scope` before each to something that places the part's positions, and
    calls :meth:`findings` once the sequence has ended. ``cp``/``mv`` of a file or folder it holds carry
    what was filled to the destination (:meth:`copy`).
    """

    def __init__(self) -> None:
        self.files: dict[str, _Fill] = {}
        self.scope: object = None
        self.branches: list = []  # [if-block id, branch number] of the if/elif/else blocks open now
        self._blocks = 0

    def enter(self, word: str) -> None:
        """Follow ``if``/``elif``/``else``/``fi``: calls in two branches of one block are not in sequence."""
        if word == "if":
            self._blocks += 1
            self.branches.append([self._blocks, 0])
        elif word in ("elif", "else") and self.branches:
            self.branches[-1][1] += 1
        elif word == "fi" and self.branches:
            self.branches.pop()

    def earlier(self, key: str, name: str) -> _Origin | None:
        """Where an earlier call (in sequence with this point) filled ``name`` in file ``key``, or None."""
        f = self.files.get(key)
        origin = f.filled.get(name) if f is not None else None
        if origin is None:
            return None
        now = {b: n for b, n in self.branches}
        if any(b in now and now[b] != n for b, n in origin.branches):
            return None  # the other branch of an if/else: never both
        return origin

    def record(self, key: str, model: str, structural: list, filled: set, target: str, pos: tuple,
               prog: str, track: str, broken: bool = False, mandatory=(), defaults=()) -> None:
        """One in-place call; ``broken``: it has an error already reported at it (it fills nothing).
        ``defaults``: the keys of ``filled`` that fill_template.py filled by itself."""
        old = self.files.get(key)
        done = dict(old.filled) if old is not None and old.model == model else {}
        if not broken:
            branches = tuple((b, n) for b, n in self.branches)
            for k in filled:
                if k not in done:
                    done[k] = _Origin(pos[0], self.scope, branches, k in defaults)
        self.files[key] = _Fill(model, list(structural), done, target, pos, self.scope, prog, track, broken,
                                list(mandatory))

    def copy(self, src: str, dst: str, written: str, pos: tuple, move: bool = False) -> None:
        """``cp``/``mv`` of ``src`` (a file or folder) to ``dst``: each file held under ``src`` is carried there
        with what was filled in it, replacing what was held under ``dst``, and so does a fresh copy of the
        templates (a path through ``all_models`` or ``inflight_batcher_llm``), which starts unfilled; a copy
        of anything else leaves the ledger as it is (``written``: the destination as the command wrote it)."""
        def under(path: str, top: str) -> str | None:
            if path == top:
                return ""
            return path[len(top):] if top not in ("", ".") and path.startswith(top.rstrip("/") + "/") else None

        carried = {}
        for key, f in self.files.items():
            rest = under(key, src)
            if rest is not None:
                carried[dst + rest] = (f, written.rstrip("/") + rest, key)
        if not carried and not {"all_models", "inflight_batcher_llm"} & set(src.split("/")):
            return  # another file (a tokenizer, an engine): into a folder, perhaps; what is held stays
        for key in [k for k in self.files if under(k, dst) is not None or (move and under(k, src) is not None)]:
            del self.files[key]
        for key, (f, target, _) in carried.items():
            filled = {k: _Origin(o.line, o.scope, o.branches, o.default, o.via or f.target)
                      for k, o in f.filled.items()}
            self.files[key] = _Fill(f.model, list(f.structural), filled, target, pos, self.scope, f.prog, f.track,
                                    f.broken, list(f.mandatory), f.target)

    def findings(self) -> list[tuple]:
        """``(scope, line, col, message)`` for each file left with structural placeholders or mandatory
        parameters unfilled."""
        out = []
        for f in self.files.values():
            if f.broken:
                continue
            where = (f"after the copy to '{f.target}' (from '{f.copied_from}')" if f.copied_from
                     else f"after the last call on '{f.target}'")
            missing = [k for k in f.structural if k not in f.filled]
            if missing:
                out.append((f.scope, *f.pos, (
                    f"{f.prog}: {where} the '{f.model}' template (TRT-LLM {f.track}) "
                    f"still has ${{...}} outside its parameters values: {', '.join(missing)}; fill_template.py "
                    f"leaves them as they are, the config then does not parse (or names a type or backend that does "
                    f"not exist) and Triton does not load the model: fill them in this call")))
            params = [k for k in f.mandatory if k not in f.filled]
            if params:
                out.append((f.scope, *f.pos, (
                    f"{f.prog}: {where} the '{f.model}' template (TRT-LLM {f.track}) still has mandatory "
                    f"parameters unfilled: {', '.join(params)}; they have no default in the backend: left as "
                    f"${{...}}, the model fails to initialize and Triton does not load it: fill them in this call")))
        return out


def _identity(word: str, env: dict, raw: dict) -> str:
    """A target path as a key: ``env``'s values substituted, and a variable set to something this
    checker cannot resolve (``REPO="$REPOS/eagle"``) replaced by what it was set to, so that two
    folders set from the same unknown stay apart."""
    out = word
    for _ in range(8):
        known = {k: (v if v is not None else raw.get(k)) for k, v in env.items()}
        new, _ = expand(out, known)
        if new == out:
            break
        out = new
    return os.path.normpath(out) if out else out


def shell_like(line: str, programs=()) -> bool:
    """Whether ``line`` starts the way a command does: a shell keyword or builtin, a known program
    (:data:`SHELL_WORDS`, ``programs``), a variable or assignment, a path, or a script name."""
    stripped = line.strip()
    if not stripped:
        return True
    if stripped[0] in "$~/\"'`\\#":
        return True  # a variable, a path, a quoted or escaped program, a comment
    first = stripped.split(None, 1)[0]
    if _ASSIGN.match(first) or first in SHELL_WORDS or first in programs:
        return True
    if first.endswith((".py", ".sh", ".bash")) or first.startswith(("trtllm-", "./", "../")):
        return True
    return re.match(r"^[\w.\-]+/[\w.\-/]*$", first) is not None  # bin/tool, scripts/run


def logical_lines(text: str, heredocs: list | None = None, programs=()):
    """Yield ``(logical_text, positions)``; ``positions[i]`` is the 1-based (line, col) of char i.

    Heredoc bodies are not commands: they are skipped, and appended to ``heredocs`` when given. A
    line that does not start like a command (:func:`shell_like`) and leaves an apostrophe inside a
    word open (``Soyer's``) is taken for program output and yielded alone, instead of joining the
    lines after it into one quoted word.
    """
    lines = text.split("\n")
    buf, pos = [], []
    current: Heredoc | None = None
    for ln, raw in enumerate(lines, 1):
        if current is not None:
            body = raw.lstrip("\t") if current.strip_tabs else raw
            if body.strip() == current.delimiter and body.rstrip() == current.delimiter:
                current = None
            else:
                current.lines.append(raw)
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
        if cont:  # the shell drops backslash-newline: `a,\<newline>b,` is one word, as in bash
            continue
        buf.append(" ")
        pos.append((ln, len(body) + 1))
        logical = "".join(buf)
        if _open_quote(logical) and (pos[0][0] != ln or shell_like(raw, programs) or not _prose_quote(raw)):
            # A quoted argument spans lines (curl -d '{...}'): keep the newline and read on.
            buf[-1] = "\n"
            continue
        if logical.strip():
            yield logical, pos
            m = _HEREDOC.search(logical.split("#", 1)[0]) if "<<<" not in logical else None
            if m:
                current = Heredoc(logical, pos[0][0], m.group(3), bool(m.group(2)), m.group(1) == "-",
                                  first_line=ln + 1)
                if heredocs is not None:
                    heredocs.append(current)
        buf, pos = [], []
    if buf and "".join(buf).strip():
        yield "".join(buf), pos


def _open_quote(text: str) -> bool:
    """True when ``text`` ends inside a quoted string (comments and escapes respected)."""
    return _unclosed_quote(text) >= 0


def _unclosed_quote(text: str) -> int:
    """Index of the quote that ``text`` leaves open, or -1 (comments and escapes respected)."""
    quote, start = "", -1
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
            quote, start = ch, i
        elif ch == "#" and (i == 0 or text[i - 1].isspace()):
            break
        i += 1
    return start if quote else -1


def _prose_quote(line: str) -> bool:
    """The quote ``line`` leaves open is an apostrophe inside a word (``Soyer's``, ``didn't``):
    prose, not the start of a quoted argument."""
    i = _unclosed_quote(line)
    return 0 < i < len(line) - 1 and line[i] == "'" and line[i - 1].isalpha() and line[i + 1].isalpha()


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


# ---- variables -----------------------------------------------------------------------------
def expand(word: str, env: dict) -> tuple[str, bool]:
    """``word`` with the variables ``env`` knows substituted; the flag says whether all resolved.

    ``env`` maps a name to its value, or to None when it is set to something this checker cannot
    know (a command substitution, another unresolved variable).
    """
    resolved = True

    def sub(m: re.Match) -> str:
        nonlocal resolved
        name = m.group(1) or m.group(4)
        value = env.get(name)
        if value is None and m.group(2) and m.group(3) is not None and name not in env:
            value, ok = expand(m.group(3), env)  # ${NAME:-default}: the default applies
            resolved = resolved and ok
            return value
        if value is None:
            resolved = False
            return m.group(0)
        return value

    out = _VAR.sub(sub, word)
    return out, resolved and "$(" not in word and "`" not in word


def assignments(cmd: list[str], env: dict) -> bool:
    """Apply ``cmd`` to ``env`` when it only sets variables (``A=1 B=2``, ``export A=1``)."""
    words = list(cmd)
    declared = bool(words) and words[0] in _DECLARERS
    if declared:
        words = [w for w in words[1:] if not w.startswith("-")]
    if not words:
        return declared
    for w in words:
        if not (_ASSIGN.match(w) or (declared and re.match(r"^[A-Za-z_]\w*$", w))):
            return False
    for w in words:
        m = _ASSIGN.match(w)
        if m:  # `export NAME` alone keeps what NAME already holds
            value, ok = expand(m.group(2), env)
            env[m.group(1)] = value if ok else None
    return True


def snippet_env(text: str, env: dict | None = None) -> dict:
    """The variables ``text`` leaves set (starting from ``env``), for the next snippet of a page."""
    env = dict(env or {})
    for logical, _ in logical_lines(commands_of_transcript(text) or text):
        try:
            tokens = _tokenize(logical)
        except ValueError:
            continue
        for cmd in _simple_commands(tokens):
            assignments(cmd, env)
    return env


# ---- the snapshot's programs ----------------------------------------------------------------
def _known_clis(track: Track) -> dict[str, tuple[str, dict]]:
    """program name -> (kind, spec) for this track. kind: "cli", "launch", "fill"."""
    out: dict[str, tuple[str, dict]] = {}
    for name, spec in (track.cli.get("commands") or {}).items():
        spec = spec or {}
        out[str(name)] = ("cli", spec)
        if spec.get("path"):
            out[os.path.basename(str(spec["path"]))] = ("cli", spec)
    for name, spec in (track.cli.get("scripts") or {}).items():
        if isinstance(spec, dict):
            out[os.path.basename(str(name))] = ("cli", spec)
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


def _variant(spec: dict, word: str) -> tuple[dict | None, str]:
    """The recorded variant of a script named like several (``convert_checkpoint.py``).

    ``(spec, label)``; ``(None, why)`` when the path names no recorded variant. A bare script name
    (run from its own folder) is checked against the union of every variant's flags.
    """
    variants = spec.get("variants")
    if not isinstance(variants, dict):
        return spec, ""
    folder = os.path.basename(os.path.dirname(word))
    if not folder or folder == ".":
        flags = sorted({str(f) for v in variants.values() for f in (v or {}).get("flags") or []})
        return {"flags": flags, "_union": True}, " (any recorded variant)"
    for label, v in variants.items():
        if os.path.basename(os.path.dirname(str((v or {}).get("path") or ""))) == folder:
            return v or {}, f" ({label})"
    return None, f"no recorded variant lives in a folder named '{folder}' (recorded: {', '.join(variants)})"


def _program(cmd: list[str], names: set[str], env: dict) -> tuple[int | None, str, str | None]:
    """``(index, program name, unresolved)`` for the program word of ``cmd``.

    ``index`` is None when the command runs none of ``names``; ``unresolved`` is the raw word when
    the program comes from a variable nothing sets.
    """
    i = 0
    while i < len(cmd):
        tok = cmd[i]
        if re.match(r"^[A-Za-z_]\w*=", tok) or tok in WRAPPERS:
            i += 1
            continue
        if tok == "timeout":
            i += 2
            continue
        word, ok = expand(tok, env)
        if ok and PYTHONS.match(os.path.basename(word)):
            i += 1
            while i < len(cmd) and cmd[i].startswith("-") and cmd[i] != "-m":
                i += 1
            if i < len(cmd) and cmd[i] == "-m":
                return None, "", None
            continue
        break
    if i < len(cmd):
        word, ok = expand(cmd[i], env)
        if os.path.basename(word) in names:
            return i, os.path.basename(word), None
        literal = cmd[i].rsplit("/", 1)[-1] if "/" in cmd[i] else ""
        if not ok and "$" in cmd[i] and not (literal and "$" not in literal):
            # Only a program whose *name* is unknown is uncheckable: `$VENV/bin/aiperf` names its
            # program (not one of ours), while `$TRTLLM_BUILD` or `${BIN}` does not.
            return i, "", cmd[i]
    # `docker run ... image trtllm-serve ...`, `mpirun -n 2 trtllm-bench ...`
    for j, tok in enumerate(cmd):
        word, _ = expand(tok, env)
        if word in names and word.startswith("trtllm-"):
            return j, word, None
    return None, "", None


# ---- program output ------------------------------------------------------------------------
_PROMPT = re.compile(r"^(\s*)\$ (?=\S)")


def commands_of_transcript(text: str) -> str | None:
    """For a transcript (its first command line starts with a ``$ `` prompt), the text with the
    prompts blanked and the output lines emptied, line and column numbers kept; else None.

    A prompted line runs on over a trailing backslash, an open quote or a heredoc body.
    """
    lines = text.split("\n")
    first = next((ln for ln in lines if ln.strip() and not ln.lstrip().startswith("#")), "")
    if not _PROMPT.match(first):  # a transcript starts with a prompt; a script never does
        return None
    out, i = [], 0
    while i < len(lines):
        m = _PROMPT.match(lines[i])
        if not m:
            out.append("")
            i += 1
            continue
        command = [lines[i][:m.end(1)] + "  " + lines[i][m.end():]]
        i += 1
        while i < len(lines):
            joined = "\n".join(command)
            last = command[-1].rstrip()
            cont = last.endswith("\\") and (len(last) - len(last.rstrip("\\"))) % 2 == 1
            doc = _HEREDOC.search(joined.split("#", 1)[0]) if "<<<" not in joined else None
            if doc and not any(ln.strip() == doc.group(3) for ln in command[1:]):
                command.append(lines[i])
            elif cont or _open_quote(joined + " "):
                command.append(lines[i])
            else:
                break
            i += 1
        out.extend(command)
    return "\n".join(out)


OUTPUT_NOTE = ("looks like program output, not a command (it does not tokenize as shell and does not start with a "
               "program, variable or path): not checked; show output apart from commands, or give the commands "
               "a '$ ' prompt")


# ---- checking ------------------------------------------------------------------------------
def check(text: str, track: Track, registry: Registry | None, env: dict | None = None,
          fills: FillLedger | None = None, whole_fills: bool = True) -> tuple[list, int, list]:
    """``(findings, invocations checked, [(flag, yaml path)] for LLM API option files)``.

    ``env``: variables set before this snippet runs (by earlier snippets of the same page).
    ``fills``: a :class:`FillLedger` that gathers the fill_template.py calls of a longer sequence (the
    caller reports its findings); without one, the text is the whole sequence and a structural placeholder
    it leaves unfilled is an error here, unless ``whole_fills`` is false (fragments that each show one key).
    """
    known = _known_clis(track)
    everywhere = set(BUILTIN_CLIS) | set(known)
    others = registry.others(track) if registry else []
    for t in others:
        everywhere |= set(_known_clis(t))
    env = dict(env or {})
    raw: dict = {}  # what each variable was set to, as written (see _identity)
    ledger = fills if fills is not None else (FillLedger() if whole_fills else None)
    out, count, yaml_refs = [], 0, []
    docs: list[Heredoc] = []
    text = commands_of_transcript(text) or text
    for logical, positions in logical_lines(text, docs, everywhere):
        if logical.lstrip().startswith("#"):
            continue
        try:
            tokens = _tokenize(logical)
        except ValueError as err:
            ln, col = positions[len(logical) - len(logical.lstrip())]
            if not shell_like(logical, everywhere):
                out.append(note(ln, col, OUTPUT_NOTE))
            else:
                out.append((ln, col, f"shell syntax: {err}"))
            continue
        loc = _Locator(logical, positions)
        for cmd in _simple_commands(tokens):
            if assignments(cmd, env):
                for tok in cmd:
                    loc.find(tok)
                    m = _ASSIGN.match(tok)
                    if m:
                        raw[m.group(1)] = m.group(2)
                continue
            if ledger is not None and cmd[0] in ("if", "elif", "else", "fi"):
                ledger.enter(cmd[0])
            idx, prog, unresolved = _program(cmd, everywhere, env)
            if idx is None:
                places = [loc.find(tok) for tok in cmd]
                if ledger is not None:
                    _copy(cmd, places, env, raw, ledger)
                continue
            for tok in cmd[:idx]:
                loc.find(tok)
            ppos = loc.find(cmd[idx])
            if unresolved:
                out.append(note(*ppos, f"program called through {unresolved}, which this snippet (or its page) "
                                       f"does not set: cannot check it"))
                for tok in cmd[idx + 1:]:
                    loc.find(tok)
                continue
            if prog not in known:
                out.append(_missing_cli(prog, ppos, track, others))
                for tok in cmd[idx + 1:]:
                    loc.find(tok)
                continue
            kind, spec = known[prog]
            args = cmd[idx + 1:]
            found: list = []
            if kind == "fill":
                found = _check_fill(prog, spec, args, loc, track, env, ledger, raw)
            else:
                spec, label = _variant(spec, expand(cmd[idx], env)[0])
                if spec is None:
                    found = [note(*ppos, f"{prog}: {label}: cannot check its flags")]
                    for tok in args:
                        loc.find(tok)
                else:
                    found = _check_flags(prog + label, spec, args, loc, track, others)
            if not any(is_note(f[2]) and f[:2] == ppos for f in found):
                count += 1  # an invocation compared with the snapshot, not one it could not judge
            out.extend(found)
            for a, b in zip(args, args[1:] + [""]):
                for flag in LLM_YAML_FLAGS:
                    if a == flag and b:
                        yaml_refs.append((flag, expand(b, env)[0]))
                    elif a.startswith(flag + "="):
                        yaml_refs.append((flag, expand(a.split("=", 1)[1], env)[0]))
    passed = {os.path.normpath(ref) for _, ref in yaml_refs}
    for doc in docs:
        out.extend(_check_heredoc(doc, track, registry, env, passed))
    if fills is None and ledger is not None:
        out.extend((ln, col, msg) for _, ln, col, msg in ledger.findings())
    return sorted(out), count, yaml_refs


def _copy(cmd: list[str], places: list, env: dict, raw: dict, ledger: FillLedger) -> None:
    """``cp [-R|-r|-a...] SRC... DST`` / ``mv SRC... DST`` (``-t DIR`` too): what the ledger holds under each
    source goes to the destination (:meth:`FillLedger.copy`). The destination is the copy's own name, or the
    folder it goes into when it ends in ``/`` or there are several sources."""
    i = 0
    while i < len(cmd) and (re.match(r"^[A-Za-z_]\w*=", cmd[i]) or cmd[i] in WRAPPERS):
        i += 1
    if i >= len(cmd) or os.path.basename(expand(cmd[i], env)[0]) not in ("cp", "mv"):
        return
    move = os.path.basename(expand(cmd[i], env)[0]) == "mv"
    words, into, flags_done = [], None, False
    args = list(zip(cmd[i + 1:], places[i + 1:]))
    j = 0
    while j < len(args):
        tok, pos = args[j]
        if not flags_done and tok == "--":
            flags_done = True
        elif not flags_done and tok in ("-t", "--target-directory") and j + 1 < len(args):
            into = args[j + 1]
            j += 1
        elif not flags_done and tok.startswith("--target-directory="):
            into = (tok.split("=", 1)[1], pos)
        elif not flags_done and tok.startswith("-") and len(tok) > 1:
            pass
        else:
            words.append((tok, pos))
        j += 1
    if into is None:
        if len(words) < 2:
            return
        into = words[-1] if (len(words) > 2 or words[-1][0].endswith("/")) else None
        pairs = [(words[0], words[-1])] if into is None else []
        words = words[:-1] if into is not None else words
    else:
        pairs = []
    if into is not None:
        for src, _ in words:
            name = os.path.basename(os.path.normpath(src))
            pairs.append(((src, None), (into[0].rstrip("/") + "/" + name, into[1])))
    for (src, _), (dst, pos) in pairs:
        ledger.copy(_identity(src, env, raw), _identity(dst, env, raw), os.path.normpath(dst), pos, move)


def _heredoc_target(header: str) -> str | None:
    """The file a heredoc is written to: ``cat > x.yaml <<EOF``, ``cat <<EOF > x``, ``tee x <<EOF``."""
    try:
        tokens = _tokenize(header)
    except ValueError:
        return None
    for i, tok in enumerate(tokens):
        if tok in (">", ">>") and i + 1 < len(tokens):
            return tokens[i + 1]
    if tokens and tokens[0] == "tee":
        rest = [t for t in tokens[1:] if not t.startswith("-") and t not in ("<<", "<<-", "<")]
        return rest[0] if rest else None
    return None


def _check_heredoc(doc: Heredoc, track: Track, registry: Registry | None, env: dict,
                   passed: set | None = None) -> list:
    """LLM-API YAML in a heredoc, checked in place (positions in the snippet)."""
    from specdec_guide.validate import kinds, llm_yaml

    target = expand(_heredoc_target(doc.header) or "", env)[0]
    body = [ln.lstrip("\t") if doc.strip_tabs else ln for ln in doc.lines]
    shift = [len(a) - len(b) for a, b in zip(doc.lines, body)]
    text = "\n".join(body) + "\n"
    unresolved_lines = set()
    if not doc.quoted:  # an unquoted delimiter: the shell expands $VARs in the body
        expanded = []
        for n, line in enumerate(body):
            new, ok = expand(line, env)
            if not ok:
                unresolved_lines.add(n)
            expanded.append(line if not ok else new)
        text = "\n".join(expanded) + "\n"
    is_yaml_name = target.endswith((".yaml", ".yml"))
    looks = kinds.looks_like_llm_yaml(text, registry)
    named = is_yaml_name and (kinds.llm_yaml_by_name(os.path.basename(target))
                              or os.path.normpath(target) in (passed or set()))
    if not looks and not named:
        return []
    model_yaml = os.path.basename(target) == "model.yaml" or kinds.has_top_key(text, "triton_config")
    out = []
    for ln, col, msg in llm_yaml.check(text, track, registry, model_yaml=model_yaml):
        n = max(ln - 1, 0)
        line = doc.first_line + n
        col = col + (shift[n] if n < len(shift) else 0)
        if n in unresolved_lines and not is_note(msg):
            msg = Note(f"{msg} (this line takes a shell variable the snippet does not set: cannot check)")
        out.append((line, col, msg))
    return out


def _missing_cli(prog: str, ppos: tuple, track: Track, others: list[Track]) -> tuple:
    """An error when the track is known not to ship ``prog``, else a note (the snapshot is silent)."""
    hits = [t.id for t in others if prog in _known_clis(t)]
    where = f"; it exists in {', '.join(hits)}" if hits else ""
    if not track.engine_backend and prog in ENGINE_CLIS:
        return (*ppos, f"'{prog}' is not part of TRT-LLM {track.id} (this release has no TensorRT engine "
                       f"backend){where}")
    absent = [str(a) for a in track.cli.get("absent") or []]
    if prog in absent:
        return (*ppos, f"'{prog}' is not part of TRT-LLM {track.id}{where}")
    return note(*ppos, f"the TRT-LLM {track.id} snapshot does not record '{prog}': cannot check it{where}")


def _flags_of(spec: dict) -> list[str]:
    return [str(f) for f in spec.get("flags") or []]


def _is_flag(tok: str) -> bool:
    return tok.startswith("--") and len(tok) > 2 or (
        len(tok) > 1 and tok[0] == "-" and tok[1].isalpha())


def _check_flags(prog: str, spec: dict, args: list[str], loc: _Locator, track: Track, others) -> list:
    base = prog.split(" ", 1)[0]
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
            out.append(note(*pos, f"'{name}' is recorded only as a likely flag of {scope} in TRT-LLM {track.id} "
                                  f"(unconfirmed): cannot check it"))
            continue
        if "flags" not in effective and "flags" not in scope_spec:
            out.append(note(*pos, f"the TRT-LLM {track.id} snapshot does not record the flags of {scope}: "
                                  f"cannot check '{name}'"))
            continue
        if spec.get("_union"):
            out.append(note(*pos, f"'{name}' is not a flag of any recorded {base}; which script this is "
                                  f"cannot be told from its name alone: cannot check it"))
            continue
        sub = scope.split(" ", 1)[1] if " " in scope and not scope.startswith(f"{base} (") else None
        hits = []
        for t in others:
            tk = _known_clis(t).get(base)
            if tk and not tk[1].get("variants"):
                ts = tk[1] if sub is None else ((tk[1].get("subcommands") or {}).get(sub) or {})
                if name in _flags_of(ts):
                    hits.append(t.id)
        close = difflib.get_close_matches(name, flags, n=1, cutoff=0.75)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        where = f"; it exists in {', '.join(hits)}" if hits else ""
        out.append((*pos, f"unknown flag '{name}' for {scope} in TRT-LLM {track.id}{hint}{where}"))
    return out


def _template_model(target: str) -> str:
    """The template a config.pbtxt path belongs to: its folder, or ``llmapi`` for the llmapi model."""
    parts = target.replace("\\", "/").split("/")
    model = parts[-2] if len(parts) >= 2 else ""
    if model == "tensorrt_llm" and "llmapi" in parts[:-2]:
        return "llmapi"
    return model


def _fill_defaults(spec: dict) -> set:
    """The keys fill_template.py fills by itself on every call (``defaults`` in triton.yaml)."""
    behaviour = spec.get("behaviour") if isinstance(spec.get("behaviour"), dict) else {}
    return {str(k) for k in (spec.get("defaults") or behaviour.get("defaults") or {})}


def _check_fill(prog: str, spec: dict, args: list[str], loc: _Locator, track: Track, env: dict,
                ledger: FillLedger | None = None, raw: dict | None = None) -> list:
    """``fill_template.py [-i|--in_place] path/<model>/config.pbtxt key:value,key:value``.

    ``-i``/``--in_place`` is a flag (store_true) and may stand anywhere; the file is the first positional
    that ends in ``.pbtxt`` (or, when none does, the positional before the list), the next one the list.
    """
    out, target, tpos, pairs = [], None, None, []
    flags = _flags_of(spec)
    in_place = False
    positionals = []
    for tok in args:
        if _is_flag(tok):
            name = tok.split("=", 1)[0]
            pos = loc.find(name)
            if flags and name not in flags and name not in ("--help", "-h"):
                out.append((*pos, f"unknown flag '{name}' for {prog} in TRT-LLM {track.id}"))
            in_place = in_place or name in ("-i", "--in_place")
            continue
        before = loc.cursor
        positionals.append((tok, loc.find(tok), before))
    file_at = next((i for i, (tok, _, _) in enumerate(positionals)
                    if tok.endswith(".pbtxt") or expand(tok, env)[0].endswith(".pbtxt")), None)
    if file_at is None and len(positionals) >= 2:
        file_at = 0
    if file_at is not None:
        target, tpos, _ = positionals[file_at]
    pairs = [tok for i, (tok, _, _) in enumerate(positionals) if i != file_at]
    models = spec.get("models") or {}
    model = None
    if target is not None:
        resolved, _ = expand(target, env)
        model = _template_model(resolved)
    if target is None:
        if pairs:
            out.append(note(*loc.find(pairs[0], advance=False),
                            f"{prog}: no config.pbtxt to fill (expected -i <model>/config.pbtxt): cannot check"))
        return out
    if "$" in (model or "") or not model:
        out.append(note(*tpos, f"{prog}: the model folder of '{target}' comes from a variable this snippet "
                               f"does not set: cannot check its keys"))
        return out
    if model not in models:
        out.append(note(*tpos, f"{prog}: '{model}' is not one of the templates recorded for TRT-LLM {track.id} "
                               f"({', '.join(models)}): cannot check its keys"))
        return out
    keys = set((models.get(model) or {}).get("keys") or [])
    ident = _identity(target, env, raw or {})
    # keys are found from where the list starts (it may stand before the file)
    end = loc.cursor
    loc.cursor = next((c for i, (_, _, c) in enumerate(positionals) if i != file_at), end)
    # Where the substitutions start: their first key (the whole word may not be found as written, quotes and
    # line continuations in it being gone after tokenizing).
    first_key = pairs[0].split(",", 1)[0].split(":", 1)[0] if pairs else ""
    spos = loc.find(first_key, advance=False) if first_key else tpos
    filled: set = set()
    if len(pairs) > 1:
        out.append((*loc.find(pairs[1], advance=False),
                    f"{prog} takes one substitutions argument (key:value,key:value); this is a second one, which "
                    f"its argument parser refuses (quote the list, or join it with commas)"))
    for tok in pairs[:1]:
        tok = expand(tok, env)[0]  # the shell substitutes ${VAR:-default} before python sees it
        for part in _split_escaped(tok, ","):
            fields = _split_escaped(part, ":")
            key = fields[0].strip()
            pos = loc.find(key, advance=bool(key)) if key else loc.find(tok, advance=False)
            if len(fields) != 2:
                why = ("has no ':'" if len(fields) == 1 else "has more than one ':' (a ':' inside a value needs "
                       "two backslashes: each split removes one)")
                shown = part if part else "(empty: a stray comma)"
                out.append((*pos, f"{prog}: substitution '{shown}' {why}; fill_template.py splits each on ':' "
                                  f"and stops with an error"))
                continue
            filled.add(key)
            if key not in keys:
                close = difflib.get_close_matches(key, sorted(keys), n=1, cutoff=0.75)
                hint = f" (did you mean '{close[0]}'?)" if close else ""
                # fill_template.py asserts `key in text`: part of a longer key slips through, filling nothing
                inside = next((k for k in sorted(keys) if key in k), None)
                why = (f"fill_template.py lets it through (it is part of '{inside}') but substitutes nothing"
                       if inside else "fill_template.py fails on keys the template lacks")
                out.append((*pos, f"unknown template key '{key}' for model '{model}' in TRT-LLM {track.id}{hint}; "
                                  f"{why}"))
                continue
            origin = ledger.earlier(ident, key) if ledger is not None else None
            if origin is not None:
                out.append((*pos, _refill_message(prog, key, target, origin, ledger.scope, keys)))
    loc.cursor = max(loc.cursor, end)
    structural = (models.get(model) or {}).get("structural_keys")
    if ledger is not None and in_place and isinstance(structural, list):
        # Only an in-place call changes the file; without -i the result goes to stdout.
        broken = any(not is_note(f[2]) for f in out)
        defaults = _fill_defaults(spec)
        mandatory = [str(k) for k in (models.get(model) or {}).get("mandatory_keys") or []]
        ledger.record(ident, model, [str(k) for k in structural], filled | defaults, target, spos, prog,
                      track.id, broken, mandatory, defaults - filled)
    return out


def _refill_message(prog: str, key: str, target: str, origin: _Origin, scope: object, keys: set) -> str:
    """A key that an earlier call on the same file (or on the file it was copied from) already filled."""
    by = (f"by the call on line {origin.line}" if origin.scope is None and scope is None
          else "by an earlier call")
    if origin.default:
        by += ", which fill_template.py fills with its defaults on every call"
    if origin.via:
        by += f", before this file was copied from '{origin.via}'"
    inside = next((k for k in sorted(keys) if key in k and k != key), None)
    survives = (f"as part of '{inside}' or as a field or parameters name" if inside
                else "as a field or parameters name")
    return (f"{prog}: '{key}' is already filled in '{target}' ({by}): its ${{{key}}} is gone from the file, and "
            f"fill_template.py asserts that the key's text is still there: it stops here and fills nothing (where "
            f"the text survives, {survives}, it substitutes nothing and the earlier value stays); give each key once "
            f"per file")


def _split_escaped(text: str, sep: str) -> list[str]:
    """Split like fill_template.py: ``sep`` after a backslash is kept (without the backslash)."""
    parts, cur, escape = [], "", False
    for ch in text:
        if escape:
            cur, escape = cur + ch, False
        elif ch == sep:
            parts.append(cur)
            cur = ""
        elif ch == "\\":
            escape = True
        else:
            cur += ch
    parts.append(cur)
    return parts
