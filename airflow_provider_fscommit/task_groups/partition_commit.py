"""``partition_commit_group``: wait → compact → commit for one partition, in one line.

Flink's file sink does these three steps for every partition on its own; in Airflow they
are three tasks so each shows its state, logs and retries in the UI. The group makes the
common case one call inside a DAG::

    partition_commit_group(table=TABLE, partition="dt={{ ds }}/hour={{ ... }}")

A table with partition keys its time does not name (``region=…/dt=…/hour=…``) commits a
time at once, whatever regions it holds: ``time_commit_group(table=TABLE,
partitions="region=*/dt={{ ds }}/hour=…")`` waits for the time, finds its partitions,
compacts them in one application and commits each.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from airflow.sdk import TaskGroup

from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.operators.commit import PartitionCommitOperator, table_asset
from airflow_provider_fscommit.operators.committable_partitions import CommittablePartitionsOperator
from airflow_provider_fscommit.operators.compact import PartitionCompactOperator
from airflow_provider_fscommit.sensors.watermark import PartitionWatermarkSensor


def partition_commit_group(
    *,
    table: Mapping[str, Any] | TableSpec,
    partition: str | Mapping[str, str],
    group_id: str = "partition_commit",
    stall_timeout: timedelta | None = None,
    process_time_fallback: timedelta | None = None,
    commit_empty_partitions: bool = False,
    spark_conn_id: str = "spark_default",
    metastore_conn_id: str = "metastore_default",
    aws_conn_id: str | None = None,
    http_conn_id: str | None = None,
    sensor_kwargs: Mapping[str, Any] | None = None,
    compact_kwargs: Mapping[str, Any] | None = None,
    commit_kwargs: Mapping[str, Any] | None = None,
    end_of_input: bool = False,
) -> TaskGroup:
    """Add ``wait`` (sensor), ``compact`` and ``commit`` for ``partition`` to the DAG.

    :param table: the table spec (options or a :class:`TableSpec`).
    :param partition: the partition path or ``{key: value}``; templated, e.g. from
        ``data_interval_start``.
    :param stall_timeout: fail the wait when the watermark stands still this long.
    :param process_time_fallback: commit anyway this long after the commit time.
    :param commit_empty_partitions: mark a partition the stream wrote nothing to as done
        (empty directory, metastore partition, success file), as an hourly DAG wants.
    :param spark_conn_id: the compaction's Spark connection: a ``spark`` one submits an
        application, a ``spark_connect`` one runs the units on that Connect server.
    :param aws_conn_id: AWS connection for a table on S3, used by all three tasks (None:
        the standard AWS chain).
    :param http_conn_id: HTTP connection of the ``http-report`` policy (None: the spec's
        ``partition.mark-done-action.http.url``).
    :param sensor_kwargs: more arguments of the sensor (``deferrable``, ``poke_interval``,
        ``timeout``, ``mode``...).
    :param compact_kwargs: more arguments of :class:`PartitionCompactOperator`.
    :param commit_kwargs: more arguments of :class:`PartitionCommitOperator`.
    :param end_of_input: the query has stopped for good (the task before the group ran it,
        e.g. with ``trigger(availableNow=True)``): the partition is complete whatever the
        watermark (``sink.partition-commit.end-input``, for all three tasks).
    :return: the task group, to chain with ``>>``.
    """
    options = TableSpec.options_of(table, end_of_input)
    with TaskGroup(group_id=group_id, tooltip="wait for the watermark, compact, commit") as group:
        wait = _wait(
            options, partition, stall_timeout, process_time_fallback, aws_conn_id, sensor_kwargs
        )
        compact = _compact(options, partition, spark_conn_id, aws_conn_id, compact_kwargs)
        commit = PartitionCommitOperator(
            task_id="commit",
            table=options,
            partitions=partition,
            metastore_conn_id=metastore_conn_id,
            commit_empty_partitions=commit_empty_partitions,
            aws_conn_id=aws_conn_id,
            http_conn_id=http_conn_id,
            **(commit_kwargs or {}),
        )
        wait >> compact >> commit
    return group


def time_commit_group(
    *,
    table: Mapping[str, Any] | TableSpec,
    partitions: str,
    group_id: str = "partition_commit",
    stall_timeout: timedelta | None = None,
    process_time_fallback: timedelta | None = None,
    spark_conn_id: str = "spark_default",
    metastore_conn_id: str = "metastore_default",
    aws_conn_id: str | None = None,
    http_conn_id: str | None = None,
    sensor_kwargs: Mapping[str, Any] | None = None,
    compact_kwargs: Mapping[str, Any] | None = None,
    commit_kwargs: Mapping[str, Any] | None = None,
    end_of_input: bool = False,
) -> TaskGroup:
    """Add ``wait`` → ``discover`` → ``compact`` → ``commit`` for every partition of a time.

    One look at the table, not a sensor per partition: the partitions of a time are not
    known until it is complete (a region's first row for the hour may come last), and
    under ``partition-time`` they all share its commit time, so the wait reads the
    checkpoint alone. Then the partitions that time holds are found, compacted in one
    Spark application (a spark-submit per partition would cost a JVM start each) and
    committed as mapped tasks named after them, each announcing its partition on the
    table asset. A time the stream wrote nothing to commits nothing.

    :param partitions: the time's glob, e.g. ``region=*/dt={{ ds }}/hour=03``; templated.
    The other parameters are :func:`partition_commit_group`'s.
    """
    options = TableSpec.options_of(table, end_of_input)
    with TaskGroup(
        group_id=group_id, tooltip="wait for the time, find its partitions, compact, commit"
    ) as group:
        wait = _wait(
            options, partitions, stall_timeout, process_time_fallback, aws_conn_id, sensor_kwargs
        )
        discover = CommittablePartitionsOperator(
            task_id="discover", table=options, within=partitions, aws_conn_id=aws_conn_id
        )
        compact = _compact(options, discover.output, spark_conn_id, aws_conn_id, compact_kwargs)
        commit = _commit_each(
            options, discover, metastore_conn_id, aws_conn_id, http_conn_id, commit_kwargs
        )
        wait >> discover >> compact >> commit
    return group


def sweep_group(
    *,
    table: Mapping[str, Any] | TableSpec,
    group_id: str = "sweep",
    spark_conn_id: str = "spark_default",
    metastore_conn_id: str = "metastore_default",
    aws_conn_id: str | None = None,
    http_conn_id: str | None = None,
    compact_kwargs: Mapping[str, Any] | None = None,
    commit_kwargs: Mapping[str, Any] | None = None,
) -> TaskGroup:
    """Add ``discover`` → ``compact`` → ``commit`` for every partition with work.

    What a per-partition run leaves behind is found here: late data for a partition whose
    run succeeded, a fragmented partition, policies that did not finish, a rewrite's files
    left to retire, and any committable partition no run has committed yet. They are
    compacted in one Spark application and committed as mapped tasks named after them. A
    run that finds nothing compacts and commits nothing (the commit is skipped). A
    partition's own run committing it at the same moment is safe: both take the table
    lock, and whichever comes second finds nothing left to do.

    The parameters are :func:`partition_commit_group`'s.
    """
    options = TableSpec.options_of(table)
    with TaskGroup(
        group_id=group_id, tooltip="publish late data, finish unfinished commits"
    ) as group:
        discover = CommittablePartitionsOperator(
            task_id="discover", table=options, aws_conn_id=aws_conn_id
        )
        compact = _compact(options, discover.output, spark_conn_id, aws_conn_id, compact_kwargs)
        commit = _commit_each(
            options, discover, metastore_conn_id, aws_conn_id, http_conn_id, commit_kwargs
        )
        discover >> compact >> commit
    return group


def _wait(
    options: dict[str, Any],
    partition: str | Mapping[str, str],
    stall_timeout: timedelta | None,
    process_time_fallback: timedelta | None,
    aws_conn_id: str | None,
    sensor_kwargs: Mapping[str, Any] | None,
) -> PartitionWatermarkSensor:
    return PartitionWatermarkSensor(
        task_id="wait",
        table=options,
        partition=partition,
        stall_timeout=stall_timeout,
        process_time_fallback=process_time_fallback,
        aws_conn_id=aws_conn_id,
        **(sensor_kwargs or {}),
    )


def _compact(
    options: dict[str, Any],
    partitions: Any,
    spark_conn_id: str,
    aws_conn_id: str | None,
    compact_kwargs: Mapping[str, Any] | None,
) -> PartitionCompactOperator:
    return PartitionCompactOperator(
        task_id="compact",
        table=options,
        partitions=partitions,
        conn_id=spark_conn_id,
        aws_conn_id=aws_conn_id,
        **(compact_kwargs or {}),
    )


def _commit_each(
    options: Mapping[str, Any],
    discover: CommittablePartitionsOperator,
    metastore_conn_id: str,
    aws_conn_id: str | None,
    http_conn_id: str | None,
    commit_kwargs: Mapping[str, Any] | None,
) -> Any:
    """One mapped ``commit`` task per partition ``discover`` found, named after it."""
    return PartitionCommitOperator.partial(
        task_id="commit",
        table=options,
        metastore_conn_id=metastore_conn_id,
        aws_conn_id=aws_conn_id,
        http_conn_id=http_conn_id,
        # A mapped task's outlets are known before it runs only when given here.
        outlets=[table_asset(TableSpec.from_options(options).require_table_path())],
        map_index_template="{{ task.partitions }}",
        **(commit_kwargs or {}),
    ).expand(partitions=discover.output)
