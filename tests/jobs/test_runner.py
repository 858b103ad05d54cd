"""The one place that decides how a compaction runs, and what its summary is.

Spark applications themselves run in the CLI's and the operator's tests (tests/cli,
tests/jobs/test_compact.py, tests/operators); here the launcher's application only dies,
the fault a runner must tell apart from a run that reported its own failure.
"""

from __future__ import annotations

import json

import pytest

from airflow_provider_fscommit.core.compaction.compactor import compact_units
from airflow_provider_fscommit.core.compaction.summary import (
    CompactionState,
    CompactionSummary,
    PartitionResult,
)
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.errors import FsCommitError
from airflow_provider_fscommit.core.ledger.ledger import CommitLedger
from airflow_provider_fscommit.core.publish import publisher as publisher_module
from airflow_provider_fscommit.core.publish.publisher import CompactionPublisher
from airflow_provider_fscommit.jobs.driver import (
    PLANNED_PREFIX,
    PROGRESS_PREFIX,
    RESULT_PREFIX,
)
from airflow_provider_fscommit.jobs.launch import CompactionSubmission, SparkInstallation
from airflow_provider_fscommit.jobs.runner import ApplicationOutput, CompactionRunner, Launch
from tests.support.compaction import table_options, visible_data_files


class DyingLauncher:
    """A launcher whose application dies; ``stored`` is what it told the ledger first."""

    def __init__(self, spec: TableSpec, stored: CompactionSummary | None = None) -> None:
        self.spec = spec
        self.stored = stored
        self.told: list[Launch] = []
        self.submitted: list[CompactionSubmission] = []

    def launching(self, how: Launch) -> None:
        self.told.append(how)

    def installation(self) -> SparkInstallation:
        return SparkInstallation.locate()

    def environment(self) -> dict[str, str]:
        return {"FSCOMMIT_TEST": "1"}

    def driver_here(self) -> bool:
        return False

    def submit(self, submission: CompactionSubmission) -> None:
        self.submitted.append(submission)
        if self.stored is not None:
            CommitLedger(self.spec.require_table_path()).write_run(
                submission.run_id, self.stored.to_dict()
            )
        raise RuntimeError("spark-submit exited with code 137")


def spec_of(stream, table, **options: str) -> TableSpec:
    return TableSpec.from_options({**table_options(stream, str(table)), **options})


def test_nothing_to_compact_finishes_here_without_asking_for_spark(compacted_stream, tmp_path):
    spec = spec_of(compacted_stream, tmp_path / "table", **{"sink.partition-commit.delay": "100 d"})
    launcher = DyingLauncher(spec)
    summary = CompactionRunner(spec, None).run(launcher)
    assert launcher.told == [Launch.HERE] and not launcher.submitted
    assert summary.outcomes == () and not summary.failed


def test_a_sorted_tables_idle_check_reads_no_footer_and_its_run_refuses_a_missing_column(
    compacted_stream, tmp_path, monkeypatch
):
    """The footers are the run's to read (while its executors start): the launcher's look
    for work reading them too made a sorted run of workload (b) 4.8 s longer."""
    spec = spec_of(compacted_stream, tmp_path / "table", **{"compaction.sort-by": "k,user_id"})
    reads: list[int] = []
    read = publisher_module.read_plan_schema
    monkeypatch.setattr(
        publisher_module, "read_plan_schema", lambda *a: reads.append(1) or read(*a)
    )
    idle = CompactionRunner(spec, None).run_here_if_idle(CompactionPublisher(spec))
    assert idle is None and reads == []
    summary = CompactionPublisher(spec).run(compact_units)
    assert summary.outcomes and all(
        o.state is CompactionState.FAILED
        and o.error.startswith("compaction.sort-by names column 'user_id', which the files")
        for o in summary.outcomes
    )
    assert not (tmp_path / "table" / "dt=2026-11-20").exists()


