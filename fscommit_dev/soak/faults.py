"""The soak's faults: what a platform team loses, on a seeded schedule, each part restarted.

Each kind SIGKILLs one part, at a moment that makes it hurt, and lets a supervisor start
it again:

- ``triggerer``: every deferred sensor's trigger is lost with it until the restarted
  triggerer (or the scheduler, after the health check's threshold) takes them up again;
- ``scheduler``: with the LocalExecutor its workers and their running tasks die with it;
- ``connect``: the Spark Connect server, while a ``compact`` task is running on it;
- ``metastore``: the Hive metastore, while a ``commit`` task is running;
- ``task``: one running task's process (the ``pid`` its task instance records), which
  Airflow retries.

The moments are spread over the run's middle, in a seeded order, and the wait for a
compaction or commit to be running is bounded: a fault whose moment never came is
recorded as missed, not silently dropped. Every fault's kill and restart times are
recorded: a partition whose commit window overlaps one is reported apart.
"""

from __future__ import annotations

import os
import random
import signal
import threading
import time
from collections.abc import Callable
from contextlib import suppress
from dataclasses import asdict, dataclass
from typing import Any

from fscommit_dev.soak.deployment import Deployment

KINDS = ("triggerer", "scheduler", "connect", "metastore", "task")
# At least this long between one part's restart and the next fault (a fault whose task
# was late to run would otherwise strike together with the next one).
MIN_GAP_S = 20.0
# The task instances a fault waits for (a DAG's compaction, a DAG's commit, any task).
_RUNNING = (
    "SELECT dag_id, run_id, task_id, map_index, pid FROM task_instance "
    "WHERE state = 'running' AND {where} ORDER BY start_date"
)
_WAITS = {
    "connect": "task_id LIKE '%compact'",
    "metastore": "task_id LIKE '%commit'",
    "task": "pid IS NOT NULL AND task_id NOT LIKE '%wait'",
}


@dataclass
class FaultRecord:
    kind: str
    planned_s: float  # seconds after the run's start
    killed_ms: int | None = None
    restarted_ms: int | None = None
    target: str | None = None  # the task instance that was running, where one was awaited
    # Of that task instance: which DAG's task it was (what a rule about a table asks).
    dag_id: str | None = None
    task_id: str | None = None
    missed: str | None = None  # why it did not happen

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def schedule(kinds: tuple[str, ...], seed: int, start_s: float, end_s: float) -> list[FaultRecord]:
    """The faults' kinds in a seeded order, at seeded moments spread between the two
    (one per equal slot, placed at random inside it, so no two pile up)."""
    unknown = sorted(set(kinds) - set(KINDS))
    if unknown:
        raise ValueError(f"unknown fault kinds {unknown}; choose from {list(KINDS)}")
    rng = random.Random(seed)
    order = list(kinds)
    rng.shuffle(order)
    slot = (end_s - start_s) / max(1, len(order))
    return [
        FaultRecord(kind, round(start_s + i * slot + rng.uniform(0.1, 0.7) * slot, 1))
        for i, kind in enumerate(order)
    ]


class FaultInjector:
    """Injects the scheduled faults from a thread, one after the other."""

    def __init__(
        self, deployment: Deployment, faults: list[FaultRecord], started: float, wait_s: float
    ) -> None:
        self.deployment = deployment
        self.faults = faults
        self.started = started  # time.monotonic() at the run's start
        self.wait_s = wait_s  # how long a fault waits for its task to be running
        self.errors: list[str] = []
        self._pid = 0  # the task process the ``task`` fault kills
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="soak-faults", daemon=True)

    def start(self) -> FaultInjector:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=300)

    def _loop(self) -> None:
        done = 0.0  # when the last fault's part was back (time.monotonic())
        for fault in self.faults:
            at = max(self.started + fault.planned_s, done + MIN_GAP_S)
            if self._stop.wait(max(0.0, at - time.monotonic())):
                fault.missed = "the run ended first"
                continue
            try:
                self._inject(fault)
            except Exception as exc:  # recorded: a fault that failed to happen is reported
                fault.missed = f"{type(exc).__name__}: {exc}"
                self.errors.append(f"{fault.kind}: {fault.missed}")
            done = time.monotonic()

    def _inject(self, fault: FaultRecord) -> None:
        deployment = self.deployment
        restart: Callable[[], None]
        if fault.kind in ("triggerer", "scheduler"):

            def restart() -> None:
                deployment.restart_service(fault.kind)

        elif fault.kind == "connect":
            restart = deployment.restart_connect
        elif fault.kind == "metastore":
            restart = deployment.restart_metastore
        else:
            restart = self._kill_task(fault)
        if fault.kind in _WAITS:
            running = self._await_running(_WAITS[fault.kind])
            if running is None:
                fault.missed = f"no such task ran within {self.wait_s:.0f} s"
                return
            fault.target = "/".join(str(v) for v in running[:4])
            fault.dag_id, fault.task_id = str(running[0]), str(running[2])
            if fault.kind == "task":
                fault.target += f" pid {running[4]}"
                self._pid = int(running[4])
        fault.killed_ms = int(time.time() * 1000)
        restart()
        fault.restarted_ms = int(time.time() * 1000)

    def _kill_task(self, fault: FaultRecord) -> Callable[[], None]:
        """SIGKILL the task's process; Airflow's supervisor of it reports the failure and
        the scheduler retries it (nothing to restart by hand)."""

        def kill() -> None:
            with suppress(ProcessLookupError):
                os.kill(self._pid, signal.SIGKILL)

        return kill

    def _await_running(self, where: str) -> tuple | None:
        """The first running task instance matching ``where``, polled every 0.2 s."""
        assert self.deployment.airflow is not None
        deadline = time.monotonic() + self.wait_s
        sql = _RUNNING.format(where=where)
        while time.monotonic() < deadline and not self._stop.is_set():
            rows = self.deployment.airflow.query(sql)
            if rows:
                return rows[0]
            time.sleep(0.2)
        return None
