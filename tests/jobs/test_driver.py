"""The driver reports every run's summary on its output and in the ledger, a stopped one too.

The whole application runs in tests/jobs/test_compact.py; here, what a stopped run leaves.
"""

from __future__ import annotations

from airflow_provider_fscommit.core.compaction.summary import CompactionSummary
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.ledger.ledger import CommitLedger
from airflow_provider_fscommit.jobs.driver import report, store
from airflow_provider_fscommit.jobs.runner import ApplicationOutput
from fscommit_dev.tables import hourly_table


def spec_at(tmp_path, table) -> TableSpec:
    return TableSpec.from_options(
        hourly_table(str(tmp_path / "staging"), str(tmp_path / "checkpoint"), table_path=table)
    )


def test_a_stopped_run_is_reported_stored_and_said_on_stderr(tmp_path, capsys):
    spec = spec_at(tmp_path, str(tmp_path / "table"))
    stopped = CompactionSummary.stopped("the table lock is held by another run")
    store(spec, "r1", stopped)
    report(stopped)
    stored = CommitLedger(spec.table_path).read_run("r1")
    assert stored == {"error": "the table lock is held by another run", "partitions": []}
    out, err = capsys.readouterr()
    output = ApplicationOutput(None)
    assert [output.follow(line) for line in out.splitlines()] == [True]
    assert output.summary == stopped
    assert "fscommit compaction job: the table lock is held by another run" in err


def test_a_store_that_fails_a_stopped_run_does_not_hide_why_it_stopped(tmp_path, capsys):
    """The fault: the table's location is a file, so no ledger can be written there."""
    blocked = tmp_path / "table"
    blocked.write_text("not a directory")
    stopped = CompactionSummary.stopped("checkpoint gone")
    store(spec_at(tmp_path, str(blocked)), "r1", stopped)
    report(stopped)
    out, err = capsys.readouterr()
    assert out.startswith("FSCOMMIT_RESULT ") and "checkpoint gone" in out
    assert "fscommit compaction job: checkpoint gone" in err
    assert "its summary could not be stored" in err
