"""Per-track snippets written from one template each (``snippets/PER_TRACK.yaml``) and the track registry.

A snippet shown as one tab per track whose tracks' copies differ only in what ``tracks.yaml`` says of
each release (its id, TensorRT-LLM version, container) is not kept as a hand-made copy per track: its
template lives under ``templates:`` in ``snippets/PER_TRACK.yaml``, keyed by the path it is written to
(``snippets/``-relative, ``{track}`` standing for the track id), and this module writes it for every
track. The written files stay in the repository, because pages include them (``--8<--``) and the
validator and tests read them like any other snippet.

    python -m specdec_guide.site.track_snippets   # exit 1, naming each file that is stale
    make regen WHAT=track-snippets                # (re)write them (specdec_guide.regen calls write)

Placeholders are ``{{name}}`` with a name of :data:`FIELDS`; anything else in double braces is an error,
so a typo never reaches a page.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import yaml

from specdec_guide.diagnostics import UserError

MANIFEST = "snippets/PER_TRACK.yaml"
PLACEHOLDER = re.compile(r"\{\{\s*(\w*)\s*\}\}")
#: What a template may name, per track (from its tracks.yaml entry).
FIELDS = ("id", "trtllm_version", "container", "container_tag")


def repo_root() -> Path:
    return Path(__file__).resolve().parents[3]


def load(root: Path) -> dict[str, str]:
    """``{path with {track}: template text}`` from the manifest, checked; a UserError names the line."""
    path = root / MANIFEST
    try:
        text = path.read_text(encoding="utf-8")
        data = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) or {}
    except OSError as err:
        raise UserError(f"{path}:1:1: cannot read the per-track templates: {err}") from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"{mark.line + 1}:{mark.column + 1}" if mark else "1:1"
        raise UserError(f"{path}:{where}: the per-track templates are not valid YAML") from None
    templates = data.get("templates") if isinstance(data, dict) else None
    if not isinstance(templates, dict) or not templates:
        raise UserError(f"{path}:1:1: needs a non-empty 'templates' mapping")
    lines = text.splitlines()
    for key, body in templates.items():
        line = next((n for n, ln in enumerate(lines, 1) if ln.strip().startswith(f"{key}:")), 1)
        if not isinstance(key, str) or "{track}" not in key or not isinstance(body, str):
            raise UserError(f"{path}:{line}:1: {key!r}: a template is a path with {{track}} and a text")
        for m in PLACEHOLDER.finditer(body):
            if m.group(1) not in FIELDS:
                at = line + body[:m.start()].count("\n") + 1
                raise UserError(f"{path}:{at}:1: {key}: unknown placeholder {m.group(0)} "
                                f"(known: {', '.join('{{' + f + '}}' for f in FIELDS)})")
    return templates


def fields(track) -> dict[str, str]:
    """The values a template may use for a track (a :class:`~specdec_guide.releases.tracks.Track`)."""
    return {"id": track.id, "trtllm_version": track.trtllm_version, "container": track.container,
            "container_tag": track.container_tag}


def render(template: str, values: dict[str, str]) -> str:
    return PLACEHOLDER.sub(lambda m: values[m.group(1)], template)


def expected(root: Path, registry=None) -> dict[Path, str]:
    """Every generated file (absolute path) and the text it must hold, for every track."""
    if registry is None:
        from specdec_guide.releases.tracks import Registry

        registry = Registry(root / "src" / "specdec_guide" / "schemas")
    out = {}
    for key, template in load(root).items():
        for t in registry.tracks:
            out[root / "snippets" / key.replace("{track}", t.id)] = render(template, fields(t))
    return out


def stale(root: Path, registry=None) -> list[str]:
    """The generated files that are missing or differ from their template (repository-relative)."""
    return [p.relative_to(root).as_posix() for p, text in expected(root, registry).items()
            if not p.is_file() or p.read_text(encoding="utf-8") != text]


def write(root: Path, registry=None) -> list[str]:
    """Write the stale files; returns what it wrote (repository-relative)."""
    wrote = []
    for p, text in expected(root, registry).items():
        if not p.is_file() or p.read_text(encoding="utf-8") != text:
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text, encoding="utf-8")
            wrote.append(p.relative_to(root).as_posix())
    return wrote


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m specdec_guide.site.track_snippets", description=__doc__.split("\n")[0])
    ap.add_argument("--root", type=Path, default=None, help="the repository (default: this checkout)")
    args = ap.parse_args(argv)
    root = (args.root or repo_root()).resolve()
    try:
        bad = stale(root)
    except UserError as err:
        print(err, file=sys.stderr)
        return 2
    for rel in bad:
        print(f"{rel}: stale (regenerate: make regen WHAT=track-snippets)", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