def test_an_application_that_died_without_a_summary_is_the_launchers_error(
    compacted_stream, tmp_path
):
    spec = spec_of(compacted_stream, tmp_path / "table")
    launcher = DyingLauncher(spec)
    with pytest.raises(RuntimeError, match="code 137"):
        CompactionRunner(spec, None, conf={"spark.ui.enabled": "false"}).run(launcher)
    assert launcher.told == [Launch.SPARK_SUBMIT]
    (submission,) = launcher.submitted
    assert submission.conf["spark.ui.enabled"] == "false"
    assert submission.env["FSCOMMIT_TEST"] == "1"
    assert not visible_data_files(str(tmp_path / "table"))


def test_a_failed_run_that_stored_its_summary_is_that_summary(compacted_stream, tmp_path):
    """The application's own message (here, a partition's corrupt file) is the one a user
    reads, not spark-submit's exit code."""
    spec = spec_of(compacted_stream, tmp_path / "table")
    failed = PartitionResult(
        "dt=2026-11-20/hour=00", CompactionState.FAILED, 0, 1, 10, 1, error="corrupt footer"
    )
    stored = CompactionSummary((failed,))
    summary = CompactionRunner(spec, None).run(DyingLauncher(spec, stored=stored))
    assert summary == stored and summary.failed
    assert summary.failure() == (
        "compaction failed for 1 partition(s), first dt=2026-11-20/hour=00: corrupt footer"
    )


def test_a_run_that_stored_a_success_but_exited_badly_is_not_taken_for_done(
    compacted_stream, tmp_path
):
    spec = spec_of(compacted_stream, tmp_path / "table")
    with pytest.raises(RuntimeError, match="code 137"):
        CompactionRunner(spec, None).run(DyingLauncher(spec, stored=CompactionSummary()))


def test_an_application_that_finished_without_a_summary_says_where_to_look(
    compacted_stream, tmp_path
):
    spec = spec_of(compacted_stream, tmp_path / "table")

    class Finishing(DyingLauncher):
        def submit(self, submission: CompactionSubmission) -> None:
            self.submitted.append(submission)

    with pytest.raises(FsCommitError, match="left no run summary in the ledger"):
        CompactionRunner(spec, None).run(Finishing(spec))


def test_a_summary_the_application_reported_on_its_output_is_the_runs(compacted_stream, tmp_path):
    """What the CLI relies on when the store that would keep the summary is what failed."""
    spec = spec_of(compacted_stream, tmp_path / "table")
    stopped = CompactionSummary.stopped("cannot write the table directory (read-only)")

    class Reporting(DyingLauncher):
        def submit(self, submission: CompactionSubmission) -> CompactionSummary:
            self.submitted.append(submission)
            return stopped

    assert CompactionRunner(spec, None).run(Reporting(spec)) == stopped


def test_the_applications_output_shows_progress_and_keeps_its_summary():
    class Shown:
        def __init__(self) -> None:
            self.seen: list[object] = []

        def planned(self, partitions: int) -> None:
            self.seen.append(partitions)

        def partition_done(self, outcome: PartitionResult) -> None:
            self.seen.append(outcome)

    done = PartitionResult("dt=2026-11-20/hour=00", CompactionState.PUBLISHED, 0, 3, 30, 1)
    summary = CompactionSummary((done,), seconds=2.5)
    shown = Shown()
    output = ApplicationOutput(shown)
    lines = [
        "26/11/26 23:38:21 INFO SparkContext: Running Spark version 4.3.0",
        f"{PLANNED_PREFIX}{json.dumps([{'partition': done.partition, 'files': 3}])}",
        f"{PROGRESS_PREFIX}{json.dumps(done.to_dict())}",
        f"{RESULT_PREFIX}{json.dumps(summary.to_dict())}",
    ]
    assert [output.follow(line) for line in lines] == [False, True, True, True]
    assert shown.seen == [1, done] and output.summary == summary
