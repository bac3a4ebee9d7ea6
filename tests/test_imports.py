"""No two modules of the package import each other, directly or through others.

The graph is read from the source, not from ``sys.modules``: every ``import`` and ``from ... import``
anywhere in a module counts, at the top or inside a function (a function-level import hides a circle
from the interpreter until the function runs, but the two modules still depend on each other).
Relative imports are resolved against the importing module's package; ``from pkg import name`` is an
edge to ``pkg.name`` when that is a module of the package, else to ``pkg`` (its ``__init__``).

Two modules import others by a name held in data, which no ``import`` statement shows: the site hook
imports each page marker's renderer (``module:function`` in :data:`specdec_guide.markers.MARKERS`), and
the CLI each of its ``COMMAND_MODULES``. Those edges are added from the same data; any other call of
``importlib.import_module`` in the package fails a test until it is listed here.
"""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

import specdec_guide

PACKAGE_DIR = Path(specdec_guide.__file__).resolve().parent


def modules(src: Path, package: str) -> dict[str, tuple[Path, bool]]:
    """Dotted module name -> (file, is a package's __init__), for every .py under ``src/<package>``."""
    out = {}
    for path in sorted((src / package).rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        is_init = parts[-1] == "__init__"
        out[".".join(parts[:-1] if is_init else parts)] = (path, is_init)
    return out


def _owner(name: str, known: dict) -> str | None:
    """The module ``name`` lands on: itself, else its nearest enclosing module or package."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def import_graph(src: Path, package: str) -> dict[str, set[str]]:
    """Module -> the package's modules it imports (anywhere in its body)."""
    known = modules(src, package)
    graph: dict[str, set[str]] = {}
    for name, (path, is_init) in known.items():
        here = name if is_init else name.rpartition(".")[0]  # the package relative imports start from
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = here
                    for _ in range(node.level - 1):
                        anchor = anchor.rpartition(".")[0]
                    base = f"{anchor}.{base}" if base else anchor
                targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                           for alias in node.names]
            else:
                continue
            for target in targets:
                if target == package or target.startswith(package + "."):
                    owner = _owner(target, known)
                    if owner and owner != name:
                        deps.add(owner)
        graph[name] = deps
    return graph


def cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle (``a -> b -> a``, each importing the next), or None."""
    try:
        TopologicalSorter(graph).prepare()
    except CycleError as err:
        # graphlib lists the circle dependency first; read backwards it is "a imports b imports ...".
        return list(reversed(err.args[1]))
    return None


def test_the_package_has_no_import_circle():
    graph = import_graph(PACKAGE_DIR.parent, "specdec_guide")
    # The graph is the real one: a reader of release data and the validator's own edges are in it.
    assert "specdec_guide.releases.tracks" in graph["specdec_guide.validate.runner"]
    assert "specdec_guide.validate.verified" in graph["specdec_guide.validate.command"]
    found = cycle(graph)
    assert found is None, "import circle: " + " -> ".join(found)


def test_release_data_imports_nothing_outside_itself_but_the_diagnostics():
    """The one home of release data is at the bottom: the validator, engine, templates and site read it."""
    graph = import_graph(PACKAGE_DIR.parent, "specdec_guide")
    for name, deps in graph.items():
        if name.startswith("specdec_guide.releases"):
            outside = {d for d in deps if not d.startswith("specdec_guide.releases")} - {"specdec_guide.diagnostics"}
            assert not outside, f"{name} imports {sorted(outside)}"


@pytest.mark.parametrize("back_import", [
    "def f():\n    from pkg.a import x\n",   # inside a function
    "from ..a import x\n",                      # relative
    "from pkg import a\n",                      # a module named through its package
    "import pkg.a\n",
])
def test_a_circle_is_found_and_named(tmp_path, back_import):
    """The finder itself: a back-import of each form closes pkg.a -> pkg.sub.b -> pkg.a."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("import os\nfrom pkg.sub.b import y\nx = 1\n")
    (pkg / "sub" / "c.py").write_text("from ..a import x\n")  # pkg.sub.c -> pkg.a: no circle by itself
    (pkg / "sub" / "b.py").write_text("y = 2\n")
    graph = import_graph(tmp_path, "pkg")
    assert cycle(graph) is None, graph
    (pkg / "sub" / "b.py").write_text(back_import + "y = 2\n")
    found = cycle(import_graph(tmp_path, "pkg"))
    assert found is not None and set(found) == {"pkg.a", "pkg.sub.b"}, found


def named_imports() -> dict[str, set[str]]:
    """Importer -> the package's modules it imports by a name held in data (see the module's docstring)."""
    from specdec_guide import cli, markers

    return {"specdec_guide.site.hooks": {m.render.partition(":")[0] for m in markers.MARKERS.values() if m.render},
            "specdec_guide.cli": set(cli.COMMAND_MODULES)}


#: Imports by name of modules outside the package: the reader's own drafter class (``module:Class``).
READER_MODULES = {"specdec_guide.drafters.user_provided"}


def test_imports_by_name_close_no_circle_either():
    graph = import_graph(PACKAGE_DIR.parent, "specdec_guide")
    for importer, targets in named_imports().items():
        assert targets <= set(graph), f"{importer} names modules that do not exist: {sorted(targets - set(graph))}"
        graph[importer] |= targets - {importer}
    assert "specdec_guide.site.version_tables" in graph["specdec_guide.site.hooks"]
    found = cycle(graph)
    assert found is None, "import circle (counting imports by name): " + " -> ".join(found)


def test_every_import_by_name_is_counted():
    """Each module that calls ``import_module`` or ``__import__`` has its names in :func:`named_imports`,
    or imports a reader's module."""
    callers = set()
    for name, (path, _) in modules(PACKAGE_DIR.parent, "specdec_guide").items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Call):
                func = node.func
                called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if called in ("import_module", "__import__"):
                    callers.add(name)
    assert callers == set(named_imports()) | READER_MODULES, sorted(callers)
