#!/usr/bin/env python3
"""Scaffold a new pinned track from an existing one, then list what a person must still decide.

    python scripts/add_track.py NEW --from OLD
    python scripts/add_track.py --left      # what scaffolds left to decide; exit 1 while anything is

NEW is the new release's track id (a release number such as 1.3.0), OLD an existing track id or alias.
The script writes what tests/test_registry.py requires of a track, starting from OLD's:

* an entry at the end of ``schemas/tracks.yaml`` whose release facts (label, container, versions,
  docs_pages) read ``TODO``: they come from the release, never from OLD;
* ``schemas/NEW/``: OLD's snapshot (llm_api, cli, triton, support, behaviour/), its ``version`` set
  to NEW and a ``TODO(add_track)`` line on top of each file, because every fact in it is OLD's;
* every per-track folder under ``snippets/`` and ``tests/`` (a folder named OLD whose siblings name
  every track: the method snippets, the quick start's steps, the fixtures with their expected
  results), copied with the ``# specdec-guide: trtllm=`` line pointed at NEW and, in a snippet, a
  ``TODO(add_track)`` line; the files of ``snippets/PER_TRACK.yaml`` are written from their templates;
* OLD's column copied for NEW wherever the project's data keys something by track (the migration map,
  ``methods.yaml``), a ``TODO(add_track)`` comment above each; an ``unknown`` verdict for NEW in every
  field note; an entry for NEW's container in the GPU workflow's matrix.

It refuses (one line, exit 2) when NEW exists in any form or OLD does not. Everything is computed and
checked (each edited YAML file re-read and compared with the intended data) before the first write,
and a failure while writing puts back every file it touched. Only PyYAML and the standard library
are used, and no module of the package is imported but ``specdec_guide.site.track_snippets``'s
template reader, from this checkout.
"""

from __future__ import annotations

import argparse
import copy
import os
import re
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
SCHEMAS = Path("src/specdec_guide/schemas")
TRACKS_YAML = SCHEMAS / "tracks.yaml"
METHODS_YAML = SCHEMAS / "methods.yaml"
FIELD_NOTES = SCHEMAS / "field_notes"
MIGRATION_MAP = Path("snippets/migration/map.yaml")
GPU_WORKFLOW = Path(".github/workflows/gpu.yml")
PER_TRACK_ROOTS = ("snippets", "tests")
MARK = "TODO(add_track)"
#: A mark the script wrote (prose about the mark, as on docs/contributors.md, has no colon after it).
LEFT = re.compile(r"TODO\((add_track|add_method)\):")
#: Files read for the list of what is left and for prose naming releases.
TEXT = (".md", ".py", ".yaml", ".yml", ".sh", ".toml", ".pbtxt")
TRACK_ID = re.compile(r"\d+(\.\d+)+")
DIRECTIVE = re.compile(r"^([ \t]*(?:#|//|<!--)[#/ \t]*specdec-guide:\s*trtllm\s*=\s*)([\w.\-]+)", re.M)
COMMENTED = (".yaml", ".yml", ".sh", ".py")
SNAPSHOT_HINTS = {
    "llm_api.yaml": "regenerate it with scripts/regen_schema.py from NEW's release",
    "cli.yaml": "regenerate it with scripts/regen_cli_schema.py NEW --fetch once tracks.yaml has NEW's docs_pages",
    "triton.yaml": "its legacy block comes from scripts/regen_cli_schema.py; read the rest from NEW's container",
}


class Refusal(Exception):
    """Bad input: one line, exit 2, nothing written."""


def _load(text: str):
    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def _read(rel: Path) -> str:
    return (ROOT / rel).read_text(encoding="utf-8")


def _id_pattern(tid: str) -> re.Pattern:
    """``tid`` as a whole release number (1.2.1, not 1.2.10 or 11.2.1)."""
    return re.compile(r"(?<![\w.])" + re.escape(tid) + r"(?![\w]|\.\d)")


# ---- editing YAML text (comments and layout kept), checked against the parsed data -------------------
_KEY = r"^(?P<indent>[ \t]*)(?P<q>[\"']?){tid}(?P=q)[ \t]*:(?=\s|$)"


