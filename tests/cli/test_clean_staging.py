"""``fscommit clean-staging``: what a run blocked by another run tells the user."""

from __future__ import annotations

import json
import threading

from airflow_provider_fscommit.cli.main import main
from airflow_provider_fscommit.core.ledger.lock import TableLock
from tests.support.compaction import clean_args


def test_a_run_blocked_by_another_says_what_it_waits_for(hourly_stream, tmp_path, capsys):
    stream, table = hourly_stream, tmp_path / "table"
    held, release = threading.Event(), threading.Event()

    def other_run() -> None:
        with TableLock(str(table), "a scheduled compaction"):
            held.set()
            release.wait(timeout=60)

    holder = threading.Thread(target=other_run)
    holder.start()
    held.wait(timeout=60)
    threading.Timer(2.0, release.set).start()
    try:
        assert main(clean_args(stream, table, "--older-than", "7d")) == 0
    finally:
        release.set()
        holder.join()
    out, err = capsys.readouterr()
    assert json.loads(out)["count"] == 0
    assert "fscommit: waiting for the table lock" in err and "a scheduled compaction" in err
