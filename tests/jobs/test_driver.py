"""The driver reports every run's summary on its output; only a run that worked on
partitions leaves it in the ledger.

The whole application runs in tests/jobs/test_compact.py; here, what a stopped run leaves.
"""

from __future__ import annotations

from pathlib import Path

from airflow_provider_fscommit.core.compaction.summary import CompactionSummary
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.errors import FsCommitError
from airflow_provider_fscommit.core.publish.publisher import CompactionPublisher
from airflow_provider_fscommit.jobs.driver import report, run_and_record
from airflow_provider_fscommit.jobs.executor import run_group
from airflow_provider_fscommit.jobs.runner import ApplicationOutput
from tests.support.compaction import table_options


def test_a_stopped_run_is_reported_on_the_output_and_said_on_stderr(capsys):
    stopped = CompactionSummary.stopped("the table lock is held by another run")
    report(stopped)
    out, err = capsys.readouterr()
    output = ApplicationOutput(None)
    assert [output.follow(line) for line in out.splitlines()] == [True]
    assert output.summary == stopped
    assert "fscommit compaction job: the table lock is held by another run" in err


def test_a_run_refused_at_its_start_writes_nothing_to_the_table(compacted_stream, tmp_path):
    table = tmp_path / "table"
    spec = TableSpec.from_options(table_options(compacted_stream, str(table)))

    def refuse() -> None:
        raise FsCommitError("the compaction job's executors run with no pyarrow")

    summary = run_and_record(CompactionPublisher(spec), None, "r1", run_group, start=refuse)
    assert summary.error == "the compaction job's executors run with no pyarrow"
    assert not Path(table).exists()
