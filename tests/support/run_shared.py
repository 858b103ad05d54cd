"""What one test run builds once for all its workers: a folder they share, and a lock.

pytest-xdist gives each worker its own base temp (``popen-gwN``) inside the run's; that
run's folder is the one every worker of it sees and no other run does. A thing built
there (the wheel, a stream) is built by the first worker that asks, the others wait on
its lock and take it as it is.
"""

from __future__ import annotations

import fcntl
import pickle
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from fscommit_dev.streams import StreamingTable


def run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder the run's workers share (the base temp itself without workers)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if base.name.startswith("popen-gw") else base


@contextmanager
def built_once(tmp_path_factory: pytest.TempPathFactory, name: str) -> Iterator[Path]:
    """``name``'s folder in :func:`run_folder`, held under its lock while the caller looks
    for what is built there and builds it if it is missing."""
    shared = run_folder(tmp_path_factory)
    with (shared / f"{name}.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield shared / name
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def shared_stream(
    tmp_path_factory: pytest.TempPathFactory,
    name: str,
    build: Callable[[Path], StreamingTable],
    base: Path,
) -> StreamingTable:
    """A copy at ``base`` of the stream ``build`` runs once per test run.

    A test gets a copy it may change or run further (:meth:`StreamingTable.copy_to`), so
    a stream shape costs one streaming query per run, not one per test.
    """
    with built_once(tmp_path_factory, f"stream-{name}") as folder:
        made = folder / "table.pickle"
        if made.exists():
            table = pickle.loads(made.read_bytes())
        else:
            table = build(folder / "table")
            made.write_bytes(pickle.dumps(table))  # written last: the mark of a whole build
    return table.copy_to(base)
