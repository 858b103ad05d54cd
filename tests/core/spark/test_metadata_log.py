"""Spark's metadata logs as the checkpoint and sink-log readers see them: batch files in
order, a checked version header, and reads retried while a live query changes the log."""

from __future__ import annotations

import pyarrow.fs as pafs
import pytest

from airflow_provider_fscommit.core.errors import SinkLogError
from airflow_provider_fscommit.core.spark.metadata_log import (
    NEWEST_SPARK,
    LogChanged,
    list_log,
    read_consistently,
    split_version,
)


def test_batch_files_are_listed_by_batch_id_and_everything_else_is_left_out(tmp_path):
    log = tmp_path / "_spark_metadata"
    log.mkdir()
    for name in ("10", "9.compact", "2", ".11.tmp", "11.crc", "README"):
        (log / name).write_text("v1\n{}")
    (log / "12").mkdir()  # not a file
    files = list_log(pafs.LocalFileSystem(), str(log))
    assert [(f.batch_id, f.compact) for f in files] == [(2, False), (9, True), (10, False)]
    assert files[0].path == str(log / "2") and files[0].size == len("v1\n{}")
    assert files[0].mtime_ms > 0


def test_a_missing_log_directory_is_none_not_an_empty_log(tmp_path):
    assert list_log(pafs.LocalFileSystem(), str(tmp_path / "absent")) is None
    (tmp_path / "empty").mkdir()
    assert list_log(pafs.LocalFileSystem(), str(tmp_path / "empty")) == []


def test_the_version_header_is_checked_and_the_body_returned():
    assert split_version(b"v1\n{}\n{}", "log/3", 1, SinkLogError) == (1, b"{}\n{}")
    with pytest.raises(SinkLogError, match=r"log/3 is not a Spark metadata log file.*restore"):
        split_version(b'{"path"', "log/3", 1, SinkLogError)
    with pytest.raises(SinkLogError, match=rf"log/3 uses log format v3.*up to {NEWEST_SPARK}"):
        split_version(b"v3\n{}", "log/3", 2, SinkLogError)


def test_a_read_is_retried_while_the_log_changes_and_a_lasting_change_is_reported():
    attempts = []

    def settles_on_the_third_look():
        attempts.append(1)
        if len(attempts) < 3:
            raise LogChanged("compaction half-way")
        return "read"

    assert read_consistently(settles_on_the_third_look, SinkLogError) == "read"
    assert len(attempts) == 3

    def always_gone():
        raise FileNotFoundError(2, "gone", "log/7")

    with pytest.raises(SinkLogError, match=r"log/7 kept disappearing.*other than the streaming"):
        read_consistently(always_gone, SinkLogError)
