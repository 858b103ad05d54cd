"""What the soak sees while it runs: a reader of the metastore, and ``/proc``.

A reader of the table polls the metastore's partition list every second, as a query
engine planning a query would see it: the first moment each partition is listed is when
it became visible (freshness ends there). Beside it, every two seconds, the process trees
of the triggerer, the scheduler, the Connect server and the other parts are sampled
(resident memory, CPU seconds) with the number of deferred task instances, the waiting
partitions the triggerer holds. Both keep going across the faults: a metastore that is
down is a second without a listing, a restarted part a new process tree.
"""

from __future__ import annotations

import logging
import threading
import time
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any

import psutil

from fscommit_dev.metastore.client import thrift_client
from fscommit_dev.soak.deployment import Deployment
from fscommit_dev.soak.tables import METASTORE_DATABASE


@dataclass
class Observations:
    # table -> partition -> the first time (epoch ms) the metastore listed it
    visible_ms: dict[str, dict[str, int]] = field(default_factory=dict)
    listings: int = 0  # the reader's metastore calls (left out of the commits' count)
    listing_errors: int = 0
    samples: list[dict[str, Any]] = field(default_factory=list)


class Observer:
    """Polls the metastore (every ``poll_s``) and samples the processes (every
    ``sample_s``), each from its own thread, until stopped."""

    def __init__(self, deployment: Deployment, poll_s: float = 1.0, sample_s: float = 2.0):
        self.deployment = deployment
        self.poll_s = poll_s
        self.sample_s = sample_s
        self.seen = Observations()
        self._stop = threading.Event()
        self._threads = [
            threading.Thread(target=self._poll_loop, name="soak-reader", daemon=True),
            threading.Thread(target=self._sample_loop, name="soak-proc", daemon=True),
        ]

    def start(self) -> Observer:
        # A metastore down (a fault) is a second without a listing, not a traceback a
        # second on the terminal.
        logging.getLogger("thrift.transport.TSocket").setLevel(logging.CRITICAL)
        for thread in self._threads:
            thread.start()
        return self

    def stop(self) -> Observations:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=60)
        return self.seen

    def _poll_loop(self) -> None:
        while not self._stop.is_set():
            started = time.monotonic()
            self.poll_once()
            self._stop.wait(max(0.0, self.poll_s - (time.monotonic() - started)))

    def poll_once(self) -> None:
        """One listing of every table's partitions."""
        try:
            with thrift_client(self.deployment.metastore) as client:
                for table in self.deployment.tables:
                    names = client.get_partition_names(METASTORE_DATABASE, table.name, -1)
                    self.seen.listings += 1
                    now_ms = int(time.time() * 1000)
                    known = self.seen.visible_ms.setdefault(table.name, {})
                    for name in names:
                        known.setdefault(name, now_ms)
        except Exception:  # the metastore is down (a fault) or restarting: try again
            self.seen.listing_errors += 1

    def _sample_loop(self) -> None:
        while not self._stop.is_set():
            started = time.monotonic()
            with suppress(Exception):  # a part restarting between two reads
                self.seen.samples.append(self.sample())
            self._stop.wait(max(0.0, self.sample_s - (time.monotonic() - started)))

    def sample(self) -> dict[str, Any]:
        """Each part's process tree: RSS (bytes) and CPU seconds, with the deferred tasks."""
        parts: dict[str, int | None] = {}
        services = self.deployment.services
        if services is not None:
            for name, process in services.processes.items():
                parts[name] = process.pid if process.poll() is None else None
        with suppress(OSError, ValueError):
            parts["connect"] = self.deployment.connect.pid()
        parts["metastore"] = self.deployment.metastore.pid
        streams = self.deployment.streams.process
        parts["streams"] = streams.pid if streams is not None else None
        sample: dict[str, Any] = {"t_ms": int(time.time() * 1000), "parts": {}}
        for name, pid in parts.items():
            if pid is not None:
                sample["parts"][name] = _tree(pid)
        airflow = self.deployment.airflow
        if airflow is not None:
            ((deferred,),) = airflow.query(
                "SELECT COUNT(*) FROM task_instance WHERE state = 'deferred'"
            )
            sample["deferred"] = int(deferred)
        return sample


def _tree(pid: int) -> dict[str, Any]:
    """RSS and CPU seconds (user and system) of a process and its descendants, and the
    process's own RSS (the scheduler's tree holds its executor's workers and their tasks)."""
    rss = 0
    cpu = 0.0
    try:
        root = psutil.Process(pid)
        processes = [root, *root.children(recursive=True)]
        rss_self = root.memory_info().rss
    except psutil.NoSuchProcess:
        return {"pid": pid, "rss": 0, "rss_self": 0, "cpu_s": 0.0}
    for process in processes:
        with suppress(psutil.NoSuchProcess, psutil.AccessDenied):
            rss += process.memory_info().rss
            times = process.cpu_times()
            cpu += times.user + times.system
    return {"pid": pid, "rss": rss, "rss_self": rss_self, "cpu_s": round(cpu, 3)}
