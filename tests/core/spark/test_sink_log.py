"""The committed file set is exactly the one Spark's own readers use."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from airflow_provider_fscommit.core.errors import SinkLogError
from airflow_provider_fscommit.core.spark import sink_log
from airflow_provider_fscommit.core.spark.sink_log import FileSinkLog
from airflow_provider_fscommit.core.storage.filesystem import normalize_uri
from fscommit_dev.streams import StreamingTable, row


def spark_committed_files(spark, staging: str) -> set[str]:
    """The files ``spark.read.parquet(staging)`` reads (it goes through the sink log)."""
    return {str(normalize_uri(uri)) for uri in spark.read.parquet(staging).inputFiles()}


def our_files(staging: str) -> set[str]:
    snapshot = FileSinkLog(staging).read()
    return {str(normalize_uri(uri)) for uri in snapshot.files["path"].to_pylist()}


@pytest.mark.parametrize(
    "fixture", ["compacted_stream", "late_stateful_stream", "awkward_stream", "killed_stream"]
)
def test_committed_files_equal_sparks_input_files(fixture, request, spark):
    table = request.getfixturevalue(fixture)
    assert our_files(table.staging) == spark_committed_files(spark, table.staging)


def test_compacted_log_with_purged_deltas(compacted_stream):
    names = {p.name for p in Path(compacted_stream.staging, "_spark_metadata").iterdir()}
    assert "5.compact" in names and "0" not in names  # compacted, old deltas deleted
    snapshot = FileSinkLog(compacted_stream.staging).read()
    assert snapshot.latest_batch == 7
    assert snapshot.files.num_rows == len(list(Path(compacted_stream.staging).rglob("*.parquet")))


def test_incremental_read_parses_only_what_was_appended(spark, tmp_path, monkeypatch):
    parsed: list[int] = []
    real_parse = sink_log._parse_lines
    monkeypatch.setattr(
        sink_log,
        "_parse_lines",
        lambda lines, path: (parsed.append(len(lines)), real_parse(lines, path))[1],
    )
    table = StreamingTable(tmp_path)

    def batch(b: int) -> list[dict]:  # six files per batch: one per hour partition
        return [row(10 * b + h, f"2026-11-20T{h:02d}:{b:02d}:00Z") for h in range(6)]

    table.add_batches(*[batch(b) for b in range(4)])
    table.run(spark)  # batches 0-3: 2.compact, 3
    log = Path(table.staging, "_spark_metadata")
    old_compact_size = (log / "2.compact").stat().st_size
    reader = FileSinkLog(table.staging)
    first = reader.read()
    parsed.clear()
    table.add_batches(*[batch(b) for b in range(4, 7)])
    table.run(spark)  # batches 4-6: 4, 5.compact, 6
    second = reader.read()
    assert second.latest_batch == 6
    # Only the compact file's new tail and delta 6 were parsed, not the whole compact file.
    appended = (log / "5.compact").stat().st_size - old_compact_size
    assert 0 < sum(parsed) <= appended + (log / "6").stat().st_size
    assert set(second.files["path"].to_pylist()) == set(
        FileSinkLog(table.staging).read().files["path"].to_pylist()
    )
    assert set(first.files["path"].to_pylist()) < set(second.files["path"].to_pylist())
    parsed.clear()
    assert reader.read().files.num_rows == second.files.num_rows
    assert parsed == []  # nothing changed, nothing parsed


def _entry(path: str, action: str = "add", size: int = 10, modified: int = 1) -> str:
    return json.dumps(
        {
            "path": path,
            "size": size,
            "isDir": False,
            "modificationTime": modified,
            "blockReplication": 1,
            "blockSize": 1,
            "action": action,
        },
        separators=(",", ":"),
    )


def _write(log: Path, name: str, entries: list[str]) -> None:
    log.mkdir(parents=True, exist_ok=True)
    (log / name).write_text("v1" + "".join("\n" + e for e in entries))


@pytest.fixture
def synthetic(tmp_path) -> tuple[Path, Path]:
    staging = tmp_path / "staging"
    return staging, staging / "_spark_metadata"


def test_delete_actions_remove_files(synthetic):
    staging, log = synthetic
    a, b = f"file://{staging}/dt=1/a.parquet", f"file://{staging}/dt=1/b.parquet"
    _write(log, "0", [_entry(a), _entry(b)])
    _write(log, "1", [_entry(a, "delete")])
    assert FileSinkLog(str(staging)).read().files["path"].to_pylist() == [b]


def summary_from_files(files) -> dict[str, tuple[int, int, int, int]]:
    """Independent oracle: files, bytes, first and last modification per directory."""
    out: dict[str, tuple[int, int, int, int]] = {}
    for entry in files.to_pylist():
        directory = entry["path"].rpartition("/")[0]
        modified = entry["modificationTime"]
        count, size, first, last = out.get(directory, (0, 0, modified, modified))
        first, last = min(first, modified), max(last, modified)
        out[directory] = (count + 1, size + entry["size"], first, last)
    return out


def summary_of(snapshot) -> dict[str, tuple[int, int, int, int]]:
    rows = snapshot.directories.to_pylist()
    return {
        r["dir"]: (r["files"], r["bytes"], r["first_modified"], r["last_modified"]) for r in rows
    }


def test_a_long_lived_reader_summarizes_partitions_as_a_fresh_one(synthetic):
    """A sensor keeps one reader for hours: new deltas, deletes and compacts keep it exact."""
    staging, log = synthetic
    uri = [f"file://{staging}/dt={d}/{n}.parquet" for d, n in ("1a", "1b", "2c", "2d", "3e")]
    reader = FileSinkLog(str(staging))
    batches = [
        ("0", [_entry(uri[0], size=10, modified=10), _entry(uri[2], size=30, modified=30)]),
        ("1", [_entry(uri[1], size=20, modified=20)]),  # late file for dt=1
        (
            "2.compact",
            [
                _entry(uri[0], size=10, modified=10),
                _entry(uri[2], size=30, modified=30),
                _entry(uri[1], size=20, modified=20),
            ],
        ),
        ("3", [_entry(uri[3], size=40, modified=40), _entry(uri[0], "delete")]),
        ("4", [_entry(uri[4], size=50, modified=50)]),
        (
            "5.compact",
            [_entry(u, size=s, modified=s) for u, s in zip(uri[1:], (20, 30, 40, 50), strict=True)],
        ),
    ]
    for name, entries in batches:
        _write(log, name, entries)
        snapshot = reader.read()
        assert summary_of(snapshot) == summary_from_files(snapshot.files), name
        assert summary_of(snapshot) == summary_of(FileSinkLog(str(staging)).read()), name
    assert summary_of(snapshot)[f"file://{staging}/dt=1"] == (1, 20, 20, 20)  # a deleted
    assert summary_of(snapshot)[f"file://{staging}/dt=2"] == (2, 70, 30, 40)


def test_hidden_files_and_checksums_are_not_batches(synthetic):
    staging, log = synthetic
    _write(log, "0", [_entry(f"file://{staging}/dt=1/a.parquet")])
    (log / ".0.crc").write_bytes(b"\x00crc")
    (log / ".1.7f3e.tmp").write_text("v1\n{garbage")
    snapshot = FileSinkLog(str(staging)).read()
    assert snapshot.latest_batch == 0 and snapshot.files.num_rows == 1


def test_a_compact_that_is_not_an_extension_is_read_whole(synthetic):
    staging, log = synthetic
    a, b, c = (f"file://{staging}/dt=1/{n}.parquet" for n in "abc")
    _write(log, "0", [_entry(a)])
    _write(log, "1", [_entry(b)])
    reader = FileSinkLog(str(staging))
    _write(log, "2.compact", [_entry(a), _entry(b)])
    assert sorted(reader.read().files["path"].to_pylist()) == [a, b]
    _write(log, "3", [_entry(a, "delete")])
    _write(log, "4", [_entry(c)])
    _write(log, "5.compact", [_entry(b), _entry(c)])  # compaction dropped a: no prefix match
    for name in ("3", "4"):
        (log / name).unlink()
    assert sorted(reader.read().files["path"].to_pylist()) == [b, c]


def test_empty_log_has_no_files(synthetic):
    staging, log = synthetic
    log.mkdir(parents=True)
    snapshot = FileSinkLog(str(staging)).read()
    assert snapshot.latest_batch is None and snapshot.files.num_rows == 0


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (lambda s, log: None, "does not exist; point the staging path"),
        (lambda s, log: s.mkdir(), "has no _spark_metadata log"),
        (
            lambda s, log: (_write(log, "0", []), _write(log, "2", [])),
            r"missing batch file\(s\) \[1\]",
        ),
        (
            lambda s, log: (_write(log, "2.compact", []), _write(log, "4", [])),
            r"\[3\] between compact 2",
        ),
        (
            lambda s, log: _write(log, "0", ['{"path":"x", "size":']),
            "0 is not a valid sink log file",
        ),
        (
            lambda s, log: _write(log, "0", ['{"path":"x","size":1,"action":"add"}']),
            "0 has entries without 'modificationTime', so it is not a sink log written by Spark",
        ),
        (
            lambda s, log: (log.mkdir(parents=True), (log / "0").write_text("")),
            "not a Spark metadata",
        ),
        (
            lambda s, log: (log.mkdir(parents=True), (log / "0").write_text("v2\n")),
            "v2, which no Spark up to",
        ),
    ],
)
def test_broken_logs_get_a_clear_error(synthetic, setup, message):
    staging, log = synthetic
    setup(staging, log)
    with pytest.raises(SinkLogError, match=message):
        FileSinkLog(str(staging)).read()
