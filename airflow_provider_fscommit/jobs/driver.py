"""The compaction application's driver and tasks (its entry script is ``compact.py``).

One application compacts and publishes every requested partition (default: every
committable one), because starting a Spark application costs seconds; the driver reads
what it plans from (checkpoint, sink log, table state) while its Spark session starts, and
no input footer: each unit reads its own inputs' footers, once. The units of all
plans are balanced by input bytes over a few Spark tasks per core (a task costs tens of
milliseconds of overhead, which hundreds of small units would pay each), so the work
spreads over a cluster. The driver runs the core's :class:`CompactionPublisher`;
executors run :func:`~.executor.run_group` (the compactor, with pyarrow).

It prints ``FSCOMMIT_PLANNED`` once its plans are made, one ``FSCOMMIT_PROGRESS <json>``
line per partition as it is done and, at its end, the run's :class:`CompactionSummary` as
``FSCOMMIT_RESULT <json>`` (what the CLI follows:
:class:`~airflow_provider_fscommit.jobs.runner.ApplicationOutput`); a run that worked on
partitions also stores it in the table's ledger under ``--run-id``, where a launcher that
cannot see the output reads it back (a run refused or stopped before writes nothing).
Exit status 1 when the run stopped or any partition failed (the others are published).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from airflow_provider_fscommit.console import messages_to_stderr
from airflow_provider_fscommit.core.compaction.bin_packing import balance
from airflow_provider_fscommit.core.compaction.compactor import UnitResult, UnitTask
from airflow_provider_fscommit.core.compaction.plan import CompactionPlan
from airflow_provider_fscommit.core.compaction.summary import CompactionSummary, PartitionResult
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.errors import FsCommitError
from airflow_provider_fscommit.core.ledger.ledger import CommitLedger
from airflow_provider_fscommit.core.publish.publisher import CompactionPublisher
from airflow_provider_fscommit.jobs.executor import run_group
from airflow_provider_fscommit.jobs.floors import refusal, runtime

PLANNED_PREFIX = "FSCOMMIT_PLANNED "
PROGRESS_PREFIX = "FSCOMMIT_PROGRESS "
RESULT_PREFIX = "FSCOMMIT_RESULT "
# Spark tasks per core: enough slack to even out units of different sizes.
TASKS_PER_CORE = 3
# At most this many tasks ask the executors for their Python and pyarrow.
_FLOOR_CHECK_TASKS = 256


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="compact.py", description="Compact and publish a table's committable partitions."
    )
    parser.add_argument("--spec", required=True, help="the table spec as JSON")
    parser.add_argument("--partition", action="append", dest="partitions")
    parser.add_argument("--run-id", required=True)
    parser.add_argument("--codec", default="snappy")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    with messages_to_stderr():
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    from pyspark.sql import SparkSession

    sessions: list[SparkSession] = []

    def start() -> None:
        sessions.append(SparkSession.builder.appName("fscommit-compact").getOrCreate())
        require_floors(sessions[0].sparkContext)

    def run_units(tasks: list[UnitTask]) -> list[UnitResult]:
        context = sessions[0].sparkContext
        context.setJobDescription(f"fscommit: {len(tasks)} compaction unit(s)")
        groups = unit_groups(tasks, context.defaultParallelism)
        return context.parallelize(groups, numSlices=len(groups)).flatMap(run_group).collect()

    def progress(outcome: PartitionResult) -> None:
        print(PROGRESS_PREFIX + json.dumps(outcome.to_dict()), flush=True)

    def planned(plans: list[CompactionPlan]) -> None:
        summary = [{"partition": p.partition, "files": len(p.inputs)} for p in plans]
        print(PLANNED_PREFIX + json.dumps(summary), flush=True)

    refused = refusal("driver", runtime())
    if refused is None:
        try:
            publisher = CompactionPublisher(TableSpec.from_json(args.spec), args.codec)
        except FsCommitError as exc:
            refused = str(exc)
    if refused is not None:
        report(CompactionSummary.stopped(refused))
        return 1
    try:
        summary = run_and_record(
            publisher,
            args.partitions,
            args.run_id,
            run_units,
            progress,
            planned,
            lambda: _start_reading_ahead(publisher, args.partitions, start),
        )
    finally:
        for session in sessions:
            session.stop()
    report(summary)
    return 1 if summary.failed else 0


def require_floors(context: Any) -> None:
    """Refuse executors whose Python or pyarrow is below the floors (or that cannot start
    Python at all), before anything is planned: one small Spark job asks each slot."""
    # One task per slot reaches every executor in practice; a bounded number of tasks
    # keeps the check cheap on a large cluster.
    slots = min(max(context.defaultParallelism, 1), _FLOOR_CHECK_TASKS)
    try:
        found = context.parallelize(range(slots), slots).map(runtime).distinct().collect()
    except Exception as exc:
        first = next((line for line in str(exc).splitlines() if "Error" in line), str(exc))
        raise FsCommitError(
            f"the compaction job's executors could not run Python ({first.strip()[:300]}); "
            "check spark.pyspark.python (or PYSPARK_PYTHON) on the cluster's nodes; "
            "nothing was planned or written"
        ) from None
    for refused in filter(None, (refusal("executors", each) for each in found)):
        raise FsCommitError(refused)


def unit_groups(tasks: list[UnitTask], parallelism: int) -> list[list[UnitTask]]:
    """The units balanced by input bytes over ``TASKS_PER_CORE`` Spark tasks per core."""
    return balance(tasks, lambda t: t.bytes, TASKS_PER_CORE * max(parallelism, 1))


def run_and_record(
    publisher: CompactionPublisher,
    partitions: Sequence[str] | None,
    run_id: str,
    run_units: Callable[[list[UnitTask]], list[UnitResult]],
    progress: Callable[[PartitionResult], None] | None = None,
    planned: Callable[[list[CompactionPlan]], None] | None = None,
    start: Callable[[], None] | None = None,
) -> CompactionSummary:
    """The driver's part of a run, wherever the units run: the whole protocol with
    ``publisher`` (its table and codec), then the run summary stored in the ledger under
    ``run_id`` (what a launcher that cannot see the output reads back).

    ``start`` brings the executors up (a Spark session, a Connect server's) and may refuse
    them (:func:`require_floors`); nothing is planned before it returns. What the run plans
    from is read by then: by the publisher's own look for work (a launcher in this
    process), or meanwhile (the application's, while its session starts). An error that
    stops the whole run (executors below the floors, the lock, the checkpoint, the store)
    becomes the summary's ``error`` and is not stored: a refused run writes nothing to the
    table; a failed partition is in its ``partitions``.
    """
    try:
        if start is not None:
            start()
        summary = publisher.run(run_units, partitions, progress, planned)
    except FsCommitError as exc:
        return CompactionSummary.stopped(str(exc))
    CommitLedger(publisher.table_path).write_run(run_id, summary.to_dict())
    return summary


def report(summary: CompactionSummary) -> None:
    """The application's last words: its summary on stdout, for a launcher that follows the
    output (the CLI), even when the store that would keep it is what stopped the run; why
    it failed on stderr, which the task log and the CLI's error keep."""
    print(RESULT_PREFIX + json.dumps(summary.to_dict()), flush=True)
    failure = summary.failure()
    if failure is not None:
        print(f"fscommit compaction job: {failure}", file=sys.stderr, flush=True)


def _start_reading_ahead(
    publisher: CompactionPublisher, partitions: Sequence[str] | None, start: Callable[[], None]
) -> None:
    """``start()`` here while another thread reads what the run plans from (a dry run: it
    writes nothing)."""
    with ThreadPoolExecutor(1, thread_name_prefix="fscommit-read-ahead") as pool:
        ahead = pool.submit(publisher.read_ahead, partitions)
        start()
        ahead.result()
