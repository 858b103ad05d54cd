"""The soak's tables: what each live stream is, where it writes, and how the run is sized.

Every table is one stateless streaming query (so a row older than the watermark is still
written: late data, which only the table's sweep can publish) with minute partitions
``dt/hour/minute``. They differ in what they are fed: most get a few rows every couple of
seconds with event times near the wall clock, some also late rows for minutes their DAG
run has committed, and one is skewed (ten times the rows, nearly all on one key).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

PARTITION_KEYS = ("dt", "hour", "minute")
METASTORE_DATABASE = "fscommit"
# The partition's span and Flink's commit delay for it: a minute is committable once the
# watermark passes its end.
PARTITION_SECONDS = 60
# Airflow's [scheduler] task_instance_heartbeat_timeout in the soak's deployment: a task
# whose process died with the scheduler is failed (and retried) after this long.
TASK_HEARTBEAT_TIMEOUT_S = 60
# What one try of a compaction or commit task may take on the loaded machine.
RERUN_S = 30


@dataclass(frozen=True)
class SoakTable:
    """One live table: its name (the metastore table's, the spec file's and the commit
    DAG's id, unlike any other test's table in a shared metastore) and what the
    generator feeds it."""

    name: str
    base: Path
    rows_per_file: int
    late: bool  # gets late rows for partitions already committed
    skewed: bool  # ten times the rows, nearly all on one key

    @property
    def input_dir(self) -> Path:
        return self.base / "input"

    @property
    def staging(self) -> Path:
        return self.base / "staging"

    @property
    def checkpoint(self) -> Path:
        return self.base / "checkpoint"

    @property
    def table_path(self) -> Path:
        return self.base / "table"

    @property
    def spec_name(self) -> str:
        return f"{self.name}.yaml"

    @property
    def dag_id(self) -> str:
        """The commit DAG's id, init's default for the spec file."""
        return f"fscommit_{self.name}"

    @property
    def maintenance_dag_id(self) -> str:
        return f"{self.dag_id}_maintenance"

    def to_dict(self) -> dict[str, Any]:
        return {k: str(v) if isinstance(v, Path) else v for k, v in asdict(self).items()}


@dataclass(frozen=True)
class SoakSettings:
    """How big and how long a run is, and the knobs that set its pace.

    The defaults are the bench run's; the suite's shortened soak shrinks the minutes and
    the sweep. ``faults`` names the fault kinds of :mod:`.faults`, injected in a seeded
    order and at seeded moments.
    """

    tables: int = 8
    minutes: float = 20.0
    seed: int = 1
    faults: tuple[str, ...] = ()
    # A file per table every this many seconds (the query's trigger picks them up).
    file_seconds: float = 3.0
    rows_per_file: int = 5
    trigger_seconds: int = 5  # the streaming queries' processing-time trigger
    watermark_seconds: int = 20  # the queries' withWatermark delay
    poke_seconds: int = 5  # the sensors' poll (dag.poke_interval)
    sweep_minutes: int = 2  # the maintenance DAG's sweep (dag.sweep)
    retries: int = 4
    retry_delay_seconds: int = 15
    max_active_runs: int = 4
    late_share: float = 0.5  # of the tables, those that get late rows
    # After the rows stop: how long the last partitions and late rows have to be
    # committed before the checks (a failure to do so is a check's failure).
    drain_seconds: float = 300.0
    extra: dict[str, Any] = field(default_factory=dict)

    def goal_s(self) -> float:
        """The issue's goal without faults: p95 freshness within the sensor's poll + 30 s."""
        return self.poke_seconds + 30

    def fault_bound_s(self) -> float:
        """The retry policy's bound on a partition's freshness with a fault in its window:
        the goal, the task heartbeat timeout in which Airflow notices a lost task
        (:data:`TASK_HEARTBEAT_TIMEOUT_S`), and every retry's delay with a rerun of up
        to :data:`RERUN_S`."""
        return (
            self.goal_s()
            + TASK_HEARTBEAT_TIMEOUT_S
            + self.retries * (self.retry_delay_seconds + RERUN_S)
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self) | {
            "faults": list(self.faults),
            "goal_s": self.goal_s(),
            "fault_bound_s": self.fault_bound_s(),
        }


def plan_tables(settings: SoakSettings, base: Path) -> list[SoakTable]:
    """The run's tables: ``soak_t01``…, the first skewed (when there are two or more), every
    other one from the second with late rows (``late_share`` of them)."""
    count = settings.tables
    late_every = max(1, round(1 / settings.late_share)) if settings.late_share else 0
    tables = []
    for i in range(count):
        skewed = count > 1 and i == 0
        tables.append(
            SoakTable(
                name=f"soak_t{i + 1:02d}",
                base=base / f"t{i + 1:02d}",
                rows_per_file=settings.rows_per_file * (10 if skewed else 1),
                late=bool(late_every) and (i + 1) % late_every == 0,
                skewed=skewed,
            )
        )
    return tables
