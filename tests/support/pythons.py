"""Other CPython interpreters of this machine, and fresh venvs on them, for the
compatibility suites.

Found on PATH (``python3.12``) or in pyenv's versions (``$(pyenv root)/versions/3.12.*``),
the newest patch release first. A missing one skips its suite, or fails it under ``CI``:
the machines that run CI have them (``pyenv versions``). The venvs install through pip's
cache, so a run after the first downloads (and builds) nothing again.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest


def _pyenv_root() -> Path | None:
    if os.environ.get("PYENV_ROOT"):
        return Path(os.environ["PYENV_ROOT"])
    pyenv = shutil.which("pyenv")
    if pyenv is None:
        return Path.home() / ".pyenv" if (Path.home() / ".pyenv").is_dir() else None
    root = subprocess.run([pyenv, "root"], capture_output=True, text=True, check=False)
    return Path(root.stdout.strip()) if root.returncode == 0 else None


def find_python(minor: str) -> Path | None:
    """A CPython ``minor`` (``"3.12"``) interpreter, or None."""
    root = _pyenv_root()
    if root is not None:
        releases = sorted(
            (root / "versions").glob(f"{minor}.*"),
            key=lambda p: [int(x) for x in p.name.split(".") if x.isdigit()],
        )
        for release in reversed(releases):
            if (release / "bin" / "python").exists() and release.name.count(".") == 2:
                return release / "bin" / "python"
    found = shutil.which(f"python{minor}")
    return Path(found) if found else None


def require_python(minor: str) -> Path:
    """The interpreter for ``minor``; skips the test without it (fails under CI)."""
    python = find_python(minor)
    if python is None:
        reason = f"CPython {minor} not found (install it: pyenv install {minor})"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    return python


def fresh_venv(interpreter: Path, venv: Path, *packages: str) -> Path:
    """A new venv of ``interpreter`` at ``venv`` with ``packages``; its Python."""
    subprocess.run([str(interpreter), "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    if packages:
        pip(python, "install", "--quiet", *packages)
    return python


def pip(python: Path, *args: str) -> subprocess.CompletedProcess:
    """``python -m pip ARGS`` outside this venv; fails the test with pip's own words."""
    result = subprocess.run(
        [str(python), "-m", "pip", *args],
        capture_output=True,
        text=True,
        timeout=1800,
        env={k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")},
    )
    assert result.returncode == 0, f"pip {' '.join(args)}:\n{result.stdout[-3000:]}\n" + "\n".join(
        line for line in result.stderr.splitlines()[-40:] if "is ignored" not in line
    )
    return result
