"""One DAG per table, from a folder of spec files.

A team with forty streaming tables writes forty spec files, not forty DAG files. One DAG
file makes them all::

    from airflow_provider_fscommit.factory import partition_commit_dags

    globals().update(partition_commit_dags("specs/"))

A spec is a table's whole life, in a family of two DAGs:

- ``<dag_id>``, the commit DAG: the hourly DAG of ``dags/fscommit_hourly.py`` (wait for
  the watermark → compact → commit, catch-up and backfills as there), on a schedule of
  one run per partition derived from the table's partition time;
- ``<dag_id>_maintenance``, every ``dag.sweep`` (1 h by default): ``sweep`` publishes
  late data and finishes unfinished commits (discover → compact → commit), ``expire``
  drops expired partitions when, and only when, the spec sets
  ``partition.expiration-time``, and ``clean`` deletes published staged files when
  ``dag.clean-staging`` gives their age. No such DAG when it would have nothing to do.

Two DAGs, not one, because the two run on different clocks: a commit run is one
partition's (keyed by it, caught up, backfilled, waiting on its watermark), while a
sweep is the table's now. In the commit DAG every backfilled run would sweep the whole
table and a sweep would wait behind its run's sensor. The maintenance DAG runs one at a
time and never catches up; a sweep and a partition's run that meet on one partition
both take the table lock, and the second finds nothing left to do.

The settings come from the file's ``dag`` section. Reading the specs is
:mod:`~airflow_provider_fscommit.core.config.spec_file`'s, shared with ``fscommit validate``;
this module only turns them into DAGs.

A broken spec never hides the other tables: Airflow records an exception raised while
parsing as an import error of the whole DAG file and then hides every DAG the file made,
so nothing is raised. Each problem is logged at ERROR (the DAG processor's log of the DAG
file, naming the spec file and the option), and the broken table keeps a DAG of its id
that says so in the UI: tagged ``fscommit-broken-spec``, its description and docs naming
every problem, no schedule, and one task that fails with the problems if it is triggered.
It commits nothing and does not pretend to.
"""

from __future__ import annotations

import itertools
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from airflow.sdk import DAG

from airflow_provider_fscommit.core.config.spec_file import (
    DagSettings,
    SpecFile,
    SpecProblem,
    claimed_dag_id,
    read_spec_folder,
)
from airflow_provider_fscommit.operators.broken_spec import BrokenSpecOperator
from airflow_provider_fscommit.operators.clean_staging import CleanStagingOperator
from airflow_provider_fscommit.operators.partition_expire import PartitionExpireOperator
from airflow_provider_fscommit.task_groups.partition_commit import (
    partition_commit_group,
    sweep_group,
    time_commit_group,
)
from airflow_provider_fscommit.timetables.partition_runs import PartitionRuns, partition_time_zone

log = logging.getLogger(__name__)

#: The tag of a table's DAG that its broken spec file replaced.
BROKEN_SPEC_TAG = "fscommit-broken-spec"


def partition_commit_dags(folder: str | Path | Sequence[str | Path]) -> dict[str, DAG]:
    """The commit DAG of every spec file in ``folder`` (or of the files given), by DAG id.

    :param folder: a folder of ``*.yaml``/``*.yml``/``*.json`` spec files, or a list of
        folders and files; a relative path is taken from the DAG file that calls this, as
        the DAG processor's working directory is not the DAG folder.
    """
    caller = Path(sys._getframe(1).f_globals.get("__file__") or ".").resolve().parent
    sources = [folder] if isinstance(folder, (str, Path)) else list(folder)
    found = read_spec_folder(caller / source for source in sources)
    dags: dict[str, DAG] = {}
    for spec in found.specs:
        dags[spec.dag.dag_id] = table_dag(spec)
        maintenance = maintenance_dag(spec)
        if maintenance is not None:
            dags[maintenance.dag_id] = maintenance
    for path, problems in found.problem_files().items():
        for problem in problems:
            log.error("fscommit spec file %s", problem)
        dag_id = claimed_dag_id(path)
        if dag_id in dags:
            log.error(
                "%s: its DAG id %s is another table's: no DAG shows its problems", path, dag_id
            )
            continue
        dags[dag_id] = broken_spec_dag(dag_id, problems)
    return dags


