"""The safe watermark is the one Spark applied in its latest committed batch."""

from __future__ import annotations

import shutil
from datetime import datetime
from pathlib import Path

import pytest

from airflow_provider_fscommit.core.errors import CheckpointError
from airflow_provider_fscommit.core.spark.checkpoint import CheckpointReader, read_checkpoint


@pytest.mark.parametrize("fixture", ["compacted_stream", "late_stateful_stream", "shanghai_stream"])
def test_watermark_and_batch_match_what_spark_reports(fixture, request):
    table = request.getfixturevalue(fixture)
    state = read_checkpoint(table.checkpoint)
    assert state.latest_committed_batch == table.progress[-1]["batchId"]
    assert state.watermark_ms == table.last_watermark_ms
    assert state.has_watermark
    assert state.last_commit_time_ms is not None


def test_old_batches_are_purged_and_log_format_v2_is_read(late_stateful_stream):
    offsets = sorted(Path(late_stateful_stream.checkpoint, "offsets").iterdir())
    assert "0" not in [p.name for p in offsets]  # minBatchesToRetain purged the first ones
    state = read_checkpoint(late_stateful_stream.checkpoint)
    for log in ("offsets", "commits"):
        latest = Path(late_stateful_stream.checkpoint, log, str(state.latest_committed_batch))
        assert latest.read_text().startswith("v2"), log
    # Five input files, and the stateful query ran a no-data batch to advance the watermark.
    assert state.latest_committed_batch == 5 == late_stateful_stream.progress[-1]["batchId"]


def test_the_watermark_passed_a_time_when_the_first_batch_past_it_was_committed(
    compacted_stream,
):
    """Freshness counts from there: the safe watermark is the latest committed batch's."""
    reader = CheckpointReader(compacted_stream.checkpoint)
    state = reader.read()
    commits = Path(compacted_stream.checkpoint, "commits")
    retained = sorted(int(p.name) for p in commits.iterdir() if p.name.isdigit())
    ran_with = {  # Spark's progress: the watermark each batch ran with
        p["batchId"]: _epoch_ms(p["eventTime"]["watermark"]) for p in compacted_stream.progress
    }
    times = sorted({*ran_with.values(), -1})
    for time_ms in times:
        first = next((b for b in retained if ran_with[b] > time_ms), None)
        expected = None if first is None else (commits / str(first)).stat().st_mtime_ns // 10**6
        assert reader.watermark_passed_ms(state, time_ms) == expected, time_ms
    assert reader.watermark_passed_ms(state, times[-1]) is None  # not passed yet
    assert reader.watermark_passed_ms(state, -1) is not None


def _epoch_ms(iso: str) -> int:
    return int(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000)


def test_a_batch_planned_but_not_committed_does_not_count(compacted_stream, tmp_path):
    copy = Path(shutil.copytree(compacted_stream.checkpoint, tmp_path / "ckpt"))
    committed = read_checkpoint(str(copy))
    latest = committed.latest_committed_batch
    offsets = (copy / "offsets" / str(latest)).read_text()
    (copy / "offsets" / str(latest + 1)).write_text(
        offsets.replace('"batchWatermarkMs":', '"batchWatermarkMs":9', 1)
    )
    # A crash leaves hidden temporary files and checksums; they are not batches.
    (copy / "commits" / f".{latest + 1}.0b2c.tmp").write_text("v1\n{}")
    state = read_checkpoint(str(copy))
    assert state.latest_committed_batch == latest
    assert state.latest_planned_batch == latest + 1
    assert state.watermark_ms == committed.watermark_ms


def test_query_without_withwatermark_has_no_watermark(spark, tmp_path):
    from fscommit_dev.streams import StreamingTable, row

    table = StreamingTable(tmp_path, watermark_delay=None)
    table.add_batches([row(1, "2026-11-20T01:00:00Z")], [row(2, "2026-11-20T02:00:00Z")])
    table.run(spark)
    state = read_checkpoint(table.checkpoint)
    assert state.latest_committed_batch == 1
    assert not state.has_watermark


def test_no_batch_committed_yet(tmp_path):
    (tmp_path / "offsets").mkdir()
    (tmp_path / "offsets" / "0").write_text('v1\n{"batchWatermarkMs":0}\n0')
    (tmp_path / "commits").mkdir()
    state = read_checkpoint(str(tmp_path))
    assert state.latest_committed_batch is None
    assert state.latest_planned_batch == 0
    assert state.watermark_ms is None


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (lambda p: shutil.rmtree(p), "does not exist; point the checkpoint path"),
        (lambda p: shutil.rmtree(p / "offsets"), "has no offsets/ directory"),
        (
            lambda p: (p / "commits" / "9").write_text('v1\n{"nextBatchWatermarkMs":1}'),
            "offsets/9 does not",
        ),
        (lambda p: _latest(p, "commits").write_text('v1\n{"nextBatch'), "no JSON metadata line"),
        (lambda p: _latest(p, "offsets").write_text(""), "not a Spark metadata log file"),
        (lambda p: _latest(p, "commits").write_text("v4\n{}"), r"commits/\d+ uses log format v4"),
        (
            lambda p: _latest(p, "offsets").write_text("v3\n{}"),
            r"offsets/\d+ uses log format v3, which no Spark up to 4\.3 writes \(they write v1 "
            r"to v2 here\): the query ran on a newer Spark",
        ),
        (
            lambda p: _latest(p, "offsets").write_text('v1\n{"batchWatermarkMs":"x"}'),
            "not a number",
        ),
    ],
)
def test_damaged_checkpoints_get_a_clear_error(compacted_stream, tmp_path, setup, message):
    copy = Path(shutil.copytree(compacted_stream.checkpoint, tmp_path / "ckpt"))
    setup(copy)
    with pytest.raises(CheckpointError, match=message):
        read_checkpoint(str(copy))


def _latest(checkpoint: Path, log: str) -> Path:
    return max(
        (p for p in (checkpoint / log).iterdir() if p.name.isdigit()), key=lambda p: int(p.name)
    )
