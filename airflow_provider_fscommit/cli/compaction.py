"""The compaction that ``fscommit compact``, ``plan`` and ``commit`` run: Spark flags,
how this terminal launches it, and how its outcome reads.

When to start Spark at all and what the run's summary is are the
:class:`~airflow_provider_fscommit.jobs.runner.CompactionRunner`'s, as for the operator's
hook; the terminal only runs spark-submit itself (it has no Airflow connection to go
through) and shows progress as the application reports it.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field

from airflow_provider_fscommit.cli.arguments import pairs
from airflow_provider_fscommit.cli.progress import Progress
from airflow_provider_fscommit.core.compaction.summary import (
    CompactionSummary,
    PartitionResult,
    unchanged_text,
)
from airflow_provider_fscommit.core.config.quantities import format_size
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.errors import FsCommitError
from airflow_provider_fscommit.jobs.connect import REMOTE_ENV
from airflow_provider_fscommit.jobs.launch import CompactionSubmission, SparkInstallation
from airflow_provider_fscommit.jobs.runner import ApplicationOutput, CompactionRunner, Launch


@dataclass(frozen=True)
class SparkOptions:
    """How to run the compaction application (the CLI's Spark flags)."""

    master: str = "local[*]"
    spark_submit: str | None = None
    spark_home: str | None = None  # the cluster's Spark (default: $SPARK_HOME)
    conf: dict[str, str] = field(default_factory=dict)
    codec: str = "snappy"
    remote: str | None = None  # a Spark Connect server: no spark-submit

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> SparkOptions:
        return cls(
            master=args.spark_master,
            spark_submit=args.spark_submit,
            spark_home=args.spark_home,
            conf=pairs(args.conf, "--conf"),
            codec=args.codec,
            remote=args.spark_remote,
        )


def add_spark_arguments(parser: argparse.ArgumentParser) -> None:
    """Where the compaction units run (spark-submit or Spark Connect) and how they write."""
    parser.add_argument("--spark-master", default="local[*]", help="default: local[*]")
    parser.add_argument(
        "--spark-home",
        metavar="DIR",
        help="the Spark installation the cluster runs, e.g. /opt/spark-3.5.9 (default: "
        "$SPARK_HOME, else the pyspark installed here when it has Spark's jars); name the "
        "cluster's Python with --conf spark.pyspark.python=...",
    )
    parser.add_argument(
        "--spark-submit",
        help="spark-submit to use (default: the Spark home's, else PATH's)",
    )
    parser.add_argument(
        "--spark-remote",
        default=os.environ.get(REMOTE_ENV) or None,
        metavar="URL",
        help="run the compaction units on this running Spark Connect server "
        f"(sc://host:port; default: ${REMOTE_ENV}) instead of a spark-submit per run",
    )
    parser.add_argument(
        "--conf", action="append", default=[], metavar="KEY=VALUE", help="Spark conf"
    )
    parser.add_argument(
        "--codec",
        default="snappy",
        help="Parquet outputs' codec (default: snappy); ORC keeps its inputs' compression, "
        "JSON/CSV/text their codec",
    )


def run_compaction(
    spec: TableSpec, partitions: Sequence[str] | None, spark: SparkOptions, *, show_progress: bool
) -> CompactionSummary:
    """Run the compaction, its progress on stderr unless ``show_progress`` is False."""
    launcher = TerminalLauncher(spark, Progress() if show_progress else None)
    runner = CompactionRunner(
        spec,
        partitions,
        codec=spark.codec,
        conf=spark.conf,
        remote=spark.remote,
        progress=launcher,
    )
    try:
        return runner.run(launcher)
    finally:
        launcher.close()


class TerminalLauncher:
    """The terminal's :class:`~airflow_provider_fscommit.jobs.runner.Launcher`, and where
    the run's progress is shown: spark-submit runs as a child process whose output is
    followed, its other lines kept for the error message should it fail."""

    def __init__(self, spark: SparkOptions, progress: Progress | None) -> None:
        self.spark = spark
        self._progress = progress
        self._shown = False
        self._installation: SparkInstallation | None = None

    def launching(self, how: Launch) -> None:
        if how != Launch.HERE and self._progress:
            self._progress.starting()
            self._shown = True

    def installation(self) -> SparkInstallation:
        self._installation = SparkInstallation.locate(
            self.spark.spark_home, self.spark.spark_submit
        )
        return self._installation

    def environment(self) -> dict[str, str]:
        return {}  # this process's own, which spark-submit inherits

    def driver_here(self) -> bool:
        return True  # spark-submit here runs in client mode, its default

    def submit(self, submission: CompactionSubmission) -> CompactionSummary | None:
        """One spark-submit, its command line the launcher's description of the run with
        the flags' master and spark-submit; its output followed for progress and summary."""
        assert self._installation is not None  # the runner asked for it first
        command = submission.command(self._installation.spark_submit, self.spark.master)
        env = {**os.environ, **submission.env}  # as the Spark provider's hook adds them
        output = ApplicationOutput(self)
        with tempfile.TemporaryDirectory(prefix="fscommit-") as scratch:
            log_path = os.path.join(scratch, "spark-submit.log")
            with open(log_path, "w") as log:
                process = subprocess.Popen(
                    command, stdout=subprocess.PIPE, stderr=log, text=True, env=env
                )
                assert process.stdout is not None
                for line in process.stdout:
                    if not output.follow(line):
                        log.write(line)
                process.wait()
            if output.summary is None:
                with open(log_path, errors="replace") as log:
                    tail = log.read()[-4000:]
                raise FsCommitError(f"the compaction application failed:\n{tail}")
        return output.summary

    def planned(self, partitions: int) -> None:
        if self._progress:
            self._progress.planned(partitions)

    def partition_done(self, outcome: PartitionResult) -> None:
        if self._progress:
            self._progress.partition_done(outcome_line(outcome))

    def close(self) -> None:
        if self._progress and self._shown:
            self._progress.close()


def nothing_committable(partitions: Sequence[str] | None, selected: bool) -> bool:
    """No partition named and none committable (``selected``: the run had some, listed
    or counted unchanged): not an error, but not done either."""
    if partitions is None and not selected:
        print(
            "fscommit: nothing committable yet: no partition's commit time is behind the "
            "watermark (see fscommit status)",
            file=sys.stderr,
        )
        return True
    return False


def outcome_line(outcome: PartitionResult) -> str:
    if outcome.failed:
        return f"{outcome.partition} FAILED: {outcome.error}"
    return (
        f"{outcome.partition} {outcome.state.value}: {outcome.files_in} file(s) -> "
        f"{outcome.files_out}, {outcome.rows} rows, {format_size(outcome.bytes_out)}"
    )


def render_summary(summary: CompactionSummary) -> str:
    """Totals, and the failures again (each partition was shown as it finished)."""
    lines = [outcome_line(o) for o in summary.outcomes if o.failed]
    if summary.unchanged:
        lines.append(unchanged_text(summary.unchanged))
    lines.append(
        f"{summary.total('files_in')} file(s) in, {summary.total('files_out')} out; "
        f"{summary.total('rows')} rows; {round(summary.seconds, 3)} s in the application"
    )
    return "\n".join(lines)