def _blocks(lines: list[str], tid: str) -> list[tuple[int, int, str]]:
    """(first line, end line, indent) of every mapping entry keyed ``tid`` (the key line and the lines
    indented deeper that follow it; trailing blank lines left out)."""
    key = re.compile(_KEY.format(tid=re.escape(tid)))
    out = []
    for i, line in enumerate(lines):
        m = key.match(line)
        if not m:
            continue
        indent, end = m["indent"], i + 1
        while end < len(lines) and (not lines[end].strip() or
                                    len(lines[end]) - len(lines[end].lstrip()) > len(indent)):
            end += 1
        while end > i + 1 and not lines[end - 1].strip():
            end -= 1
        out.append((i, end, indent))
    return out


def _with_entries(text: str, old: str, make) -> tuple[str, int]:
    """The text with ``make(indent, old_block_lines)`` (lines) inserted after every entry keyed ``old``."""
    lines = text.splitlines(keepends=True)
    blocks = _blocks(lines, old)
    for start, end, indent in reversed(blocks):
        lines[end:end] = make(indent, lines[start:end])
    return "".join(lines), len(blocks)


def _copy_column(text: str, old: str, new: str, note: str) -> tuple[str, int]:
    """OLD's entry copied under the key NEW, after it, with a TODO comment above."""
    key = re.compile(_KEY.format(tid=re.escape(old)))

    def make(indent, block):
        first = key.sub(lambda m: f'{m["indent"]}"{new}":', block[0], count=1)
        return [f"{indent}# {MARK}: {note}\n", first if first.endswith("\n") else first + "\n", *block[1:]]

    return _with_entries(text, old, make)


def _with_list_items(text: str, old: str, new: str, note: str) -> tuple[str, int]:
    """NEW added after OLD in every list of track ids: a flow list on one line (``["1.1.0", "1.2.1"]``)
    or a block list (``- "1.2.1"``), a TODO comment on or above the line."""
    quoted = re.compile(r"""(?P<q>["'])""" + re.escape(old) + r"(?P=q)")
    item = re.compile(r"^(?P<indent>[ \t]*)- *(?P<q>[\"']?)" + re.escape(old) + r"(?P=q)[ \t]*(#.*)?$")
    out, count = [], 0
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\n")
        m = item.match(body)
        if m:
            out += [line, f'{m["indent"]}- "{new}"  # {MARK}: {note}\n']
            count += 1
            continue
        flow = re.search(r"\[[^\[\]#]*\]", body)
        if flow and quoted.search(flow.group(0)) and "#" not in body[flow.end():]:
            inner = quoted.sub(lambda q: f'{q.group(0)}, "{new}"', flow.group(0), count=1)
            out.append(f"{body[:flow.start()]}{inner}{body[flow.end():]}  # {MARK}: {note}\n")
            count += 1
            continue
        out.append(line)
    return "".join(out), count


def _add_to_lists(data, old: str, new: str):
    """The parsed data as :func:`_with_list_items` must leave it."""
    if isinstance(data, dict):
        return {k: _add_to_lists(v, old, new) for k, v in data.items()}
    if isinstance(data, list):
        items = [_add_to_lists(v, old, new) for v in data]
        if old in data and all(isinstance(v, str) for v in data):
            items.insert(data.index(old) + 1, new)
        return items
    return data


def _add_to_dicts(data, old: str, new, value_for):
    """The parsed data as the edit must leave it: ``new`` added to every mapping that has ``old``."""
    if isinstance(data, dict):
        out = {k: _add_to_dicts(v, old, new, value_for) for k, v in data.items()}
        if old in data:
            out[new] = value_for(data[old])
        return out
    if isinstance(data, list):
        return [_add_to_dicts(v, old, new, value_for) for v in data]
    return data


def _checked(rel: Path, before: str, after: str, want) -> str:
    got = _load(after)
    if got != want:
        raise Refusal(f"{rel}:1:1: the edit for the new track does not read back as intended (an unusual layout?); "
                      "nothing written")
    return after