def _default_args(settings: DagSettings) -> dict[str, Any]:
    default_args: dict[str, Any] = {
        "retries": settings.retries,
        "retry_delay": settings.retry_delay,
    }
    if settings.owner:
        default_args["owner"] = settings.owner
    if settings.pool:
        default_args["pool"] = settings.pool
    return default_args


def table_dag(spec: SpecFile) -> DAG:
    """The hourly commit DAG of one table, as ``dags/fscommit_hourly.py`` makes it."""
    settings = spec.dag
    runs = PartitionRuns(spec.partitioning, partition_time_zone(spec.table))
    default_args = _default_args(settings)
    with DAG(
        dag_id=settings.dag_id,
        # One run per partition: keyed by it from Airflow 3.2, its data interval before.
        schedule=runs.timetable,
        start_date=runs.start_date(settings.start_date),
        catchup=settings.catchup,
        max_active_runs=settings.max_active_runs,
        default_args=default_args,
        description=f"partition commit of {spec.table.table_path or spec.table.staging_path}",
        doc_md=_doc(spec),
        tags=sorted({"fscommit", *settings.tags}),
        user_defined_macros=runs.macros,
    ) as dag:
        shared: dict[str, Any] = {
            "table": spec.table,
            "stall_timeout": settings.stall_timeout,
            "spark_conn_id": settings.spark_conn_id,
            "metastore_conn_id": settings.metastore_conn_id,
            "aws_conn_id": settings.aws_conn_id,
            "http_conn_id": settings.http_conn_id,
            "sensor_kwargs": {
                "deferrable": settings.deferrable,
                "poke_interval": settings.poke_interval.total_seconds(),
                "timeout": settings.wait_timeout.total_seconds(),
            },
            "compact_kwargs": {"conf": dict(settings.spark_conf)} if settings.spark_conf else None,
            "commit_kwargs": (
                {"iceberg_conn_id": settings.iceberg_conn_id} if settings.iceberg_conn_id else None
            ),
        }
        if spec.partitioning.other_keys:
            # Every partition of the run's time, whatever the other keys hold.
            time_commit_group(partitions=runs.partition_glob(spec.table.partition_keys), **shared)
        else:
            partition_commit_group(
                partition=runs.partition(),
                commit_empty_partitions=settings.commit_empty_partitions,
                **shared,
            )
    return dag


def maintenance_dag(spec: SpecFile) -> DAG | None:
    """The table's ``sweep``, ``expire`` and ``clean`` tasks, each only when the spec asks
    (see :meth:`SpecFile.plan`); None when it asks for none of them."""
    settings, interval, dag_id = spec.dag, spec.maintenance_interval, spec.maintenance_dag_id
    if interval is None or dag_id is None:
        return None
    runs = PartitionRuns(spec.partitioning, partition_time_zone(spec.table))
    plan = spec.plan()
    with DAG(
        dag_id=dag_id,
        schedule=interval,
        # From the table's first partition, without catching up: a sweep is the table's now.
        start_date=runs.start_date(settings.start_date),
        catchup=False,
        max_active_runs=1,
        default_args=_default_args(settings),
        description=f"late data, expiry and clean-up of {spec.table.table_path}",
        doc_md=_maintenance_doc(spec, plan),
        tags=sorted({"fscommit", *settings.tags}),
    ) as dag:
        steps: list[Any] = []
        if settings.sweep is not None:
            steps.append(
                sweep_group(
                    table=spec.table,
                    spark_conn_id=settings.spark_conn_id,
                    metastore_conn_id=settings.metastore_conn_id,
                    aws_conn_id=settings.aws_conn_id,
                    http_conn_id=settings.http_conn_id,
                    compact_kwargs=(
                        {"conf": dict(settings.spark_conf)} if settings.spark_conf else None
                    ),
                    commit_kwargs=(
                        {"iceberg_conn_id": settings.iceberg_conn_id}
                        if settings.iceberg_conn_id
                        else None
                    ),
                )
            )
        # After the sweep, whatever it did (a sweep that found nothing skips its commit):
        # expiry sees what the sweep published, and clean-up deletes what it published.
        after_sweep = "none_failed" if steps else "all_success"
        if spec.expires:
            steps.append(
                PartitionExpireOperator(
                    task_id="expire",
                    table=spec.table,
                    metastore_conn_id=settings.metastore_conn_id,
                    aws_conn_id=settings.aws_conn_id,
                    iceberg_conn_id=settings.iceberg_conn_id,
                    trigger_rule=after_sweep,
                )
            )
        if settings.clean_staging is not None:
            steps.append(
                CleanStagingOperator(
                    task_id="clean",
                    table=spec.table,
                    older_than=settings.clean_staging,
                    aws_conn_id=settings.aws_conn_id,
                    trigger_rule=after_sweep,
                )
            )
        for before, after in itertools.pairwise(steps):
            before >> after
    return dag


