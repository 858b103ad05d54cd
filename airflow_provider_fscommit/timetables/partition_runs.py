"""One DAG run per time partition: its schedule, and the partition each run commits.

The hourly DAG and every factory DAG commit one time per run. How a run knows its time
depends on the Airflow line (``version_compat.partition_timetable``): from 3.2 the run is
a *partitioned* run named by a key (``2026-11-20T03:00:00``, the partition's start on its
wall clock; ``core.partition.partition_key`` says why not the path) and has no data
interval; before, the run has the data interval [03:00, 04:00). A run triggered by hand
without a key has neither: it commits the partition that ended at its time, as a manual
run of a data-interval DAG does.

:meth:`PartitionRuns.start` reads whichever the run has, so the DAGs' templates are the same
on every line: ``{{ partition_start(dag_run).strftime('%H') }}``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pendulum

from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.partition.commit_trigger import parse_time_zone
from airflow_provider_fscommit.core.partition.partition_key import parse_partition_key
from airflow_provider_fscommit.core.partition.partition_spec import ANY_VALUE, escape_path_name
from airflow_provider_fscommit.core.partition.time_partitions import (
    TimePartitioning,
    time_partitioning,
)
from airflow_provider_fscommit.version_compat import (
    PARTITIONED_RUNS,
    partition_key_zone,
    partition_timetable,
)


def partition_time_zone(table: Mapping[str, Any] | TableSpec) -> pendulum.Timezone:
    """The table's watermark time zone as Airflow takes it (timetables, ``in_timezone``).

    Flink writes a fixed offset ``GMT+08:00``, a name pendulum does not know: it becomes
    pendulum's fixed zone of that offset, while a TZDB id stays itself.
    """
    spec = table if isinstance(table, TableSpec) else TableSpec.from_options(table)
    zone = parse_time_zone(spec.watermark_time_zone)
    if isinstance(zone, ZoneInfo):
        return pendulum.timezone(zone.key)
    offset = zone.utcoffset(None)
    return pendulum.timezone(int(offset.total_seconds()) if offset else "UTC")


@dataclass(frozen=True)
class PartitionRuns:
    """The runs of a table's partitions: ``partitioning`` on the ``zone`` its values name."""

    partitioning: TimePartitioning
    zone: pendulum.Timezone

    @classmethod
    def of(
        cls, table: Mapping[str, Any] | TableSpec, interval: timedelta | None = None
    ) -> PartitionRuns:
        """The runs of ``table``'s time partitions (``interval``: a minute grain's span)."""
        spec = table if isinstance(table, TableSpec) else TableSpec.from_options(table)
        partitioning = time_partitioning(
            spec.partition_keys, spec.time_extractor, interval or spec.time_interval
        )
        return cls(partitioning, partition_time_zone(spec))

    @property
    def timetable(self) -> Any:
        """The DAG's schedule: one run per partition, cut on the partitions' clock."""
        return partition_timetable(self.partitioning.cron, self.zone)

    def start_date(self, first: datetime) -> pendulum.DateTime:
        """The DAG's ``start_date`` whose first scheduled run commits the partition ``first``.

        A data-interval run is due at its interval's end and dated at its start; a
        partitioned run is dated when due, one partition after the one it commits.
        """
        start = pendulum.instance(first, tz=self.zone)
        if not PARTITIONED_RUNS:
            return start
        step = self.partitioning.interval
        if step % timedelta(days=1) == timedelta(0):  # whole days: on the wall clock
            return start.add(days=step.days)
        return start + step

    def start(self, dag_run: Any) -> pendulum.DateTime:
        """The start of the partition ``dag_run`` commits, on the partitions' clock.

        The DAGs' templates call it as ``partition_start(dag_run)``.
        """
        key = getattr(dag_run, "partition_key", None)  # None on 3.0 and 3.1
        if key:
            naive = parse_partition_key(key)
            return pendulum.instance(naive, tz=partition_key_zone(self.zone)).in_timezone(self.zone)
        begin, end = dag_run.data_interval_start, dag_run.data_interval_end
        if begin is not None and end is not None and begin < end:
            return pendulum.instance(begin).in_timezone(self.zone)
        # Triggered by hand on a partition timetable: the partition that ended at its date
        # (the date given, else the time it was triggered).
        when = pendulum.instance(dag_run.logical_date or dag_run.run_after).in_timezone(self.zone)
        ended = self.partitioning.last_ended_at(datetime.combine(when.date(), when.time()))
        return pendulum.instance(ended, tz=self.zone)

    @property
    def macros(self) -> dict[str, Any]:
        """The DAG's ``user_defined_macros`` the templates below use."""
        return {
            "partition_start": self.start,
            "partition_value": escape_path_name,
        }

    def partition(self) -> dict[str, str]:
        """The run's partition: each time key's value as a template."""
        return {key: self._value(fmt) for key, fmt in self.partitioning.key_formats.items()}

    def partition_glob(self, keys: tuple[str, ...]) -> str:
        """The glob of the run's time over the table's ``keys``: its time keys' values
        (escaped as Spark names them), ``*`` for the other keys."""
        formats = self.partitioning.key_formats
        return "/".join(
            f"{escape_path_name(key)}="
            + (self._value(formats[key], "partition_value") if key in formats else ANY_VALUE)
            for key in keys
        )

    @staticmethod
    def _value(fmt: str, wrap: str = "") -> str:
        value = f"partition_start(dag_run).strftime({json.dumps(fmt)})"
        return f"{{{{ {wrap}({value}) }}}}" if wrap else f"{{{{ {value} }}}}"
