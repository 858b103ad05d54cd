"""Who may import whom among the package, the development tooling, the tests and bench.

The wheel ships ``airflow_provider_fscommit`` alone (``tests/test_packaging.py``), so the
package must import nothing that stays in the checkout; and what the tests and the
benchmarks share lives in ``fscommit_dev``, so neither reaches into the other.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from fscommit_dev.streams import ROOT

# For each tree, the top-level names its modules must never import.
FORBIDDEN = {
    "airflow_provider_fscommit": {"fscommit_dev", "tests", "bench"},
    "fscommit_dev": {"tests", "bench"},
    "bench": {"tests"},
    "tests": {"bench"},
}


def imported_tops(path: Path) -> set[str]:
    """Top-level names of the absolute imports in ``path`` (wherever they sit)."""
    tops = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            tops |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            tops.add(node.module.split(".")[0])
    return tops


@pytest.mark.parametrize("tree", sorted(FORBIDDEN))
def test_a_tree_imports_nothing_it_must_not(tree):
    found = {
        str(path.relative_to(ROOT)): sorted(imported_tops(path) & FORBIDDEN[tree])
        for path in sorted((ROOT / tree).rglob("*.py"))
    }
    assert not {name: tops for name, tops in found.items() if tops}
