"""The core's layering holds (ARCHITECTURE.md): import-linter's contracts in .importlinter.

A review misses an import that points upward; this fails on it, with import-linter's report
naming the chain. Nothing is imported: import-linter reads the source.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The venv's console script, next to the interpreter running the tests.
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def test_the_core_keeps_its_layers_and_imports_no_airflow():
    result = subprocess.run(
        [str(LINT_IMPORTS), "--config", ".importlinter", "--no-cache"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout
