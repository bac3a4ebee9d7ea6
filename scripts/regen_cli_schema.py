#!/usr/bin/env python3
"""Regenerate the command-line facts of a schema snapshot from the release's own pages and files.

    python scripts/regen_cli_schema.py TRACK --from DIR [--check]
    python scripts/regen_cli_schema.py TRACK --fetch [--check]

TRACK is a track id of ``schemas/tracks.yaml`` that has ``docs_pages``. For each source in
:data:`SOURCES` the script reads one file: a page of TensorRT-LLM's versioned documentation (its
``gh-pages`` branch: ``<track>/commands/...``) or a file of the TensorRT-LLM repository at a recorded
commit (the Triton templates, ``fill_template.py``, the ``convert_checkpoint.py`` example scripts).
``--from DIR`` reads them from ``DIR/<path>`` (the repository layout; ``git show <commit>:<path>``
output saved there); ``--fetch`` downloads each one from ``raw.githubusercontent.com`` at its commit.
Facts only are kept: flag names, subcommand names, ``${...}`` template keys and where each stands
(:func:`template_roles`: ``structural_keys`` and ``comment_keys`` per model). The script writes
``cli.yaml`` and the ``legacy_inflight_batcher_llm`` block of ``triton.yaml`` in
``src/specdec_guide/schemas/<track>/`` (the rest of triton.yaml is left as it is); ``--check`` writes
nothing and exits 1 when the recorded snapshot and the sources disagree.

Parsers (each takes the file's text):

* :func:`click_page_flags`: a sphinx-click command page (trtllm-serve, trtllm-bench). Each
  ``Usage`` block names a (sub)command; the option entries after it are its flags.
* :func:`argparse_page_flags`: a sphinx-argparse page (trtllm-build): ``<kbd>--a, --b</kbd>``.
* :func:`table_page_flags`: an option table under ``python script.py [sub] [OPTIONS]``
  (prepare_dataset.py on the trtllm-bench page).
* :func:`argparse_script_flags`: ``add_argument('--x', '-x', ...)`` calls in a Python script.
* :func:`template_keys`: the ``${name}`` placeholders of a Triton ``config.pbtxt`` template; the
  whole text counts, comments included, because fill_template.py's check is a substring test.
* :func:`template_roles`: where each placeholder stands: ``structural`` (outside a ``parameters``
  entry's ``string_value``: left unfilled, the model does not load; the validator refuses a
  fill_template.py sequence that leaves one), ``parameter`` or ``comment`` (comments only).
"""

from __future__ import annotations

import argparse
import html
import re
import sys
import urllib.request
from pathlib import Path

import yaml

from specdec_guide.releases.tracks import Registry

ROOT = Path(__file__).resolve().parents[1]
SCHEMAS = ROOT / "src" / "specdec_guide" / "schemas"
REPO = "NVIDIA/TensorRT-LLM"
RAW = "https://raw.githubusercontent.com/{repo}/{commit}/{path}"
BLOB = "https://github.com/{repo}/blob/{commit}/{path}"
#: Repository files read at the newest commit the index holds: not tied to a release tag.
_IBL = "triton_backend/all_models/inflight_batcher_llm"
TEMPLATE_COMMITS = {  # model -> (path, commit); "llmapi" is the llmapi model's tensorrt_llm folder
    "tensorrt_llm": (f"{_IBL}/tensorrt_llm/config.pbtxt", "2a9abd9536aa62ad3e4b9314be9286b1b1be523b"),
    "preprocessing": (f"{_IBL}/preprocessing/config.pbtxt", "808059da341493bbf8deb9380aef745e4f546909"),
    "postprocessing": (f"{_IBL}/postprocessing/config.pbtxt", "89fd9b74ab7ae753b4c6b3db25a400dca7ea54a0"),
    "tensorrt_llm_bls": (f"{_IBL}/tensorrt_llm_bls/config.pbtxt", "bff88ea886779f832686acb3f165e2b919c95b77"),
    "ensemble": (f"{_IBL}/ensemble/config.pbtxt", "2a9abd9536aa62ad3e4b9314be9286b1b1be523b"),
    "llmapi": ("triton_backend/all_models/llmapi/tensorrt_llm/config.pbtxt",
               "c8c6df08bd0ead54cd47f7973e1e425c28a174cd"),
}
FILL_TEMPLATE_COMMIT = "2a9abd9536aa62ad3e4b9314be9286b1b1be523b"
CONVERT_SCRIPTS = {  # variant -> (path, commit)
    "llama": ("examples/models/core/llama/convert_checkpoint.py", "fd96a08bdc489f41f139b295935b10ed43652fa1"),
    "eagle": ("examples/eagle/convert_checkpoint.py", "65b31db1b401d3752b8ebe7c29093cbfb6af04b7"),
    "medusa": ("examples/medusa/convert_checkpoint.py", "b93e14ca093e446615f3009cae6ca5a33c4f2f56"),
}
#: Every command accepts these; the snapshot leaves them out and the validator always allows them.
HELP = ("-h", "--help")
UNTIED = ("read at the one commit the file index returned; that commit could not be tied to the release "
          "tag, so the fact is unconfirmed for this release")


