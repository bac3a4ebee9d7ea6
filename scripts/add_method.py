#!/usr/bin/env python3
"""Scaffold a new speculative-decoding method from an existing one, then list what a person must decide.

    python scripts/add_method.py NAME --like EXISTING
    python scripts/add_method.py --left      # what scaffolds left to decide; exit 1 while anything is

NAME is the new method's id (lower case, digits and underscores: its template folder, snippet file and
``--method`` value); EXISTING a method of ``schemas/methods.yaml``. The script writes what
tests/test_registry.py requires of a method, starting from EXISTING's:

* an entry at the end of ``methods.yaml``: EXISTING's decoding_type, flags and tracks, each marked
  ``TODO(add_method)``, its label ``TODO``; no ``cost`` (``estimate`` and the calculator leave it out
  until one is written);
* ``model_repo_templates/llmapi/NAME/``: EXISTING's template;
* ``snippets/llm_api/<track>/NAME.yaml`` on every track it exists on: EXISTING's snippet there;
* ``docs/speculative_decoding/NAME.md``: a page that names its decoding_type and shows its snippet
  (one tab per track), in the nav after the other methods.

Each copied file carries a ``TODO(add_method)`` line. It refuses (one line, exit 2) when NAME exists in
any form or EXISTING does not; everything is computed and checked before the first write, and a failed
write puts back every file (scripts/add_track.py's machinery, which this script loads).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("add_track", Path(__file__).resolve().parent / "add_track.py")
add_track = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(add_track)
Refusal, _load, _checked = add_track.Refusal, add_track._load, add_track._checked

METHODS_YAML = add_track.METHODS_YAML
TEMPLATES = Path("model_repo_templates/llmapi")
PAGES = Path("docs/speculative_decoding")
MKDOCS = Path("mkdocs.yml")
NAV_GROUP = "Methods on a GPU"
MARK = "TODO(add_method)"
METHOD_ID = re.compile(r"[a-z][a-z0-9_]*")


class MethodPlan(add_track.Changes):
    def __init__(self, name: str, like: str):
        super().__init__()
        add_track.ROOT = ROOT  # one checkout for both scripts (a test points ROOT at a copy)
        self.name = name
        self.text = (ROOT / METHODS_YAML).read_text(encoding="utf-8")
        data = _load(self.text) or {}
        self.entries = data.get("methods") or []
        by_id = {str(e["id"]): e for e in self.entries}
        if like not in by_id:
            raise Refusal(f"{METHODS_YAML}:1:1: no method {like!r} to start from (methods: {', '.join(by_id)}); "
                          "nothing written")
        self.like = by_id[like]
        if not METHOD_ID.fullmatch(name):
            raise Refusal(f"{name!r}: a method id is lower case letters, digits and underscores; nothing written")
        if name in by_id:
            line = next(n for n, ln in enumerate(self.text.splitlines(), 1) if re.match(rf"\s*- id: {re.escape(name)}\s*$", ln))
            raise Refusal(f"{METHODS_YAML}:{line}:1: method {name} exists already; nothing written")
        self.tracks = [str(t) for t in self.like.get("tracks") or []]
        self.snippet = f"{name}.yaml" if self.like.get("snippet") else None
        self.page = PAGES / f"{name}.md"
        for rel in [TEMPLATES / name, self.page, *(Path("snippets/llm_api") / t / (self.snippet or "") for t in self.tracks
                                                    if self.snippet)]:
            if (ROOT / rel).exists():
                raise Refusal(f"{rel}: exists already (method {name} half added?); nothing written")

    # -- each part --------------------------------------------------------------------------------
    def entry(self):
        like, name = self.like, self.name
        lines = [f"  # {MARK}: scaffolded from {like['id']} by scripts/add_method.py: each marked value is "
                 f"{like['id']}'s; set the new method's own.\n",
                 f"  - id: {name}\n",
                 f'    label: "TODO"\n',
                 f"    decoding_type: {json.dumps(like['decoding_type'])}"
                 f"  # {MARK}: its spelling in every track's SpeculativeConfig\n"]
        if like.get("decoding_type_by_track"):
            lines.append(f"    decoding_type_by_track: {json.dumps(like['decoding_type_by_track'])}  # {MARK}\n")
        lines += [f"    template: {name}\n",
                  f"    snippet: {json.dumps(self.snippet)}\n",
                  f"    cpu_engine: {json.dumps(like['cpu_engine'])}  # {MARK}: does the CPU engine run it?\n",
                  f"    trtllm_model: {json.dumps(like['trtllm_model'])}  # {MARK}: can the llmapi model serve it?\n",
                  f"    needs: {json.dumps(like['needs'])}  # {MARK}: what repo render must be given\n",
                  f"    teaches: {self.page.as_posix()}\n",
                  f"    tracks: {json.dumps(self.tracks)}  # {MARK}: the tracks whose release has it\n"]
        text = self.text if self.text.endswith("\n") else self.text + "\n"
        after = text + "".join(lines)
        want = _load(self.text)
        new = {"id": name, "label": "TODO", "decoding_type": like["decoding_type"], "template": name,
               "snippet": self.snippet, "cpu_engine": like["cpu_engine"], "trtllm_model": like["trtllm_model"],
               "needs": like["needs"], "teaches": self.page.as_posix(), "tracks": self.tracks}
        if like.get("decoding_type_by_track"):
            new["decoding_type_by_track"] = like["decoding_type_by_track"]
        want = {**want, "methods": [*want["methods"], new]}
        self.put(METHODS_YAML, _checked(METHODS_YAML, text, after, want))
        self.edits[METHODS_YAML] = f"the entry (copied from {like['id']}, label TODO, no cost)"

    def _with_mark(self, text: str, comment: str) -> str:
        note = f"{comment} {MARK}: copied from {self.like['id']}'s by scripts/add_method.py; make it {self.name}'s.\n"
        lines = text.splitlines(keepends=True)
        at = 1 if lines and add_track.DIRECTIVE.match(lines[0]) else 0
        return "".join(lines[:at] + [note] + lines[at:])

    def template(self):
        src = TEMPLATES / self.like["template"]
        for path in sorted(p for p in (ROOT / src).rglob("*") if p.is_file() and "__pycache__" not in p.parts):
            rel = path.relative_to(ROOT / src)
            text = path.read_text(encoding="utf-8")
            if path.suffix in (".yaml", ".yml", ".pbtxt", ".py"):
                text = self._with_mark(text, "#")
            self.put(TEMPLATES / self.name / rel, text, src / rel)

    def snippets(self):
        if not self.snippet:
            return
        for t in self.tracks:
            src = Path("snippets/llm_api") / t / self.like["snippet"]
            if (ROOT / src).is_file():
                self.put(Path("snippets/llm_api") / t / self.snippet,
                         self._with_mark((ROOT / src).read_text(encoding="utf-8"), "#"), src)

    def page_and_nav(self):
        like, name = self.like, self.name
        body = [f"# {name} (TODO)\n", "\n",
                f"<!-- {MARK}: scaffolded from {like['id']} by scripts/add_method.py: what it is, when it pays, "
                "how to serve it, each fact with its source -->\n", "\n"]
        if like["decoding_type"]:
            body.append(f"On TensorRT-LLM's PyTorch backend it is `decoding_type: {like['decoding_type']}`.\n")
        if self.snippet:
            body += ["\n", f"<!-- specdec-guide: track-tabs yaml llm_api/{{track}}/{self.snippet} -->\n"]
        self.put(self.page, "".join(body))
        text = (ROOT / MKDOCS).read_text(encoding="utf-8")
        lines = text.splitlines(keepends=True)
        head = next((i for i, ln in enumerate(lines) if re.match(rf"^(\s*)- {re.escape(NAV_GROUP)}:\s*$", ln)), None)
        if head is None:
            raise Refusal(f"{MKDOCS}:1:1: no nav group '{NAV_GROUP}' to add the page to; nothing written")
        depth = len(lines[head]) - len(lines[head].lstrip())
        end = head + 1
        while end < len(lines) and lines[end].strip() and len(lines[end]) - len(lines[end].lstrip()) > depth:
            end += 1
        indent = lines[head + 1][:len(lines[head + 1]) - len(lines[head + 1].lstrip())]
        rel = self.page.relative_to("docs").as_posix()
        lines[end:end] = [f'{indent}- "{name} (TODO)": {rel}  # {MARK}: its title and place in the nav\n']
        after = "".join(lines)
        nav_after = (_load(after) or {}).get("nav")
        nav_before = (_load(text) or {}).get("nav")
        group = next(g for g in nav_before if isinstance(g, dict) and NAV_GROUP in g)
        want = [dict(g, **{NAV_GROUP: [*g[NAV_GROUP], {f"{name} (TODO)": rel}]}) if g is group else g for g in nav_before]
        if nav_after != want:
            raise Refusal(f"{MKDOCS}:{head + 1}:1: the nav entry does not read back as intended; nothing written")
        self.put(MKDOCS, after)
        self.edits[MKDOCS] = f"the page in the nav under '{NAV_GROUP}'"

    def build(self):
        self.entry()
        self.template()
        self.snippets()
        self.page_and_nav()


def report(plan: MethodPlan) -> str:
    name, like = plan.name, plan.like["id"]
    out = [f"Scaffolded method {name} from {like}: {len(plan.written)} files written."]
    out += [f"  new  {rel}" for rel in plan.written if rel not in plan.edits]
    out += [f"  edit {rel}: {what}" for rel, what in plan.edits.items()]
    out += ["", f"What a person must still decide (each '{MARK}' marks one; python scripts/add_method.py --left "
                "lists those left):",
            f"  1. {METHODS_YAML}: label, decoding_type (and decoding_type_by_track) as every track's snapshot "
            f"spells it, cpu_engine, trtllm_model, needs, tracks; a cost block for estimate and the calculator.",
            f"  2. {TEMPLATES / name}/ and snippets/llm_api/<track>/{plan.snippet or '(none)'}: {like}'s keys until "
            "replaced; a snippet that differs between tracks only in the release belongs in snippets/PER_TRACK.yaml.",
            f"  3. {plan.page}: the page itself (or point teaches at a notebook), and its title in {MKDOCS}.",
            "  4. The engines: with cpu_engine true, the drafting in src/specdec_guide/drafters/ and engine/; with "
            "false, engine/config.py's REFUSALS line and templates.py's _CPU_WHY; trtllm_model false: _TRTLLM_WHY.",
            "  5. Lists of methods kept in code: the support matrices' columns (site/support.py METHOD_LABELS and "
            "each track's support.yaml), the field notes' METHODS vocabulary (field_notes.py), the migration map "
            "and the behaviour records where the method changes what a release does."]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="scripts/add_method.py", description=__doc__.split("\n")[0])
    ap.add_argument("name", metavar="NAME", nargs="?", help="the new method's id, e.g. suffix_automaton")
    ap.add_argument("--like", metavar="EXISTING", help="the method of methods.yaml to start from")
    ap.add_argument("--left", action="store_true",
                    help="list what scaffolds left to decide (exit 1 while anything is), write nothing")
    args = ap.parse_args(argv)
    if args.left:
        add_track.ROOT = ROOT
        todo = add_track.left()
        print("\n".join(todo) if todo else "nothing scaffolded is left to decide")
        return 1 if todo else 0
    if not (args.name and args.like):
        ap.error("give NAME and --like EXISTING (or --left)")
    try:
        plan = MethodPlan(args.name, args.like)
        plan.build()
    except Refusal as err:
        print(f"add_method: {err}", file=sys.stderr)
        return 2
    try:
        plan.apply()
    except OSError as err:
        print(f"add_method: {err}; every file put back as it was", file=sys.stderr)
        return 1
    print(report(plan))
    return 0


if __name__ == "__main__":
    sys.exit(main())
