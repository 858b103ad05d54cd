"""The provider's wheel, built as a release is: from the project's tracked files only.

A checkout's leftovers (the editable install's ``*.egg-info``, ``__pycache__``) would
otherwise hide a file the package data misses. The packaging test and the compatibility
suites install this wheel, never the source tree; a run builds it once, whichever worker
asks first (:func:`run_wheel`).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.run_shared import built_once

ROOT = Path(__file__).resolve().parents[2]


def build_wheel(source: Path, out: Path) -> Path:
    """Copy the tracked files into ``source``, build the wheel into ``out``, return it."""
    tracked = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, tracked.split("\0")):
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(out), "."],
        cwd=source,
        check=True,
        timeout=600,
    )
    (built,) = out.glob("airflow_provider_fscommit-*.whl")
    return built


def run_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel of this test run, built by the first worker that asks for it."""
    with built_once(tmp_path_factory, "wheel") as folder:
        built = list((folder / "dist").glob("airflow_provider_fscommit-*.whl"))
        if built:
            return built[0]
        shutil.rmtree(folder, ignore_errors=True)  # a build that failed half-way
        (folder / "source").mkdir(parents=True)
        (folder / "dist").mkdir()
        return build_wheel(folder / "source", folder / "dist")
