"""Quarantining staged files: all or nothing, recorded once, with its reason, in the ledger."""

from __future__ import annotations

from pathlib import Path

import pytest

from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.errors import FsCommitError
from airflow_provider_fscommit.core.ledger.ledger import CommitLedger
from airflow_provider_fscommit.core.maintenance.quarantine import quarantine
from fscommit_dev.tables import hourly_table

HOUR = "dt=2026-11-20/hour=01"
OTHER_HOUR = "dt=2026-11-20/hour=02"


def test_files_are_recorded_once_and_a_wrong_one_records_nothing(compacted_stream, tmp_path):
    stream = compacted_stream
    table = tmp_path / "table"
    spec = TableSpec.from_options(
        hourly_table(stream.staging, stream.checkpoint, table_path=str(table))
    )
    (first,) = Path(stream.staging, HOUR).glob("*.parquet")
    (second,) = Path(stream.staging, OTHER_HOUR).glob("*.parquet")
    ledger = CommitLedger(str(table))

    with pytest.raises(FsCommitError, match=r"not a committed staged file of this table"):
        quarantine(spec, [str(first), str(tmp_path / "elsewhere.parquet")], "lost disk")
    with pytest.raises(FsCommitError, match=r"give the reason"):
        quarantine(spec, [str(first)], " ")
    assert not ledger.read(HOUR).quarantines  # all or nothing

    (recorded,) = quarantine(spec, [str(first), str(first)], "lost disk")
    assert (recorded.partition, recorded.new) == (HOUR, True)
    assert recorded.size == first.stat().st_size and recorded.uri.endswith(first.name)
    again = quarantine(spec, [recorded.uri, str(second)], "bad sector")
    assert [(f.partition, f.new) for f in again] == [(HOUR, False), (OTHER_HOUR, True)]
    ((_, kept),) = ledger.read(HOUR).quarantines.items()  # recorded once, first reason kept
    assert kept["reason"] == "lost disk" and [f["uri"] for f in kept["files"]] == [recorded.uri]
    ((_, other),) = ledger.read(OTHER_HOUR).quarantines.items()
    assert other["reason"] == "bad sector" and other["files"][0]["uri"].endswith(second.name)
    assert first.exists() and second.exists()  # the files stay for whoever investigates