def _maintenance_doc(spec: SpecFile, plan: dict[str, Any]) -> str:
    off = "off (the spec sets no {})"
    lines = [
        f"- **sweep**: every {plan['sweep']}, publishes late data and finishes unfinished "
        "commits of every committable partition"
        if plan["sweep"]
        else "- **sweep**: off (`dag.sweep: false`)",
        f"- **expire**: partitions {plan['expire']} are dropped"
        if plan["expire"]
        else "- **expire**: " + off.format("`partition.expiration-time`"),
        f"- **clean**: deletes {plan['clean_staging']}"
        if plan["clean_staging"]
        else "- **clean**: " + off.format("`dag.clean-staging`"),
    ]
    return (
        f"### Late data, expiry and clean-up of `{spec.table.table_path}`\n\n"
        f"From the spec file `{spec.path}`, beside its commit DAG `{spec.dag.dag_id}`. "
        "One run at a time, no catch-up:\n\n" + "\n".join(lines)
    )


def _doc(spec: SpecFile) -> str:
    keys = ", ".join(f"`{k}` as `{f}`" for k, f in spec.partitioning.key_formats.items())
    others = ", ".join(f"`{k}`" for k in spec.partitioning.other_keys)
    each = (
        f"One run per time ({spec.partitioning.cron}, on the wall clock of "
        f"{spec.table.watermark_time_zone}), committing its partitions of every {others}; "
        f"a run names its time from its partition key (Airflow 3.2+) or the start of its data "
        f"interval: {keys}. It waits until "
        f"the time is committable ({spec.table.trigger_summary}), finds its partitions, "
        "compacts them in one application and commits each."
        if others
        else f"One run per partition ({spec.partitioning.cron}, on the wall clock of "
        f"{spec.table.watermark_time_zone}); a run names its partition from its partition key "
        f"(Airflow 3.2+) or the start of its data interval: {keys}. It waits until the "
        "partition is committable "
        f"({spec.table.trigger_summary}), compacts it and commits it."
    )
    return (
        f"### Partition commit of `{spec.table.table_path}`\n\n"
        f"From the spec file `{spec.path}`. {each} Past times are caught up in order; a "
        "backfill commits a range again, leaving committed partitions as they are."
    )


def broken_spec_dag(dag_id: str, problems: Sequence[SpecProblem]) -> DAG:
    """The DAG that stands for a table whose spec file has ``problems``."""
    lines = [str(problem) for problem in problems]
    with DAG(
        dag_id=dag_id,
        schedule=None,
        is_paused_upon_creation=True,
        description=f"BROKEN SPEC: {lines[0]}"
        + (f" (+{len(lines) - 1} more)" if len(lines) > 1 else ""),
        doc_md="### This table's spec file is broken\n\nNothing is committed until it is "
        "fixed (`fscommit validate` checks a folder as this DAG file reads it):\n\n"
        + "\n".join(f"- `{line}`" for line in lines),
        tags=["fscommit", BROKEN_SPEC_TAG],
    ) as dag:
        BrokenSpecOperator(task_id="broken_spec", problems=lines, retries=0)
    return dag
