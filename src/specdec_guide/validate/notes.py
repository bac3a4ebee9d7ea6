"""Notes: what a checker could not judge, kept apart from errors.

A finding is ``(line, col, message)``. When ``message`` is a :class:`Note` the checker is saying
"the snapshot does not cover this, so I cannot tell" (a program or flag the track's snapshot does not
record, a program called through a variable nothing sets): the runner prints it and counts it apart,
and it fails the exit status only under ``specdec-guide validate --strict``. A plain ``str`` message is
an error: the release would refuse what the file says.
"""

from __future__ import annotations


class Note(str):
    """A finding's message that reports a gap in the snapshot, not a mistake in the file."""


def note(line: int, col: int, message: str) -> tuple[int, int, Note]:
    return line, col, Note(message)


def is_note(message: str) -> bool:
    return isinstance(message, Note)
