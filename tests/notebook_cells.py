"""The helper cells the GPU notebooks write out, loaded on the CPU so that tests can run them.

Notebooks 03-07 need only their container, so they carry their own copies of the helpers the
package has (``specdec_guide.background``: wait_ready, stop, post_json; ``specdec_guide.gpu_checks``:
report_greedy, acceptance_from_stats, check_accepted, per_request_counters). The tests run the same
cases against the package and against each notebook's cells, so the two cannot part.
"""

from __future__ import annotations

import ast
from pathlib import Path
from types import SimpleNamespace

import jupytext

from site_build import ROOT

#: The notebooks that write helper cells, and which helpers each has.
SERVER_HELPERS = ("alive", "wait_ready", "stop", "post_json")
CHECK_HELPERS = ("first_divergence", "report_greedy", "acceptance_from_stats", "check_accepted", "per_request_counters")
HELPER_NOTEBOOKS = {
    "03_migrate_to_llm_api": ("first_divergence", "report_greedy", "per_request_counters"),
    **{stem: SERVER_HELPERS + CHECK_HELPERS for stem in ("04_ngram", "05_draft_target", "06_eagle3", "07_mtp")},
}
_SAFE = (ast.Import, ast.ImportFrom, ast.FunctionDef)


def helper_cells(stem: str) -> list[str]:
    """The code cells of ``notebooks/<stem>.py`` that define a function (the helper cells)."""
    cells = [c.source for c in jupytext.read(ROOT / "notebooks" / f"{stem}.py").cells if c.cell_type == "code"]
    out = []
    for src in cells:
        if src.startswith("%"):
            continue
        tree = ast.parse(src)
        if any(isinstance(node, ast.FunctionDef) for node in tree.body):
            out.append(src)
    return out


def load_helpers(stem: str) -> SimpleNamespace:
    """Run the notebook's helper cells (imports and definitions only, asserted) and return what they define."""
    namespace: dict = {}
    for src in helper_cells(stem):
        tree = ast.parse(src)
        other = [type(n).__name__ for n in tree.body if not isinstance(n, _SAFE)]
        if other:  # a cell with side effects (a model load, a download) is not a helper cell
            continue
        exec(compile(tree, f"notebooks/{stem}.py (helper cell)", "exec"), namespace)
    wanted = HELPER_NOTEBOOKS[stem]
    missing = [name for name in wanted if not callable(namespace.get(name))]
    assert not missing, f"{stem}: no helper cell defines {', '.join(missing)}"
    return SimpleNamespace(**{name: namespace[name] for name in wanted})


def function_sources(stem: str) -> dict[str, str]:
    """Each top-level function of the notebook's helper cells, as ast.unparse writes it."""
    out = {}
    for src in helper_cells(stem):
        for node in ast.parse(src).body:
            if isinstance(node, ast.FunctionDef):
                out[node.name] = ast.unparse(node)
    return out
