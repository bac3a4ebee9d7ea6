"""The ``specdec-guide`` console script.

Each feature module owns its sub-command: it exposes ``register(subparsers)``, which adds a
parser whose ``func(args) -> int`` runs it. This file only wires them together and turns a
:class:`UserError` into a one-line message and an exit status.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from specdec_guide import __version__
from specdec_guide.diagnostics import UserError

# module path -> imported lazily, so `specdec-guide validate` never imports torch.
COMMAND_MODULES = (
    "specdec_guide.validate.command",  # validate
    "specdec_guide.coverage",  # coverage
    "specdec_guide.templates",  # repo render
    "specdec_guide.triton",  # triton up
    "specdec_guide.models.tiny",  # tiny-model
    "specdec_guide.models.command",  # models fetch
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="specdec-guide",
        description="Checks, Triton launcher and CPU reference engine for the speculative-decoding guide.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except UserError as err:
        print(f"specdec-guide {args.command}: {err}", file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
