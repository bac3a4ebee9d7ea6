"""``specdec-guide models fetch`` and ``models draft``: the real model and its Draft/Target draft."""

from __future__ import annotations

from specdec_guide.models import smollm2


def register(subparsers) -> None:
    p = subparsers.add_parser("models", help="get the real model the CPU tier runs on",
                              description="Commands about the guide's models.")
    sub = p.add_subparsers(dest="models_command", metavar="ACTION", required=True)
    smollm2.register(sub)
