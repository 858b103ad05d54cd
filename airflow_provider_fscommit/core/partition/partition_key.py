"""The key a partition goes by in Airflow: its time, as Airflow's own timetables write it.

Airflow names partitioned DAG runs and partitioned asset events by a *partition key*, a
string. The partition path (``dt=2026-11-20/hour=03``) cannot be that key: a scheduled
run's id is ``scheduled__<run time>__<key>__<suffix>`` and Airflow refuses run ids with
``/`` or ``=`` (``[scheduler] allowed_run_id_pattern``), so a timetable keyed by paths
could not create a single run, nor could a downstream DAG scheduled on the events.

The key is therefore the partition's time on the partitions' wall clock in
``%Y-%m-%dT%H:%M:%S``, the format ``CronPartitionTimetable`` writes by default and every
temporal partition mapper (``StartOfDayMapper``, ``StartOfHourMapper``, ...) reads by
default: the run that commits hour 03 and the event announcing it carry the same key, and a
downstream rollup needs no format of its own. The path travels in the event's ``extra``.
"""

from __future__ import annotations

from datetime import datetime

#: ``strftime``/``strptime`` format of a partition key (Airflow's default ``key_format``).
PARTITION_KEY_FORMAT = "%Y-%m-%dT%H:%M:%S"


def partition_key(start: datetime) -> str:
    """The key of the partitions starting at ``start`` (their wall clock)."""
    return start.strftime(PARTITION_KEY_FORMAT)


def parse_partition_key(key: str) -> datetime:
    """The naive wall-clock start a key names; ``ValueError`` naming the format if it is not one."""
    try:
        return datetime.strptime(key, PARTITION_KEY_FORMAT)
    except ValueError:
        raise ValueError(
            f"partition key {key!r} is not a time in {PARTITION_KEY_FORMAT!r} (e.g. "
            f"{partition_key(datetime(2026, 11, 20, 3))!r}), the form fscommit's DAGs use"
        ) from None
