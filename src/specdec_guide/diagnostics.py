"""One error shape for every command: ``path:line:col: message``, never a traceback."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class Diagnostic:
    """A finding in a file. ``line`` and ``col`` are 1-based; 0 means "the whole file"."""

    path: str
    line: int
    col: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.col}: {self.message}"


class UserError(Exception):
    """A problem the reader can fix (bad input, missing file, busy port).

    The CLI prints ``str(error)`` on stderr and exits with ``exit_code``; no traceback.
    """

    def __init__(self, message: str, exit_code: int = 2):
        super().__init__(message)
        self.exit_code = exit_code


def position_of(data: bytes | str, offset: int) -> tuple[int, int]:
    """1-based ``(line, col)`` of the byte (or character) at ``offset``."""
    nl = b"\n" if isinstance(data, bytes) else "\n"
    head = data[:offset]
    return head.count(nl) + 1, offset - (head.rfind(nl) + 1) + 1


def read_utf8(path) -> str:
    """A file's text, or a UserError ``path:line:col: ...`` (unreadable: ``path:0:0``)."""
    from pathlib import Path

    try:
        data = Path(path).read_bytes()
    except OSError as err:
        raise UserError(f"{path}:0:0: cannot read: {err.strerror or err}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        line, col = position_of(data, err.start)
        raise UserError(f"{path}:{line}:{col}: not UTF-8 text (byte {err.start})") from None


def yaml_position(err) -> tuple[int, int]:
    """1-based ``(line, col)`` of a PyYAML error (its problem mark, else its context mark, else 1:1)."""
    mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
    return (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)


def yaml_key_position(text: str, *keys: str) -> tuple[int, int]:
    """1-based ``(line, col)`` of the innermost of the nested ``keys`` that the YAML text holds
    (``keys[0]`` at the top, ``keys[1]`` under it, ...); ``(1, 1)`` when it holds none or does not parse."""
    import yaml

    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except (yaml.YAMLError, RecursionError):
        return 1, 1
    at = (1, 1)
    for key in keys:
        if not isinstance(node, yaml.MappingNode):
            break
        hit = next((kv for kv in node.value if isinstance(kv[0], yaml.ScalarNode) and kv[0].value == key), None)
        if hit is None:
            break
        at, node = (hit[0].start_mark.line + 1, hit[0].start_mark.column + 1), hit[1]
    return at


def read_json(path) -> dict | None:
    """The JSON object in ``path``; None when it is unreadable, not JSON, or not an object."""
    import json
    from pathlib import Path

    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def load_data_yaml(text: str):
    """Parse YAML this package ships (schema snapshots, behaviour records, registries).

    libyaml's safe loader where PyYAML has it: the same data as ``yaml.safe_load`` (tested), about
    ten times faster, which matters because every model stub and every CLI call reads the
    snapshots. Files a reader wrote keep ``yaml.safe_load``/``SafeLoader``, whose error messages
    and marks the validator's findings quote.
    """
    import yaml

    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # noqa: S506 (a safe loader)


def load_yaml_file(path, what: str):
    """A data file's YAML (:func:`load_data_yaml`), or a UserError ``path:line:col: <what> is not
    valid YAML: ...`` (unreadable or not UTF-8: ``path:line:col`` as :func:`read_utf8` says)."""
    import yaml

    text = read_utf8(path)
    try:
        return load_data_yaml(text)
    except yaml.YAMLError as err:
        line, col = yaml_position(err)
        raise UserError(f"{path}:{line}:{col}: {what} is not valid YAML: {getattr(err, 'problem', None) or err}") from None
