"""Who may import whom among the package, the development tooling, the tests and bench;
and where a module's tests are.

The wheel ships ``airflow_provider_fscommit`` alone (``tests/test_packaging.py``), so the
package must import nothing that stays in the checkout; and what the tests and the
benchmarks share lives in ``fscommit_dev``, so neither reaches into the other.

The tests mirror the package as Airflow's providers do: the tests of
``airflow_provider_fscommit/<path>/<module>.py`` are ``tests/<path>/test_<module>.py``.
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


PACKAGE = ROOT / "airflow_provider_fscommit"
# Modules still without their own test module: the plugin and the version differences are
# tested on every Airflow line (tests/compat, through tests/support/compat_probe.py) and the
# plugin's page in tests/plugins/; the guard fails once one gets its module, so the list
# only shrinks.
NOT_YET_MIRRORED = {
    "plugins/fscommit.py",
    "version_compat.py",
}
# The operators' old module paths, deprecated: tested together, as the deprecation they are,
# in tests/operators/test_deprecated_modules.py.
DEPRECATED_PATHS = {
    "operators/discover.py",
    "operators/expiration.py",
    "operators/retention.py",
}


def mirrored_test(module: Path) -> Path:
    relative = module.relative_to(PACKAGE)
    return ROOT / "tests" / relative.parent / f"test_{relative.name}"


def test_every_module_has_its_test_module_at_the_mirrored_path():
    modules = sorted(p for p in PACKAGE.rglob("*.py") if p.name != "__init__.py")
    assert modules
    missing = {str(m.relative_to(PACKAGE)) for m in modules if not mirrored_test(m).is_file()}
    unmirrored = missing - NOT_YET_MIRRORED - DEPRECATED_PATHS
    assert sorted(unmirrored) == [], "modules without tests/<path>/test_<module>.py"
    assert sorted(NOT_YET_MIRRORED - missing) == [], "mirrored now: remove from NOT_YET_MIRRORED"
