"""The staging table: a sink's committed files by partition, its orphans, Spark's hidden names."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from airflow_provider_fscommit.core.errors import SinkLogError
from airflow_provider_fscommit.core.spark.staging import StagedFile, StagingTable, is_hidden

DEFAULT = "__HIVE_DEFAULT_PARTITION__"


def write_log(staging: Path, batch: int, files: dict[str, int]) -> None:
    """A sink log batch file as Spark's FileStreamSinkLog writes it: ``v1``, one entry a line."""
    log = staging / "_spark_metadata"
    log.mkdir(parents=True, exist_ok=True)
    entries = [
        json.dumps(
            {
                "path": f"file://{staging}/{relative}",
                "size": size,
                "isDir": False,
                "modificationTime": 1000 + size,
                "blockReplication": 1,
                "blockSize": 1,
                "action": "add",
            },
            separators=(",", ":"),
        )
        for relative, size in files.items()
    ]
    (log / str(batch)).write_text("v1" + "".join("\n" + e for e in entries))


def data_file(staging: Path, relative: str, mtime_s: float = 1.0) -> None:
    path = staging / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x")
    os.utime(path, (mtime_s, mtime_s))


@pytest.mark.parametrize(
    ("name", "hidden"),
    [
        ("_SUCCESS", True),
        ("_spark_metadata", True),
        (".part-0.parquet.crc", True),
        ("part-0.parquet._COPYING_", True),
        ("_k=v", False),  # a partition directory of a key starting with '_'
        ("dt=2026-11-20", False),
        ("part-0.parquet", False),
    ],
)
def test_hidden_names_follow_sparks_file_index(name, hidden):
    assert is_hidden(name) is hidden


def test_committed_files_are_grouped_by_partition_with_their_values(tmp_path):
    staging = tmp_path / "staging"
    write_log(staging, 0, {"dt=1/hour=00/a.parquet": 10, f"dt=1/hour={DEFAULT}/b.parquet": 20})
    write_log(staging, 1, {"dt=1/hour=00/c.parquet": 30})
    table = StagingTable(str(staging), ("dt", "hour"), DEFAULT)
    snapshot = table.snapshot()
    partitions = table.partitions(snapshot)
    assert [(p.path, p.files, p.bytes) for p in partitions] == [
        ("dt=1/hour=00", 2, 40),
        (f"dt=1/hour={DEFAULT}", 1, 20),
    ]
    assert partitions[1].spec.values == ("1", None)
    assert table.partition(snapshot, "dt=1/hour=00") == partitions[0]
    assert table.partition(snapshot, "dt=1/hour=01") is None
    files = table.committed_files(snapshot, {"dt=1/hour=00", "dt=2/hour=00"})
    assert sorted(files["dt=1/hour=00"], key=lambda f: f.uri) == [
        StagedFile(f"file://{staging}/dt=1/hour=00/a.parquet", 10),
        StagedFile(f"file://{staging}/dt=1/hour=00/c.parquet", 30),
    ]
    assert files["dt=2/hour=00"] == []
    # What a run checks its table state against, and the few partitions it then judges.
    assert table.counts(snapshot) == {"dt=1/hour=00": 2, f"dt=1/hour={DEFAULT}": 1}
    fresh = StagingTable(str(staging), ("dt", "hour"), DEFAULT)
    assert fresh.partitions(snapshot, only=[f"dt=1/hour={DEFAULT}", "dt=2/hour=00"]) == [
        partitions[1]
    ]
    assert fresh.partitions(snapshot) == partitions


def test_a_logged_directory_spelt_otherwise_is_read_as_its_name_on_disk(tmp_path):
    """The log spells directories as URIs: an escaped value (``:`` is ``%3A`` on disk,
    ``%253A`` in the URI) or a dot segment is read one by one, as the others' plain
    spelling is cut from the column; every route gives the name on disk."""
    staging = tmp_path / "staging"
    write_log(staging, 0, {"dt=1/hour=00/a.parquet": 10, "dt=1/hour=01/b.parquet": 20})
    write_log(staging, 1, {"dt=1/hour=a%253Ab/c.parquet": 30, "dt=1/./hour=02/d.parquet": 40})
    table = StagingTable(str(staging), ("dt", "hour"), DEFAULT)
    first = table.snapshot()
    expected = {"dt=1/hour=00": 1, "dt=1/hour=01": 1, "dt=1/hour=a%3Ab": 1, "dt=1/hour=02": 1}
    assert table.counts(first) == expected
    assert table.partition(first, "dt=1/hour=a%3Ab") is not None
    assert [p.path for p in table.partitions(first)] == sorted(expected)
    # A later batch's directory beside them.
    write_log(staging, 2, {"dt=1/hour=03/e.parquet": 50})
    assert table.counts(table.snapshot()) == expected | {"dt=1/hour=03": 1}


