"""One process's readers of a table, shared by its waiting partitions and its status page."""

from __future__ import annotations

import time

from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.spark import checkpoint, sink_log
from airflow_provider_fscommit.core.status.table_report import read_table_report
from airflow_provider_fscommit.core.status.table_watch import MAX_WATCHED_TABLES, table_watch
from airflow_provider_fscommit.core.storage.object_store import S3Settings, use_s3_settings
from fscommit_dev.counting_fs import counting
from fscommit_dev.tables import hourly_table
from tests.support.compaction import table_options


def test_the_waiting_partitions_of_a_table_share_one_watch_per_identity(tmp_path):
    spec = TableSpec.from_options(hourly_table(str(tmp_path / "s"), str(tmp_path / "c")))
    watch = table_watch(spec)
    assert table_watch(TableSpec.from_options(spec.to_dict())) is watch
    with use_s3_settings(S3Settings(endpoint_url="http://127.0.0.1:9")):
        assert table_watch(spec) is not watch
    others = [
        TableSpec.from_options(hourly_table(str(tmp_path / f"s{i}"), str(tmp_path / "c")))
        for i in range(MAX_WATCHED_TABLES)
    ]
    for other in others:
        table_watch(other)
    assert table_watch(spec) is not watch  # the least recently looked at was forgotten


def test_a_shared_report_is_the_fresh_one_and_reads_only_what_is_new(
    compacted_stream, tmp_path, monkeypatch
):
    """The status page's reads in a long-lived api-server: the same report as a fresh read,
    and a second look opens no log file when the stream has not moved."""
    spec = TableSpec.from_options(table_options(compacted_stream, str(tmp_path / "table")))
    now = int(time.time() * 1000)
    fresh = read_table_report(spec, now_ms=now).to_dict()
    with counting(monkeypatch, checkpoint, sink_log) as seen:
        assert read_table_report(spec, now_ms=now, shared=True).to_dict() == fresh
        first = [path for operation, path in seen if operation.startswith("open")]
        seen.clear()
        assert read_table_report(spec, now_ms=now, shared=True).to_dict() == fresh
        again = [path for operation, path in seen if operation.startswith("open")]
    assert any("_spark_metadata" in path for path in first) and again == []
