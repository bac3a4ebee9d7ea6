"""``specdec-guide validate [PATHS...] [--trtllm TRACK]``: check snippets against a TRT-LLM track.

With no PATHS the whole repository is checked (the folder holding mkdocs.yml or pyproject.toml,
searched upwards from the current directory): snippets/**, model_repo_templates/**,
notebooks/*.py and docs/**/*.md. A folder (``validate .``) is walked as git sees it: no .git, no
virtual environment, nothing .gitignore'd, nothing listed in ``exclude`` under
[tool.specdec-guide.validate] in the project's pyproject.toml. A YAML file is recognised as LLM-API
options by its content (top-level speculative_config, triton_config, or keys that are mostly LLM-API
fields or misspellings of them) or because a shell snippet passes it to --extra_llm_api_options;
mkdocs.yml, CI workflows and other tools' YAML are left alone. No header comment is needed.
Problems print as ``path:line:col: message``; exit status 1 when there is any. What the schema
snapshot does not cover (a program or flag it does not record) prints as
``path:line:col: note: ...`` and is counted apart; it fails the run only with --strict. A run
that found nothing to check says so and exits 1: silence is not a pass. Imports stay light
(pyyaml, protobuf): no torch here.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from specdec_guide.diagnostics import UserError


def register(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "validate",
        help="check snippets, templates, notebooks and pages against a TRT-LLM schema snapshot",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
    )
    p.add_argument("paths", nargs="*", type=Path, metavar="PATH", help="files or folders (default: the repository)")
    p.add_argument("--trtllm", metavar="TRACK",
                   help="track id or alias (1.1.0, latest, triton-25.12...); overrides the files' "
                        "'# specdec-guide: trtllm=' comments; default: tracks.yaml 'default'")
    p.add_argument("--strict", action="store_true",
                   help="fail on notes too (what the schema snapshot cannot judge), not only on errors")
    p.add_argument("--schemas", type=Path, metavar="DIR", help=argparse.SUPPRESS)
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    from specdec_guide.releases.tracks import Registry
    from specdec_guide.validate.kinds import find_repo_root
    from specdec_guide.validate.runner import validate_paths
    from specdec_guide.validate.verified import verifier

    registry = Registry(args.schemas) if getattr(args, "schemas", None) else Registry()
    root = find_repo_root()
    report = validate_paths(args.paths or None, trtllm=args.trtllm, root=root, registry=registry,
                            is_verified=verifier(root, registry), strict=getattr(args, "strict", False))
    for diag in report.diagnostics:
        print(diag)
    for n in report.notes:
        print(f"{n.path}:{n.line}:{n.col}: note: {n.message}")
    print(report.summary(), file=sys.stdout if report.ok else sys.stderr)
    return 0 if report.ok else 1


def main(argv: list[str] | None = None) -> int:
    """Standalone entry (``python -m specdec_guide.validate``), same behaviour as the sub-command."""
    parser = argparse.ArgumentParser(prog="specdec-guide")
    sub = parser.add_subparsers(dest="command")
    register(sub)
    args = parser.parse_args(["validate", *(sys.argv[1:] if argv is None else argv)])
    try:
        return run(args)
    except UserError as err:
        print(f"specdec-guide validate: {err}", file=sys.stderr)
        return err.exit_code