# ---- the plan ----------------------------------------------------------------------------------
class Changes:
    """Files to write (computed and checked first), then written together or not at all."""

    def __init__(self):
        self.changes: dict[Path, tuple[str, int | None]] = {}  # repository-relative path -> (text, mode)
        self.edits: dict[Path, str] = {}  # an existing file (or folder of them) -> what changed in it
        self.written: list[Path] = []

    def put(self, rel: Path, text: str, mode_from: Path | None = None):
        mode = (ROOT / mode_from).stat().st_mode & 0o777 if mode_from else None
        self.changes[Path(rel)] = (text, mode)

    def apply(self):
        """Write every change; on any failure put back every file and remove every folder it made."""
        touched: list[tuple[Path, bytes | None, os.stat_result | None]] = []
        made: list[Path] = []
        try:
            for rel, (text, mode) in self.changes.items():
                path = ROOT / rel
                missing = [d for d in [path.parent, *path.parent.parents] if not d.exists()]
                for d in reversed(missing):
                    d.mkdir()
                    made.append(d)
                exists = path.exists()
                touched.append((path, path.read_bytes() if exists else None, path.stat() if exists else None))
                _write_file(path, text, mode)
                self.written.append(rel)
        except BaseException:
            for path, before, st in reversed(touched):
                if before is None:
                    path.unlink(missing_ok=True)
                else:  # as it was, its times too (make and editors go by them)
                    path.write_bytes(before)
                    os.chmod(path, st.st_mode & 0o7777)
                    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
            for d in reversed(made):
                if d.exists() and not any(d.iterdir()):
                    d.rmdir()
            self.written = []
            raise