def _pages(track: str, commit: str, built_from: str) -> dict:
    def page(rel: str) -> dict:
        return {"repo": REPO, "path": f"{track}/commands/{rel}", "commit": commit,
                "url": f"https://nvidia.github.io/TensorRT-LLM/{track}/commands/{rel}",
                "note": f"release documentation page, generated from TensorRT-LLM commit {built_from}"}

    return {"build_page": page("trtllm-build.html"), "serve_page": page("trtllm-serve/trtllm-serve.html"),
            "bench_page": page("trtllm-bench.html")}


def _repo_sources() -> dict:
    out = {}
    for model, (path, commit) in TEMPLATE_COMMITS.items():
        out[f"template_{model}"] = {"repo": REPO, "path": path, "commit": commit, "unconfirmed": True,
                                    "url": BLOB.format(repo=REPO, commit=commit, path=path), "note": UNTIED}
    path = "triton_backend/tools/fill_template.py"
    out["fill_template"] = {"repo": REPO, "path": path, "commit": FILL_TEMPLATE_COMMIT, "unconfirmed": True,
                            "url": BLOB.format(repo=REPO, commit=FILL_TEMPLATE_COMMIT, path=path), "note": UNTIED}
    for variant, (path, commit) in CONVERT_SCRIPTS.items():
        out[f"convert_{variant}"] = {"repo": REPO, "path": path, "commit": commit, "unconfirmed": True,
                                     "url": BLOB.format(repo=REPO, commit=commit, path=path), "note": UNTIED}
    return out


def _sources() -> dict:
    """Per track of tracks.yaml: its release pages (the gh-pages commit in ``docs_pages``) and the repo files."""
    return {t.id: {**_pages(t.id, t.docs_pages["commit"], t.docs_pages["built_from"]), **_repo_sources()}
            for t in Registry(SCHEMAS).tracks if t.docs_pages}


SOURCES = _sources()


