"""Waiting for several child processes at once.

``process.communicate()`` drains only its own process's pipes. Called on one process after
another, it leaves the others writing into pipes nobody reads: once one fills (64 KiB of
Airflow or Spark logging), that child blocks in ``write``, and if it holds the table lock
the child being waited on blocks behind it until the timeout. Draining every pipe at once
keeps concurrent runs concurrent.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

K = TypeVar("K")


def communicate_all(
    processes: Mapping[K, subprocess.Popen], timeout: float
) -> dict[K, tuple[str, str]]:
    """``communicate(timeout=...)`` with every process at the same time; each one's
    ``(stdout, stderr)`` by its key. A process still running at the timeout raises
    ``subprocess.TimeoutExpired``, as ``communicate`` does."""
    with ThreadPoolExecutor(max(len(processes), 1)) as pool:
        futures = {
            key: pool.submit(process.communicate, timeout=timeout)
            for key, process in processes.items()
        }
        return {key: future.result() for key, future in futures.items()}
