"""Other CPython interpreters of this machine, and fresh venvs on them, for the
compatibility suites.

Found on PATH (``python3.12``) or in pyenv's versions (``$(pyenv root)/versions/3.12.*``),
the newest patch release first. A missing one skips its suite, or fails it under ``CI``:
the machines that run CI have them (``pyenv versions``).

A venv a test installs into is its own, new copy (:func:`fresh_venv`); a venv a test only
runs is the cached build itself (:func:`cached_venv`). Either is built once and kept:
resolving and installing a deployment's ~300 packages costs minutes of a core, copying
them seconds, and using them in place nothing. A build is keyed by everything that goes into it
(the interpreter and its exact version, the pip arguments, which carry the line's pins and
the floors ``setup.cfg`` declares) and rebuilt when any of them changes or when it is a
week old, so the unpinned packages a deployment takes (its providers) follow new releases
as a deployment installed today would. ``FSCOMMIT_VENV_CACHE`` names the cache's folder
(default ``~/.cache/airflow-provider-fscommit/venvs``), ``off`` builds every venv afresh.
The builds install through pip's cache, so even a cold one downloads nothing twice.

A build of this tree's own wheel changes with every edit of the package, 1.2 GB each: it
names its ``kind``, and a new build of a kind deletes the earlier ones of that kind (a
day of work left twenty of them and filled the disk under CI). A process holds a shared
lock on every build it uses in place until it exits, so a concurrent run (another
checkout's suite) never loses the venv it is running.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO

import pytest

from fscommit_dev.relocate import rewrite_paths


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


# Bump to drop every cached build (e.g. when what a build does changes).
_CACHE_FORMAT = 1
MAX_AGE_S = 7 * 24 * 3600


def fresh_venv(
    interpreter: Path, venv: Path, *packages: str, installs: Sequence[Sequence[str]] = ()
) -> Path:
    """A new venv of ``interpreter`` at ``venv`` with ``packages``; its Python.

    ``installs`` are further ``pip install`` argument lists run in order after
    ``packages`` (e.g. ``["--upgrade", "pip"]`` first, then a deployment's requirements).
    The venv is a copy of a cached build of the same inputs (see the module docstring):
    take this where the test installs or writes into it, :func:`cached_venv` otherwise.
    """
    steps = _steps(packages, installs)
    cache = _cache_root()
    if cache is None:
        return _build(interpreter, venv, steps)
    key = _cache_key(interpreter, steps)
    with _entry_lock(cache, key) as lock:
        _copy_venv(_current_build(cache, key, lock, _installer(interpreter, steps)), venv)
    return venv / "bin" / "python"


def cached_venv(interpreter: Path, *packages: str, scratch: Path) -> Path:
    """The Python of the cached build of ``interpreter`` with ``packages``, used in place.

    For a venv a test only runs (a cluster's Python, a reader): copying several hundred
    megabytes to run it costs more than the test. The build is at least a day from
    :data:`MAX_AGE_S`, so no other run rebuilds it while this one uses it. Without the
    cache (``FSCOMMIT_VENV_CACHE=off``) it is built under ``scratch``.
    """
    steps = _steps(packages, ())
    cache = _cache_root()
    if cache is None:
        return _build(interpreter, scratch, steps)
    return installed_venv(interpreter, steps, _installer(interpreter, steps), scratch=scratch)


def installed_venv(
    interpreter: Path,
    inputs: object,
    install: Callable[[Path], None],
    scratch: Path,
    kind: str | None = None,
) -> Path:
    """The Python of a venv ``install`` makes at the folder it is given, cached under
    ``interpreter`` and ``inputs`` (everything that decides what ``install`` puts in it)
    and used in place, as :func:`cached_venv`'s (built under ``scratch`` without the
    cache). A build of a ``kind`` supersedes the earlier builds of that kind."""
    cache = _cache_root()
    if cache is None:
        install(scratch)
        return scratch / "bin" / "python"
    key = _cache_key(interpreter, inputs)
    if key not in _held:
        lock = _open_lock(cache, key)
        try:
            _current_build(cache, key, lock, install, margin_s=24 * 3600, kind=kind)
        except BaseException:
            lock.close()
            raise
        _held[key] = lock  # until this process exits: no other run prunes it meanwhile
    return cache / key / "venv" / "bin" / "python"


def _installer(interpreter: Path, steps: list[list[str]]) -> Callable[[Path], None]:
    """What builds a venv of ``interpreter`` with the ``pip install`` ``steps``."""
    return lambda venv: _build(interpreter, venv, steps)


def _steps(packages: Sequence[str], installs: Sequence[Sequence[str]]) -> list[list[str]]:
    steps = [list(step) for step in ([packages] if packages else [])]
    return steps + [list(step) for step in installs]


def _current_build(
    cache: Path,
    key: str,
    lock: IO[str],
    install: Callable[[Path], None],
    margin_s: float = 0,
    kind: str | None = None,
) -> Path:
    """The cache entry's venv, (re)built by ``install`` first unless it is current for
    ``margin_s`` more. Returns holding the entry's ``lock`` shared; it builds holding it
    exclusively."""
    built = cache / key / "venv"
    fcntl.flock(lock, fcntl.LOCK_SH)
    if _is_current(cache / key, margin_s):
        return built
    fcntl.flock(lock, fcntl.LOCK_EX)  # drops the shared lock first: two waiters cannot deadlock
    if not _is_current(cache / key, margin_s):
        shutil.rmtree(cache / key, ignore_errors=True)
        install(built)
        record = {"built_at": time.time(), "kind": kind}
        (cache / key / "built.json").write_text(json.dumps(record))
        _prune(cache, kind, key)
    fcntl.flock(lock, fcntl.LOCK_SH)
    return built


def _prune(cache: Path, kind: str | None, built: str) -> None:
    """Delete the builds nobody can use any more: a week old (their inputs changed since,
    or they would be rebuilt), or of ``kind`` and older than the one just ``built``. Each
    under its lock, skipping one that is in use."""

    def superseded(entry: Path) -> bool:
        return not _is_current(entry) or (
            kind is not None and entry.name != built and _kind(entry) == kind
        )

    for entry in cache.iterdir():
        if not entry.is_dir() or not superseded(entry):
            continue
        with (cache / f"{entry.name}.lock").open("a") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # being built, copied or run right now
            if superseded(entry):
                shutil.rmtree(entry, ignore_errors=True)


def _build(interpreter: Path, venv: Path, steps: list[list[str]]) -> Path:
    subprocess.run([str(interpreter), "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    for step in steps:
        pip(python, "install", "--quiet", *step)
    return python


def _cache_root() -> Path | None:
    chosen = os.environ.get("FSCOMMIT_VENV_CACHE")
    if chosen == "off":
        return None
    if chosen:
        return Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "airflow-provider-fscommit" / "venvs"


def _cache_key(interpreter: Path, steps: object) -> str:
    version = subprocess.run(
        [str(interpreter), "-c", "import sys; print(sys.version)"],
        capture_output=True, text=True, check=True, timeout=60,
    ).stdout  # fmt: skip
    inputs = [_CACHE_FORMAT, str(interpreter.resolve()), version, steps]
    return hashlib.sha256(json.dumps(inputs).encode()).hexdigest()[:16]


def _record(entry: Path) -> dict:
    """A complete build's record (it is written last), or an empty one."""
    try:
        record = json.loads((entry / "built.json").read_text())
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


def _is_current(entry: Path, margin_s: float = 0) -> bool:
    """A complete build younger than :data:`MAX_AGE_S` by ``margin_s``."""
    built_at = _record(entry).get("built_at")
    return isinstance(built_at, (int, float)) and time.time() - built_at < MAX_AGE_S - margin_s


def _kind(entry: Path) -> str | None:
    return _record(entry).get("kind")


# The entries this process uses in place, each lock held shared until the process exits.
_held: dict[str, IO[str]] = {}


def _open_lock(cache: Path, key: str) -> IO[str]:
    cache.mkdir(parents=True, exist_ok=True)
    return (cache / f"{key}.lock").open("a")


@contextmanager
def _entry_lock(cache: Path, key: str) -> Iterator[IO[str]]:
    """The entry's lock, for one copy of its venv (parallel test workers)."""
    with _open_lock(cache, key) as lock:
        yield lock


def _copy_venv(source: Path, venv: Path) -> None:
    """Copy the venv at ``source`` to ``venv``, pointing its scripts at the copy.

    A venv names its own folder in its console scripts' ``#!`` lines, its activation
    scripts and ``pyvenv.cfg``; nothing else in it depends on where it is. Modification
    times are kept, so the copied bytecode stays valid.
    """
    shutil.copytree(source, venv, symlinks=True)
    for path in [venv / "pyvenv.cfg", *(venv / "bin").iterdir()]:
        if path.is_file() and not path.is_symlink():
            rewrite_paths(path, str(source), str(venv))


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