# ---- parsers -------------------------------------------------------------------------------
def _text(fragment: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


def _dedupe(items) -> list:
    seen, out = set(), []
    for x in items:
        if x not in seen:
            seen.add(x)
            out.append(x)
    return out


_USAGE = re.compile(r'<pre>(.*?)</pre>', re.S)
_CLICK_DT = re.compile(r'<dt class="sig sig-object std" id="cmdoption-[^"]*">(.*?)</dt>', re.S)
_DESCNAME = re.compile(r'<span class="sig-name descname"><span class="pre">(-{1,2}[\w-]+)</span></span>')


def click_page_flags(text: str, program: str) -> dict:
    """``{(): [group flags], ("serve",): [flags], ...}`` from a sphinx-click page of ``program``."""
    out: dict[tuple, list] = {}
    marks = []
    for m in _USAGE.finditer(text):
        usage = " ".join(_text(m.group(1)).split())
        if not usage.startswith(program + " ") and usage != program:
            continue
        words = usage.split()[1:]
        path = tuple(w for w in words[:1] if re.match(r"^[a-z][\w-]*$", w))
        marks.append((m.end(), path))
    for i, (start, path) in enumerate(marks):
        end = marks[i + 1][0] if i + 1 < len(marks) else len(text)
        flags = [f for dt in _CLICK_DT.findall(text[start:end]) for f in _DESCNAME.findall(dt)]
        out.setdefault(path, [])
        out[path] = _dedupe(out[path] + flags)
    return out


_KBD = re.compile(r"<dt><kbd>(.*?)</kbd></dt>", re.S)


def argparse_page_flags(text: str) -> list:
    """Flags of a sphinx-argparse page, aliases as separate entries (``-h``/``--help`` left out)."""
    flags = []
    for m in _KBD.finditer(text):
        flags.extend(f.strip() for f in _text(m.group(1)).split(",") if f.strip().startswith("-"))
    return _dedupe(flags)


_TABLE_USAGE = re.compile(r"<pre>(?:<span></span>)?python.*?</pre>", re.S)
_TABLE_FLAG = re.compile(r'<td><p><code class="docutils literal notranslate"><span class="pre">(-{1,2}[\w-]+)</span>')


def table_page_flags(text: str, script: str) -> dict:
    """``{(): [flags], ("dataset",): [...]}`` for option tables under ``python <script> [sub] [OPTIONS]``."""
    marks = []
    for m in _TABLE_USAGE.finditer(text):
        words = _text(m.group(0)).split()
        if len(words) < 2 or words[1] != script:
            continue
        sub = tuple(w for w in words[2:3] if not w.startswith("["))
        marks.append((m.end(), sub))
    out = {}
    for i, (start, sub) in enumerate(marks):
        end = marks[i + 1][0] if i + 1 < len(marks) else len(text)
        out[sub] = _dedupe(_TABLE_FLAG.findall(text[start:end]))
    return out


_ADD_ARG = re.compile(r"add_argument\(\s*((?:[\"']-{1,2}[\w-]+[\"']\s*(?:,\s*|\)))+)", re.S)


def argparse_script_flags(text: str) -> list:
    """Option strings of every ``add_argument('--x', '-x', ...)`` call."""
    flags = []
    for m in _ADD_ARG.finditer(text):
        flags.extend(re.findall(r"[\"'](-{1,2}[\w-]+)[\"']", m.group(1)))
    return _dedupe(flags)


def template_keys(text: str) -> list:
    """``${name}`` placeholders in order of first appearance (comments count: see the module doc)."""
    return _dedupe(re.findall(r"\$\{(\w+)\}", text))


_PBTXT_TOKEN = re.compile(r"""#[^\n]*|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|\$\{\w+\}|[A-Za-z_]\w*|[{}\[\]]|\S""")
_PLACEHOLDER = re.compile(r"\$\{(\w+)\}")
#: The roles of a placeholder (see :func:`template_roles`).
ROLES = ("structural", "parameter", "comment")


def template_roles(text: str) -> dict:
    """``{name: role}`` for every ``${name}`` placeholder of a Triton ``config.pbtxt`` template.

    ``parameter``: every occurrence is the ``string_value`` of a top-level ``parameters`` entry, so a
    placeholder left unfilled is a string the backend reads (the backends take a value still in ``${...}``
    form as unset). ``structural``: at least one occurrence stands anywhere else (``max_batch_size``, a
    ``data_type``, ``decoupled``, an instance ``count``, the ``backend`` name): left unfilled, the
    protobuf text does not parse, or names a backend or type that does not exist, and the model does not
    load. ``comment``: it occurs in comments only (filling it changes nothing Triton reads).
    """
    roles: dict[str, str] = {}

    def mark(name: str, role: str) -> None:
        old = roles.get(name)
        if old is None or ROLES.index(role) < ROLES.index(old):
            roles[name] = role

    stack: list = []
    last_ident = None
    for m in _PBTXT_TOKEN.finditer(text):
        tok = m.group(0)
        if tok.startswith("#"):
            for name in _PLACEHOLDER.findall(tok):
                mark(name, "comment")
        elif tok[0] in "\"'":
            param = bool(stack) and stack[0] == "parameters" and last_ident == "string_value"
            for name in _PLACEHOLDER.findall(tok):
                mark(name, "parameter" if param else "structural")
        elif tok.startswith("${"):
            mark(tok[2:-1], "structural")
        elif tok in ("{", "["):
            stack.append(last_ident if last_ident is not None else (stack[-1] if stack else None))
            last_ident = None
        elif tok in ("}", "]"):
            if stack:
                stack.pop()
            last_ident = None
        elif re.match(r"^[A-Za-z_]", tok):
            last_ident = tok
    # In order of first appearance, like template_keys.
    return {k: roles[k] for k in template_keys(text) if k in roles}


def structural_keys(text: str) -> list:
    """The placeholders of a template that must be filled for the model to load (:func:`template_roles`)."""
    return [k for k, role in template_roles(text).items() if role == "structural"]


# ---- reading the sources ---------------------------------------------------------------------
def read_source(src: dict, base: Path | None) -> str:
    if base is not None:
        path = base / src["path"]
        if not path.is_file():
            raise SystemExit(f"regen_cli_schema: {path} is missing (save {src['repo']}@{src['commit']}:{src['path']} "
                             f"there, or use --fetch)")
        return path.read_text(encoding="utf-8")
    url = RAW.format(repo=src["repo"], commit=src["commit"], path=src["path"])
    try:
        with urllib.request.urlopen(url, timeout=60) as resp:
            return resp.read().decode("utf-8")
    except OSError as err:
        raise SystemExit(f"regen_cli_schema: cannot download {url}: {err}") from None


def extract(track: str, read) -> dict:
    """Every command-line fact of ``track``: ``{"cli": {...}, "templates": {...}}`` (see :func:`render_cli`)."""
    build = argparse_page_flags(read("build_page"))
    serve = click_page_flags(read("serve_page"), "trtllm-serve")
    bench_text = read("bench_page")
    bench = click_page_flags(bench_text, "trtllm-bench")
    prepare = table_page_flags(bench_text, "prepare_dataset.py")
    convert = {v: argparse_script_flags(read(f"convert_{v}")) for v in CONVERT_SCRIPTS}
    fill = argparse_script_flags(read("fill_template"))
    texts = {m: read(f"template_{m}") for m in TEMPLATE_COMMITS}
    templates = {m: template_keys(t) for m, t in texts.items()}
    roles = {m: template_roles(t) for m, t in texts.items()}
    return {"build": build, "serve": serve, "bench": bench, "prepare": prepare, "convert": convert,
            "fill": fill, "templates": templates, "roles": roles}


# ---- writing the snapshot ---------------------------------------------------------------------
def _click_command(found: dict, source: str, default: str | None = None) -> dict:
    cmd: dict = {"source": source}
    if default:
        cmd["default_subcommand"] = default
    cmd["flags"] = [f for f in found.get((), []) if f not in HELP]
    cmd["subcommands"] = {path[0]: {"flags": [f for f in flags if f not in HELP]}
                          for path, flags in found.items() if path}
    return cmd


def render_cli(track: str, facts: dict) -> dict:
    """The cli.yaml mapping for ``track`` from :func:`extract`'s facts."""
    sources = {k: v for k, v in SOURCES[track].items() if k.endswith("_page") or k.startswith("convert_")}
    prepare = facts["prepare"]
    return {
        "version": track,
        "generated_by": "scripts/regen_cli_schema.py",
        "sources": sources,
        "commands": {
            "trtllm-build": {"source": "build_page", "flags": [f for f in facts["build"] if f not in HELP]},
            "trtllm-serve": _click_command(facts["serve"], "serve_page", default="serve"),
            "trtllm-bench": _click_command(facts["bench"], "bench_page"),
            "convert_checkpoint.py": {
                "note": ("one script per model family; a call is matched to a variant by the folder in its path. "
                         "The draft/target example of the engine workflow converts both models with the llama "
                         "script."),
                "variants": {v: {"path": CONVERT_SCRIPTS[v][0], "container_path": f"/app/{CONVERT_SCRIPTS[v][0]}",
                                 "source": f"convert_{v}", "unconfirmed": True,
                                 "flags": [f for f in flags if f not in HELP]}
                             for v, flags in facts["convert"].items()},
            },
        },
        "scripts": {
            "prepare_dataset.py": {
                "path": "benchmarks/cpp/prepare_dataset.py", "source": "bench_page",
                "flags": prepare.get((), []),
                "subcommands": {sub[0]: {"flags": flags} for sub, flags in prepare.items() if sub},
            },
        },
    }


def render_legacy(track: str, facts: dict, previous: dict) -> dict:
    """The ``legacy_inflight_batcher_llm`` block of triton.yaml, keeping its descriptive keys."""
    block = dict(previous or {})
    srcs = SOURCES[track]
    fill = dict(block.get("fill_template") or {})
    fill.update({"path": "/app/tools/fill_template.py", "repo_path": srcs["fill_template"]["path"],
                 "source": "fill_template", "flags": [f for f in facts["fill"] if f not in HELP]})
    block["fill_template"] = fill
    models = {}
    generated = ("keys", "structural_keys", "comment_keys", "source", "unconfirmed", "note")
    for model, keys in facts["templates"].items():
        old = (block.get("models") or {}).get(model) or {}
        entry = {k: v for k, v in old.items() if k not in generated}
        roles = (facts.get("roles") or {}).get(model) or {}
        entry.update({"source": f"template_{model}", "unconfirmed": True, "keys": keys,
                      "structural_keys": [k for k in keys if roles.get(k) == "structural"]})
        comments = [k for k in keys if roles.get(k) == "comment"]
        if comments:
            entry["comment_keys"] = comments
        models[model] = entry
    block["models"] = models
    block["sources"] = {k: v for k, v in srcs.items() if k.startswith("template_") or k == "fill_template"}
    return block


def replace_block(text: str, key: str, block: dict) -> str:
    """``text`` (a YAML file) with its top-level ``key:`` block replaced by ``block``."""
    dumped = yaml.safe_dump({key: block}, sort_keys=False, width=110, allow_unicode=True)
    lines = text.split("\n")
    start = next((i for i, ln in enumerate(lines) if ln.startswith(f"{key}:")), None)
    if start is None:
        return text.rstrip("\n") + "\n\n" + dumped
    end = next((i for i in range(start + 1, len(lines)) if lines[i] and not lines[i][0].isspace()
                and not lines[i].startswith("#")), len(lines))
    return "\n".join(lines[:start]) + "\n" + dumped + ("\n" + "\n".join(lines[end:]) if end < len(lines) else "")


def compare(recorded: dict, regenerated: dict, where: str = "") -> list[str]:
    """Differences in flags/keys/subcommands between two snapshot mappings (descriptive keys ignored)."""
    out = []
    for key in sorted(set(recorded) | set(regenerated)):
        a, b = recorded.get(key), regenerated.get(key)
        here = f"{where}.{key}" if where else str(key)
        if key in ("flags", "keys", "structural_keys", "comment_keys"):
            for x in [x for x in (a or []) if x not in (b or [])]:
                out.append(f"{here}: {x} recorded, not in the source")
            for x in [x for x in (b or []) if x not in (a or [])]:
                out.append(f"{here}: {x} in the source, not recorded")
        elif isinstance(a, dict) or isinstance(b, dict):
            if key in ("sources",):
                continue
            out.extend(compare(a or {}, b or {}, here))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("track", choices=sorted(SOURCES))
    how = ap.add_mutually_exclusive_group(required=True)
    how.add_argument("--from", dest="base", type=Path, metavar="DIR", help="read the sources from DIR/<path>")
    how.add_argument("--fetch", action="store_true", help="download each source at its recorded commit")
    ap.add_argument("--check", action="store_true", help="compare with the recorded snapshot; write nothing")
    ap.add_argument("--schemas", type=Path, default=SCHEMAS, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    srcs = SOURCES[args.track]
    facts = extract(args.track, lambda name: read_source(srcs[name], None if args.fetch else args.base))
    folder = args.schemas / args.track
    cli = render_cli(args.track, facts)
    triton_text = (folder / "triton.yaml").read_text(encoding="utf-8")
    triton = yaml.safe_load(triton_text) or {}
    legacy = render_legacy(args.track, facts, triton.get("legacy_inflight_batcher_llm") or {})
    if args.check:
        recorded_cli = yaml.safe_load((folder / "cli.yaml").read_text(encoding="utf-8")) or {}
        diffs = compare(recorded_cli, cli) + compare(triton.get("legacy_inflight_batcher_llm") or {}, legacy,
                                                     "legacy_inflight_batcher_llm")
        for d in diffs:
            print(d)
        print(f"{args.track}: {'snapshot matches its sources' if not diffs else f'{len(diffs)} differences'}")
        return 1 if diffs else 0
    header = (f"# Command-line facts of TensorRT-LLM {args.track}, generated by scripts/regen_cli_schema.py from the\n"
              f"# sources below (release documentation pages; repository files at the recorded commit). Edit the\n"
              f"# script, not this file.\n")
    (folder / "cli.yaml").write_text(header + yaml.safe_dump(cli, sort_keys=False, width=110), encoding="utf-8")
    (folder / "triton.yaml").write_text(replace_block(triton_text, "legacy_inflight_batcher_llm", legacy),
                                        encoding="utf-8")
    print(f"wrote {folder / 'cli.yaml'} and the legacy_inflight_batcher_llm block of {folder / 'triton.yaml'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
