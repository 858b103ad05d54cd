"""One compaction run, launched the one right way: here, on Spark Connect, or spark-submit.

The CLI and the operator's hook both run compactions, and must not drift apart on when a
Spark application is worth starting or on what counts as a failed run. So the decision
lives here: nothing to compact → the run finishes in this process, no JVM started (an
hourly DAG meets idle hours and reruns of published ones); a Spark Connect server → the
protocol here, the units there; else one spark-submit application. Every way ends in the
same :class:`CompactionSummary`; the spark-submit driver reports it on its output and
stores it in the table's ledger.

What differs between the shells is only how a spark-submit is run and where progress is
shown: the :class:`Launcher` (the hook: through the Spark provider's ``SparkSubmitHook``
and its connection, the summary read back from the ledger; the CLI: a process of its own,
its output followed with :class:`ApplicationOutput`).
"""

from __future__ import annotations

import contextlib
import json
import tempfile
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, Protocol

from airflow_provider_fscommit.core.compaction.summary import CompactionSummary, PartitionResult
from airflow_provider_fscommit.core.compat import StrEnum
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.errors import FsCommitError
from airflow_provider_fscommit.core.ledger.ledger import CommitLedger
from airflow_provider_fscommit.core.publish.publisher import CompactionPublisher
from airflow_provider_fscommit.jobs.class_archive import ClassArchive
from airflow_provider_fscommit.jobs.connect import ConnectCompaction
from airflow_provider_fscommit.jobs.driver import PLANNED_PREFIX, PROGRESS_PREFIX, RESULT_PREFIX
from airflow_provider_fscommit.jobs.executor import run_group
from airflow_provider_fscommit.jobs.launch import CompactionSubmission, SparkInstallation


class Launch(StrEnum):
    """How a run goes, once the runner has decided."""

    HERE = "here"  # nothing for Spark: finished in this process
    CONNECT = "connect"  # the units on a Spark Connect server
    SPARK_SUBMIT = "spark-submit"  # one Spark application


class RunProgress(Protocol):
    """Where a run's progress is shown (the CLI's progress line)."""

    def planned(self, partitions: int) -> None:
        """The run's plans are made: ``partitions`` partitions have work."""

    def partition_done(self, outcome: PartitionResult) -> None:
        """One partition is published (or failed)."""


class Launcher(Protocol):
    """What a shell says about running the compaction application."""

    def launching(self, how: Launch) -> None:
        """Told once how the run goes, before it starts (to log it, to show progress)."""

    def installation(self) -> SparkInstallation:
        """The Spark whose spark-submit runs the application."""

    def environment(self) -> Mapping[str, str]:
        """What to add to spark-submit's environment (e.g. an AWS identity)."""

    def driver_here(self) -> bool:
        """Whether the application's driver runs on this host, started by the spark-submit
        here with its environment (client mode): then its JVM maps the host's class
        archive (:mod:`.class_archive`)."""

    def submit(self, submission: CompactionSubmission) -> CompactionSummary | None:
        """Run ``submission`` to its end; the summary it reported on its output, if this
        launcher follows it (:class:`ApplicationOutput`), else None: the runner reads the
        ledger. Raise when the application failed without reporting one."""