class Plan(Changes):
    def __init__(self, new: str, old: str):
        super().__init__()
        self.new = new
        self.tracks_text = _read(TRACKS_YAML)
        data = _load(self.tracks_text) or {}
        self.entries = data.get("tracks") or []
        self.ids = [str(e["id"]) for e in self.entries]
        by_name = {str(n): str(e["id"]) for e in self.entries for n in [e["id"], *(e.get("aliases") or [])]}
        if old not in by_name:
            raise Refusal(f"{TRACKS_YAML}:1:1: no track {old!r} to copy from (tracks: {', '.join(by_name)}); nothing written")
        self.old = by_name[old]
        if not TRACK_ID.fullmatch(new):
            raise Refusal(f"{new!r}: a track id is a release number such as 1.3.0; nothing written")
        if new in by_name:
            line = next((n for n, ln in enumerate(self.tracks_text.splitlines(), 1) if _id_pattern(new).search(ln)), 1)
            raise Refusal(f"{TRACKS_YAML}:{line}:1: track {new} exists already (an id or alias); nothing written")
        self.per_track = self._per_track_folders()
        for folder in [SCHEMAS / new, *(f.parent / new for f in self.per_track)]:
            if (ROOT / folder).exists():
                raise Refusal(f"{folder}: exists already (track {new} half added?); nothing written")

    def _per_track_folders(self) -> list[Path]:
        """Folders named OLD under snippets/ and tests/ whose parent holds a folder for every track."""
        out = []
        for top in PER_TRACK_ROOTS:
            for path in sorted((ROOT / top).rglob(self.old)):
                if path.is_dir() and "__pycache__" not in path.parts and \
                        all((path.parent / t).is_dir() for t in self.ids):
                    out.append(path.relative_to(ROOT))
        return out

    # -- each part --------------------------------------------------------------------------------
    def tracks_entry(self):
        new, old = self.new, self.old
        old_entry = next(e for e in self.entries if str(e["id"]) == old)
        entry = (
            f"  # {MARK}: scaffolded from {old} by scripts/add_track.py. Every TODO below is a fact of the\n"
            f"  # {new} release (its container, versions and versioned docs): read it there, never copy {old}'s.\n"
            f"  - id: \"{new}\"\n"
            f"    aliases: []                   # {MARK}: \"latest\" moves here if {new} is the newest stable release\n"
            f"    label: \"TODO\"\n"
            f"    container: \"nvcr.io/nvidia/tritonserver:TODO-trtllm-python-py3\"\n"
            f"    trtllm_version: \"TODO\"\n"
            f"    triton_version: \"TODO\"\n"
            f"    engine_backend: {'true' if old_entry.get('engine_backend') else 'false'}"
            f"          # {MARK}: copied from {old}: does {new} still ship trtllm-build?\n"
            f"    docs_pages: {{commit: \"TODO\", built_from: \"TODO\"}}\n")
        text = self.tracks_text if self.tracks_text.endswith("\n") else self.tracks_text + "\n"
        after = text + entry
        want = _load(self.tracks_text)
        want = {**want, "tracks": [*want["tracks"], {
            "id": new, "aliases": [], "label": "TODO", "container": self.container, "trtllm_version": "TODO",
            "triton_version": "TODO", "engine_backend": bool(old_entry.get("engine_backend")),
            "docs_pages": {"commit": "TODO", "built_from": "TODO"}}]}
        self.put(TRACKS_YAML, _checked(TRACKS_YAML, text, after, want))
        self.edits[TRACKS_YAML] = "the entry (its release facts read TODO)"

    container = "nvcr.io/nvidia/tritonserver:TODO-trtllm-python-py3"

    def snapshot(self):
        src, dst = ROOT / SCHEMAS / self.old, SCHEMAS / self.new
        for path in sorted(p for p in src.rglob("*") if p.is_file() and not p.name.startswith(".")):
            rel = path.relative_to(src)
            text = path.read_text(encoding="utf-8")
            if path.suffix in (".yaml", ".yml"):
                text = re.sub(r"^version:.*$", f'version: "{self.new}"', text, count=1, flags=re.M)
                hint = SNAPSHOT_HINTS.get(rel.as_posix(), "check each fact against the release and say where it was read")
                text = (f"# {MARK}: copied from {self.old}'s snapshot by scripts/add_track.py: every fact below is "
                        f"{self.old}'s until read from {self.new}'s release; {hint.replace('NEW', self.new)}.\n" + text)
            self.put(dst / rel, text, SCHEMAS / self.old / rel)

    def per_track_files(self, generated: set[str]):
        for folder in self.per_track:
            dst = folder.parent / self.new
            is_snippet = folder.parts[0] == "snippets"
            for path in sorted(p for p in (ROOT / folder).rglob("*") if p.is_file() and "__pycache__" not in p.parts):
                rel = path.relative_to(ROOT / folder)
                target = dst / rel
                if is_snippet and target.relative_to("snippets").as_posix() in generated:
                    continue  # written from its template
                text = path.read_text(encoding="utf-8")
                text = DIRECTIVE.sub(lambda m: m.group(1) + (self.new if m.group(2) in self.names(self.old) else m.group(2)), text)
                if is_snippet and path.suffix in COMMENTED:
                    note = (f"# {MARK}: copied from {self.old}'s by scripts/add_track.py; check it against "
                            f"{self.new}'s release, then delete this line.\n")
                    lines = text.splitlines(keepends=True)
                    at = 1 if lines and DIRECTIVE.match(lines[0]) else 0
                    text = "".join(lines[:at] + [note] + lines[at:])
                self.put(target, text, folder / rel)

    def names(self, tid: str) -> set[str]:
        e = next(e for e in self.entries if str(e["id"]) == tid)
        return {tid, *map(str, e.get("aliases") or [])}

    def generated_snippets(self) -> set[str]:
        sys.path.insert(0, str(ROOT / "src"))
        try:
            from specdec_guide.site import track_snippets
        finally:
            sys.path.pop(0)
        templates = track_snippets.load(ROOT)
        values = {"id": self.new, "trtllm_version": "TODO", "container": self.container, "container_tag": "TODO"}
        out = set()
        for key, template in templates.items():
            rel = key.replace("{track}", self.new)
            self.put(Path("snippets") / rel, track_snippets.render(template, values))
            out.add(rel)
        return out

    def columns(self, rel: Path, what: str):
        """OLD's entry copied for NEW in every mapping keyed by track of a data file."""
        path = ROOT / rel
        if not path.is_file() or not _id_pattern(self.old).search(text := path.read_text(encoding="utf-8")):
            return
        after, count = _copy_column(text, self.old, self.new, f"copied from {self.old}'s; check it against {self.new}'s release")
        if not count:
            return
        want = _add_to_dicts(_load(text), self.old, self.new, copy.deepcopy)
        self.put(rel, _checked(rel, text, after, want))
        self.edits[rel] = f"{count} {what} copied from {self.old}"

    def availability(self, rel: Path):
        """Each method that exists on OLD (methods.yaml's ``tracks:``) is listed for NEW too."""
        text = _read(rel)
        after, count = _with_list_items(text, self.old, self.new, f"as on {self.old}: does {self.new} have it?")
        if count:
            want = _add_to_lists(_load(text), self.old, self.new)
            self.put(rel, _checked(rel, text, after, want))
            self.edits[rel] = f"{count} methods that exist on {self.old} listed for {self.new}"

    def field_notes(self):
        fix = f"{MARK}: what to do on {self.new} (its verdict is not {self.old}'s until read from the release)"
        total = 0
        for path in sorted((ROOT / FIELD_NOTES).glob("*.yaml")):
            rel = path.relative_to(ROOT)
            text = path.read_text(encoding="utf-8")
            after, count = _with_entries(text, self.old, lambda indent, block: [
                f'{indent}"{self.new}": {{status: unknown, fix: "{fix}"}}\n'])
            if count:
                want = _add_to_dicts(_load(text), self.old, self.new, lambda _v: {"status": "unknown", "fix": fix})
                self.put(rel, _checked(rel, text, after, want))
                total += count
        if total:
            self.edits[FIELD_NOTES] = f"{total} verdicts for {self.new}, each 'unknown'"

    def gpu_workflow(self):
        text = _read(GPU_WORKFLOW)
        lines = text.splitlines(keepends=True)
        items = [i for i, ln in enumerate(lines) if re.match(r"^\s*- name: triton-", ln)]
        if not items:
            raise Refusal(f"{GPU_WORKFLOW}:1:1: no matrix entry '- name: triton-...' to add {self.new}'s next to; nothing written")
        last = items[-1]
        indent = lines[last][:len(lines[last]) - len(lines[last].lstrip())]
        end = last + 1
        while end < len(lines) and lines[end].strip() and len(lines[end]) - len(lines[end].lstrip()) > len(indent):
            end += 1
        tag = self.container.rsplit(":", 1)[1].split("-", 1)[0]
        lines[end:end] = [f"{indent}# {MARK}: {self.new}'s container, as tracks.yaml gives it\n",
                          f"{indent}- name: triton-{tag}\n", f"{indent}  image: {self.container}\n"]
        after = "".join(lines)
        want = _load(text)
        want["jobs"]["run"]["strategy"]["matrix"]["include"].append({"name": f"triton-{tag}", "image": self.container})
        self.put(GPU_WORKFLOW, _checked(GPU_WORKFLOW, text, after, want))
        self.edits[GPU_WORKFLOW] = "a matrix entry for the container"

    def build(self):
        self.tracks_entry()
        self.snapshot()
        self.per_track_files(self.generated_snippets())
        self.columns(MIGRATION_MAP, "migration-map columns")
        self.columns(METHODS_YAML, "per-track method entries")
        self.availability(METHODS_YAML)
        self.field_notes()
        self.gpu_workflow()