def test_a_log_listing_files_outside_the_staging_directory_is_refused(tmp_path):
    """The log holds absolute paths: a staging directory copied elsewhere points back."""
    original = tmp_path / "original"
    write_log(original, 0, {"dt=1/hour=00/a.parquet": 10})
    copy = tmp_path / "copy"
    (copy / "_spark_metadata").mkdir(parents=True)
    (copy / "_spark_metadata" / "0").write_bytes((original / "_spark_metadata" / "0").read_bytes())
    table = StagingTable(str(copy), ("dt", "hour"), DEFAULT)
    for look in (table.partitions, table.counts):
        with pytest.raises(SinkLogError, match=r"lists committed files outside it.*was moved"):
            look(table.snapshot())


def test_unlogged_files_are_orphans_only_when_older_than_the_latest_commit(tmp_path):
    staging = tmp_path / "staging"
    write_log(staging, 0, {"dt=1/hour=00/a.parquet": 10, "dt=1/hour=00/gone.parquet": 10})
    data_file(staging, "dt=1/hour=00/a.parquet")
    data_file(staging, "dt=1/hour=00/failed-attempt.parquet", mtime_s=5)
    data_file(staging, "dt=1/hour=00/running-batch.parquet", mtime_s=50)
    data_file(staging, "dt=1/hour=00/_SUCCESS")  # hidden: never an orphan
    table = StagingTable(str(staging), ("dt", "hour"), DEFAULT)
    snapshot = table.snapshot()
    report = table.orphans(snapshot, lambda: (snapshot, 10_000))  # last commit at 10 s
    assert report.orphan_files == ["dt=1/hour=00/failed-attempt.parquet"]
    assert report.missing_files == ["dt=1/hour=00/gone.parquet"]
    assert report.in_flight_files == ["dt=1/hour=00/running-batch.parquet"]


def test_orphans_are_looked_for_in_the_partitions_asked_only(tmp_path):
    """What ``fscommit status`` asks by default: the partitions not committed yet."""
    staging = tmp_path / "staging"
    write_log(staging, 0, {"dt=1/hour=00/a.parquet": 10, "dt=1/hour=01/b.parquet": 10})
    write_log(staging, 1, {"dt=1/hour=01/gone.parquet": 10})
    data_file(staging, "dt=1/hour=00/a.parquet")
    data_file(staging, "dt=1/hour=00/failed-long-ago.parquet", mtime_s=5)
    data_file(staging, "dt=1/hour=01/b.parquet")
    data_file(staging, "dt=1/hour=01/failed-attempt.parquet", mtime_s=5)
    table = StagingTable(str(staging), ("dt", "hour"), DEFAULT)
    snapshot = table.snapshot()
    report = table.orphans(snapshot, lambda: (snapshot, 10_000), {"dt=1/hour=01"})
    assert report.orphan_files == ["dt=1/hour=01/failed-attempt.parquet"]
    assert report.missing_files == ["dt=1/hour=01/gone.parquet"]
    whole = table.orphans(snapshot, lambda: (snapshot, 10_000))
    assert whole.orphan_files == [
        "dt=1/hour=00/failed-long-ago.parquet",
        "dt=1/hour=01/failed-attempt.parquet",
    ]
    nothing = table.orphans(snapshot, lambda: (snapshot, 10_000), set())
    assert (nothing.orphan_files, nothing.missing_files) == ([], [])


def test_a_few_partitions_of_a_big_staging_directory_are_listed_one_by_one(tmp_path, monkeypatch):
    """A listing of the whole directory costs a request per 1,000 files on S3: past that,
    the partitions asked are listed each when that is fewer requests (so a year-old
    table's status costs what a day-old one's does)."""
    from airflow_provider_fscommit.core.spark import staging as staging_module
    from fscommit_dev.counting_fs import counting

    staging = tmp_path / "staging"
    files = {f"dt={d}/hour={h:02d}/part-0.parquet": 10 for d in range(60) for h in range(24)}
    write_log(staging, 0, files)
    for relative in files:
        data_file(staging, relative)
    data_file(staging, "dt=59/hour=23/failed-attempt.parquet", mtime_s=5)
    table = StagingTable(str(staging), ("dt", "hour"), DEFAULT)
    snapshot = table.snapshot()
    with counting(monkeypatch, staging_module) as calls:
        report = table.orphans(snapshot, lambda: (snapshot, 10_000), {"dt=59/hour=23"})
        assert calls == [("list", f"{staging}/dt=59/hour=23")]
        calls.clear()
        both = table.orphans(
            snapshot, lambda: (snapshot, 10_000), {"dt=59/hour=23", "dt=0/hour=00"}
        )
        # 1,440 files are two pages: for two partitions, the whole listing costs the same.
        assert calls == [("list", str(staging))]
    assert report.orphan_files == both.orphan_files == ["dt=59/hour=23/failed-attempt.parquet"]