@dataclass
class CompactionRunner:
    """Runs one compaction of ``partitions`` (None: every committable one) of a table.

    :param conf: Spark conf of a spark-submit application.
    :param remote: a Spark Connect server (``sc://…``): its units run there.
    :param progress: shown as a Connect run goes (a spark-submit's progress is in its
        output, which only its launcher sees: :class:`ApplicationOutput`).
    """

    spec: TableSpec
    partitions: Sequence[str] | None
    _: KW_ONLY
    codec: str = "snappy"
    conf: Mapping[str, Any] = field(default_factory=dict)
    remote: str | None = None
    progress: RunProgress | None = None
    _connect: ConnectCompaction | None = field(default=None, init=False, repr=False)

    def run(self, launcher: Launcher) -> CompactionSummary:
        """The run's summary; whether it failed is :attr:`CompactionSummary.failed`.

        Raises only when there is no summary to give: the application died (killed, out of
        memory) or the store holding the ledger cannot be reached.
        """
        publisher = CompactionPublisher(self.spec, self.codec)
        idle = self.run_here_if_idle(publisher)
        if idle is not None:
            launcher.launching(Launch.HERE)
            return idle
        if self.remote is not None:
            launcher.launching(Launch.CONNECT)
            return self._on_connect(self.remote, publisher)
        launcher.launching(Launch.SPARK_SUBMIT)
        return self._submitted(launcher)

    def run_here_if_idle(self, publisher: CompactionPublisher) -> CompactionSummary | None:
        """Finish a run that has nothing to compact without starting a Spark application.

        ``publisher``'s dry run decides (it also refuses partitions that are not
        committable, before anything is submitted); the run itself is the same protocol,
        so recovery (discarding a crashed run's plan, finishing a publish) still happens.
        Should late rows arrive between the two looks, their units run in this process,
        with the same code the executors run. Returns None when there is work for Spark;
        a run on Spark Connect then continues with ``publisher``, whose dry run was its
        read-ahead.

        Whether a plan's columns suit the table's sort order is left to the run, whose
        units read the footers: a wrong column is refused there, before anything is
        published.
        """
        if publisher.look_ahead(self.partitions).plans:
            return None
        return publisher.run(run_group, self.partitions)

    def interrupt(self) -> None:
        """Cancel a Connect run's work on its server (from another thread: ``on_kill``)."""
        connect = self._connect
        if connect is not None:
            connect.interrupt()

    def _on_connect(self, remote: str, publisher: CompactionPublisher) -> CompactionSummary:
        """The protocol in this process, continuing ``publisher``'s look for work; the
        units on the Spark Connect server."""
        progress = self.progress
        self._connect = ConnectCompaction(remote)
        try:
            return self._connect.run(
                publisher,
                self.partitions,
                uuid.uuid4().hex,
                progress.partition_done if progress else None,
                (lambda plans: progress.planned(len(plans))) if progress else None,
            )
        finally:
            self._connect = None

    def _submitted(self, launcher: Launcher) -> CompactionSummary:
        """One spark-submit application: its summary as it reported it, else as it stored it."""
        ledger = CommitLedger(self.spec.require_table_path())
        spark = launcher.installation()
        archive = ClassArchive.for_run(spark) if launcher.driver_here() else None
        env = launcher.environment()
        completed = False
        try:
            with tempfile.TemporaryDirectory(prefix="fscommit-") as scratch:
                submission = CompactionSubmission.prepare(
                    self.spec,
                    self.partitions,
                    scratch,
                    codec=self.codec,
                    conf=self.conf,
                    env=archive.env(env) if archive else env,
                    spark=spark,
                )
                try:
                    reported = launcher.submit(submission)
                except Exception:
                    with contextlib.suppress(FsCommitError, OSError):
                        stored = _stored(ledger, submission.run_id)
                        if stored is not None and stored.failed:
                            return stored  # the application said why it failed
                    raise
                completed = True
        finally:
            if archive is not None:
                archive.finish(completed)
        if reported is not None:
            return reported
        stored = _stored(ledger, submission.run_id)
        if stored is None:
            raise FsCommitError(
                "the compaction application finished but left no run summary in the ledger; "
                "see the spark-submit log above"
            )
        return stored


class ApplicationOutput:
    """The application's output lines, as a launcher that sees them follows them: progress
    is shown as it comes, and the summary the application reports at its end is kept."""

    def __init__(self, progress: RunProgress | None) -> None:
        self.progress = progress
        self.summary: CompactionSummary | None = None

    def follow(self, line: str) -> bool:
        """Take one line of output; False: not one of the application's own."""
        for prefix, take in (
            (PLANNED_PREFIX, self._planned),
            (PROGRESS_PREFIX, self._done),
            (RESULT_PREFIX, self._result),
        ):
            if line.startswith(prefix):
                take(json.loads(line[len(prefix) :]))
                return True
        return False

    def _planned(self, plans: list[Any]) -> None:
        if self.progress:
            self.progress.planned(len(plans))

    def _done(self, outcome: dict[str, Any]) -> None:
        if self.progress:
            self.progress.partition_done(PartitionResult.from_dict(outcome))

    def _result(self, summary: dict[str, Any]) -> None:
        self.summary = CompactionSummary.from_dict(summary)


def _stored(ledger: CommitLedger, run_id: str) -> CompactionSummary | None:
    document = ledger.read_run(run_id)
    return None if document is None else CompactionSummary.from_dict(document)