def _write_file(path: Path, text: str, mode: int | None) -> None:
    tmp = path.with_name(f".{path.name}.add_track.tmp")
    tmp.write_text(text, encoding="utf-8")
    if mode is not None:
        os.chmod(tmp, mode)
    os.replace(tmp, path)


# ---- what is left to a person ------------------------------------------------------------------
def _tracked_text_files() -> list[Path]:
    try:
        out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                             capture_output=True, text=True, check=True).stdout.split("\n")
        files = [Path(f) for f in out if f]
    except (OSError, subprocess.CalledProcessError):  # a copy without git
        files = [p.relative_to(ROOT) for p in ROOT.rglob("*")
                 if p.is_file() and not {".git", ".venv", "site", "__pycache__"} & set(p.relative_to(ROOT).parts)]
    return [f for f in files if f.suffix in TEXT and (ROOT / f).is_file()]



def left() -> list[str]:
    """Every decision a scaffold left: each mark scripts/add_track.py or add_method.py wrote, and each release fact of tracks.yaml
    that still reads TODO (``path:line: text``)."""
    out = []
    for rel in _tracked_text_files():
        for n, line in enumerate((ROOT / rel).read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if LEFT.search(line) or (rel == TRACKS_YAML and re.match(r'^\s*(label|container|trtllm_version|triton_version|'
                                                               r'docs_pages):.*\bTODO\b', line)):
                out.append(f"{rel}:{n}: {line.strip()[:120]}")
    return out


def _lines_by_file(hits: dict[Path, list[int]]) -> list[str]:
    return [f"       {rel}: line{'s' if len(ns) > 1 else ''} {', '.join(map(str, ns))}"
            for rel, ns in sorted(hits.items(), key=lambda kv: str(kv[0]))]


def report(plan: Plan) -> str:
    new, old = plan.new, plan.old
    folders: dict[str, int] = {}
    for rel in plan.written:
        if rel in plan.edits or rel.parent in plan.edits:
            continue
        key = next((str(f.parent / new) + "/" for f in plan.per_track if (f.parent / new) in rel.parents), None)
        key = key or (str(SCHEMAS / new) + "/" if (SCHEMAS / new) in rel.parents else str(rel))
        folders[key] = folders.get(key, 0) + 1
    out = [f"Scaffolded track {new} from {old}: {len(plan.written)} files written."]
    out += [f"  new  {k} ({n} file{'s' if n > 1 else ''})" for k, n in sorted(folders.items())]
    out += [f"  edit {rel}: {what}" for rel, what in plan.edits.items()]
    # Prose is looked for outside what belongs to one track (its snapshot, per-track folders), outside the
    # data the steps below already name, and outside the scaffolders themselves.
    skip = {SCHEMAS / t for t in [*plan.ids, new]} | {f.parent / t for f in plan.per_track for t in [*plan.ids, new]}
    skip |= {TRACKS_YAML, MIGRATION_MAP, FIELD_NOTES, GPU_WORKFLOW, Path("audit"), Path("scripts"),
             Path("tests/test_add_track.py")}
    every = [_id_pattern(t) for t in plan.ids]
    lists: dict[Path, list[int]] = {}
    naming: dict[Path, list[int]] = {}
    for rel in _tracked_text_files():
        if any(rel == s or s in rel.parents for s in skip):
            continue
        for n, line in enumerate((ROOT / rel).read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if len(every) > 1 and all(p.search(line) for p in every):
                lists.setdefault(rel, []).append(n)
            elif _id_pattern(old).search(line):
                naming.setdefault(rel, []).append(n)
    out += ["", f"What a person must still decide (each '{MARK}' marks one; python scripts/add_track.py --left "
                "lists those left, and tests/test_add_track.py fails while one is):",
            f"  1. {TRACKS_YAML}: {new}'s label, container (the Triton tag), trtllm_version, triton_version and "
            f"docs_pages (the gh-pages commit holding {new}/ and the commit it was built from); whether 'latest' "
            f"moves to it; engine_backend (copied from {old}).",
            f"  2. {SCHEMAS}/containers.yaml: the container's row (its backend branch's Dockerfile), then "
            "make regen WHAT=container-map.",
            f"  3. {SCHEMAS / new}/: every file holds {old}'s facts: llm_api.yaml (scripts/regen_schema.py), cli.yaml "
            f"and triton.yaml's legacy block (scripts/regen_cli_schema.py {new} --fetch), triton.yaml's llmapi "
            "model, behaviour/*.yaml and support.yaml by hand, each fact with its source and confidence.",
            f"  4. The snippets copied from {old}'s: their keys and spellings on {new}. Those written from "
            "snippets/PER_TRACK.yaml follow tracks.yaml: make regen WHAT=track-snippets.",
            f"  5. The fixtures copied from {old}'s: rules/{new}/ (a pair per rule {new}'s snapshot records) and "
            f"upstream_shapes/{new}/expected.yaml (the messages {new} gives), under tests/fixtures/validate/.",
            f"  6. {MIGRATION_MAP}: {new}'s entry in every row and request input (copied from {old}); "
            f"{FIELD_NOTES}/: {new}'s verdict in every note (left 'unknown').",
            f"  7. {GPU_WORKFLOW}: the matrix entry follows step 1's container.",
            f"  8. Lines naming every pinned track ({', '.join(plan.ids)}): a list that may now leave {new} out:",
            *_lines_by_file(lists),
            f"  9. Lines naming {old} alone: a fact that {new} may change:",
            *_lines_by_file(naming)]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="scripts/add_track.py", description=__doc__.split("\n")[0])
    ap.add_argument("new", metavar="NEW", nargs="?", help="the new track's id: the release number, e.g. 1.3.0")
    ap.add_argument("--from", dest="old", metavar="OLD", help="the track (id or alias) to start from")
    ap.add_argument("--left", action="store_true",
                    help="list what scaffolds left to decide (exit 1 while anything is), write nothing")
    args = ap.parse_args(argv)
    if args.left:
        todo = left()
        print("\n".join(todo) if todo else "nothing scaffolded is left to decide")
        return 1 if todo else 0
    if not (args.new and args.old):
        ap.error("give NEW and --from OLD (or --left)")
    try:
        plan = Plan(args.new, args.old)
        plan.build()
    except Refusal as err:
        print(f"add_track: {err}", file=sys.stderr)
        return 2
    try:
        plan.apply()
    except OSError as err:
        print(f"add_track: {err}; every file put back as it was", file=sys.stderr)
        return 1
    print(report(plan))
    return 0


if __name__ == "__main__":
    sys.exit(main())
