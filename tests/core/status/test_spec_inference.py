"""Spec inference: the shape rules on partition paths, the trigger from a checkpoint's state,
and the whole inference on a real stream whose watermark has not advanced yet."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from airflow_provider_fscommit.core.errors import PartitionPathError, SpecInferenceError
from airflow_provider_fscommit.core.partition.partition_spec import PartitionSpec
from airflow_provider_fscommit.core.partition.time_extractor import DefaultPartTimeExtractor
from airflow_provider_fscommit.core.spark.checkpoint import CheckpointState
from airflow_provider_fscommit.core.status.spec_inference import (
    infer_partitioning,
    infer_spec,
    infer_trigger,
)


def time_of(partitioning, directory: str) -> datetime:
    """The partition time the inferred pattern and formatter give a directory."""
    spec = PartitionSpec.parse(directory, partitioning.keys)
    extractor = DefaultPartTimeExtractor(
        partitioning.timestamp_pattern, partitioning.timestamp_formatter
    )
    return extractor.extract(spec.keys, spec.values)


# directories -> (keys, pattern, formatter, interval, the time of the first directory)
SHAPES = {
    "dt and hour": (
        ["dt=2026-11-20/hour=03", "dt=2026-11-20/hour=04"],
        ("dt", "hour"),
        "$dt $hour:00:00",
        None,
        timedelta(hours=1),
        datetime(2026, 11, 20, 3),
    ),
    "yyyyMMdd": (
        ["dt=20261120", "dt=20261121"],
        ("dt",),
        "$dt",
        "yyyyMMdd",
        timedelta(days=1),
        datetime(2026, 11, 20),
    ),
    "yyyyMMdd and an unpadded hour": (
        ["dt=20261120/hour=3", "dt=20261120/hour=14"],
        ("dt", "hour"),
        "$dt $hour:00:00",
        "yyyyMMdd H:mm:ss",
        timedelta(hours=1),
        datetime(2026, 11, 20, 3),
    ),
    "date and hr": (
        ["date=2026-11-20/hr=23"],
        ("date", "hr"),
        "$date $hr:00:00",
        None,
        timedelta(hours=1),
        datetime(2026, 11, 20, 23),
    ),
    "year, month, day and hour": (
        ["year=2026/month=11/day=20/hour=03", "year=2026/month=2/day=1/hour=00"],
        ("year", "month", "day", "hour"),
        "$year-$month-$day $hour:00:00",
        None,
        timedelta(hours=1),
        datetime(2026, 11, 20, 3),
    ),
    "country is not a time": (
        ["country=US/dt=2026-11-20", "country=FR/dt=2026-11-21"],
        ("country", "dt"),
        "$dt",
        None,
        timedelta(days=1),
        datetime(2026, 11, 20),
    ),
    "quarter hours": (
        ["dt=2026-11-20/hour=03/minute=15", "dt=2026-11-20/hour=03/minute=30"],
        ("dt", "hour", "minute"),
        "$dt $hour:$minute:00",
        None,
        timedelta(minutes=15),
        datetime(2026, 11, 20, 3, 15),
    ),
    "a lone minute: one-minute partitions": (
        ["dt=2026-11-20/hour=03/minute=25"],
        ("dt", "hour", "minute"),
        "$dt $hour:$minute:00",
        None,
        timedelta(minutes=1),
        datetime(2026, 11, 20, 3, 25),
    ),
    "slashes, escaped": (
        ["dt=2026%2F11%2F20/hour=03"],
        ("dt", "hour"),
        "$dt $hour:00:00",
        "yyyy/MM/dd HH:mm:ss",
        timedelta(hours=1),
        datetime(2026, 11, 20, 3),
    ),
    "a date and time in one value": (
        ["ts=2026-11-20 03%3A00%3A00", "ts=2026-11-20 04%3A00%3A00"],
        ("ts",),
        "$ts",
        None,
        timedelta(hours=1),
        datetime(2026, 11, 20, 3),
    ),
    "day first, told by a day past 12": (
        ["dt=25.11.2026", "dt=05.11.2026"],
        ("dt",),
        "$dt",
        "dd.MM.yyyy",
        timedelta(days=1),
        datetime(2026, 11, 25),
    ),
    "a date and hour in ten digits, the name says": (
        ["dt=2026112003"],
        ("dt",),
        "$dt",
        "yyyyMMddHH",
        timedelta(hours=1),
        datetime(2026, 11, 20, 3),
    ),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_the_values_shapes_give_the_pattern_formatter_and_interval(shape):
    directories, keys, pattern, formatter, interval, first = SHAPES[shape]
    found = infer_partitioning(directories)
    assert (found.keys, found.timestamp_pattern, found.timestamp_formatter) == (
        keys,
        pattern,
        formatter,
    )
    assert found.time_interval == interval
    assert time_of(found, directories[0]) == first
    assert found.directories == len(directories)


def test_epoch_like_and_other_keys_are_left_out_saying_why():
    found = infer_partitioning(["ts=1763607600/country=US", "ts=1763611200/country=FR"])
    assert (found.keys, found.timestamp_pattern, found.time_interval) == (
        ("ts", "country"),
        None,
        None,
    )
    assert "ts is left out (epoch seconds, e.g. 1763607600" in found.time_evidence
    assert "country is left out (not a time, e.g. 'FR')" in found.time_evidence
    assert found.summary == (
        "partition keys ts, country (no key holds a date: no partition time) inferred from "
        "2 staged directories"
    )
    milliseconds = infer_partitioning(["dt=2026-11-20/batch=1763607600000"])
    assert milliseconds.timestamp_pattern == "$dt"
    assert "batch is left out (epoch milliseconds" in milliseconds.time_evidence
    # An hour-like key whose name does not say so is not taken for the hour.
    bucket = infer_partitioning(["dt=2026-11-20/bucket=03"])
    assert bucket.timestamp_pattern == "$dt" and bucket.time_interval == timedelta(days=1)


AMBIGUOUS = {
    "day or month first": (["dt=05-11-2026"], ["dd-MM-yyyy", "MM-dd-yyyy"]),
    "date and hour or epoch seconds": (["ts=2026112003"], ["yyyyMMddHH", "epoch seconds"]),
    "two dates": (["dt=2026-11-20/load_date=2026-11-21"], ["dt", "load_date"]),
    "two hours": (["dt=2026-11-20/hour=03/hr=04"], ["hour", "hr"]),
}


@pytest.mark.parametrize("case", sorted(AMBIGUOUS))
def test_where_two_readings_fit_it_refuses_naming_both_and_the_option(case):
    directories, readings = AMBIGUOUS[case]
    with pytest.raises(SpecInferenceError) as refused:
        infer_partitioning(directories)
    message = str(refused.value)
    assert all(reading in message for reading in readings), message
    assert "will not guess" in message
    assert "partition.time-extractor.timestamp-pattern" in message
    assert "--timestamp-pattern '$" in message


def test_null_partitions_are_read_around():
    found = infer_partitioning(
        ["dt=2026-11-20/k=__HIVE_DEFAULT_PARTITION__", "dt=__HIVE_DEFAULT_PARTITION__/k=a%2Fb"]
    )
    assert (found.keys, found.timestamp_pattern) == (("dt", "k"), "$dt")
    assert "k is left out (not a time, e.g. 'a/b')" in found.time_evidence


def test_given_keys_are_checked_and_not_inferred():
    found = infer_partitioning(["dt=20261120/hour=03"], keys=("dt", "hour"))
    assert (found.keys_inferred, found.timestamp_formatter) == (False, "yyyyMMdd HH:mm:ss")
    assert found.summary == (
        "pattern '$dt $hour:00:00' and formatter 'yyyyMMdd HH:mm:ss' inferred from 1 staged "
        "directory"
    )
    with pytest.raises(PartitionPathError, match="has 2 level"):
        infer_partitioning(["dt=20261120/hour=03"], keys=("dt",))


@pytest.mark.parametrize(
    ("directories", "message"),
    [
        ([], "nothing is staged yet.*--partition-keys"),
        ([""], "the stream is not partitioned.*partitionBy"),
        (["part-0.parquet-dir/x"], "is not a Hive-style partition"),
        (
            ["dt=2026-11-20", "dt=2026-11-21/hour=01"],
            "disagree on the partition keys.*--partition-keys",
        ),
    ],
)
def test_directories_without_keys_to_read_are_refused(directories, message):
    with pytest.raises(SpecInferenceError, match=message):
        infer_partitioning(directories)


def checkpoint(batch: int | None, watermark: int = 0, next_watermark: int = 0) -> CheckpointState:
    return CheckpointState("/cp", batch, batch, watermark, next_watermark, None)


def test_the_trigger_follows_the_watermark_and_refuses_before_the_checkpoint_can_tell():
    advanced = infer_trigger(checkpoint(4, 1_700_000_000_000), 3, True)
    assert advanced.value == "partition-time"
    assert "event-time watermark (2023-11-14T22:13:20.000+00:00 at batch 4)" in advanced.evidence
    none = infer_trigger(checkpoint(1), 2, True)
    assert none.value == "process-time" and "does not call withWatermark" in none.evidence
    with pytest.raises(SpecInferenceError, match=r"partition-time .* process-time .*--trigger"):
        infer_trigger(checkpoint(0), 1, True)
    timeless = infer_trigger(checkpoint(4, 1), 3, False)
    assert timeless.value == "process-time" and "no partition key holds a date" in timeless.evidence


def test_a_stream_whose_watermark_has_not_advanced_yet_is_partition_time(first_batches_stream):
    """Its safe watermark is still 0 but the next batch's is set: it has a watermark."""
    stream = first_batches_stream
    inference = infer_spec(
        {"staging_path": stream.staging, "checkpoint_path": stream.checkpoint, "delay": "2 h"}
    )
    options = inference.options
    assert options == {
        "partition.time-extractor.timestamp-pattern": "$dt $hour:00:00",
        "partition_keys": "dt,hour",
        "sink.partition-commit.trigger": "partition-time",
        "format": "parquet",
    }
    assert "2026-11-20T00:10:00.000+00:00 at batch 1" in inference.findings[2].evidence


def test_what_is_given_wins_and_is_not_inferred(compacted_stream):
    """A time pattern given is the user's: neither pattern nor formatter is inferred; a
    Flink-only key in the given options is ignored as the spec ignores it."""
    stream = compacted_stream
    given = {
        "staging_path": stream.staging,
        "checkpoint_path": stream.checkpoint,
        "partition.time-extractor.timestamp-pattern": "$dt",
        "sink.partition-commit.trigger": "process-time",
        "connector": "filesystem",
    }
    inference = infer_spec(given)
    assert inference.options == {"partition_keys": "dt,hour", "format": "parquet"}
    (delay,) = [f for f in inference.findings if f.option == "sink.partition-commit.delay"]
    assert delay.value is None and "the partition time is given" in delay.evidence
    summary = inference.partitioning.summary
    assert summary == "partition keys dt, hour inferred from 8 staged directories"
    layout = infer_spec(given | {"partition_keys": "dt,hour"}, whole=False)
    assert layout.options == {} and not layout.partitioning.keys_inferred


def test_a_time_given_is_not_read_so_an_ambiguous_value_does_not_stop_it():
    found = infer_partitioning(["dt=05-11-2026"], time=False)
    assert (found.keys, found.timestamp_pattern, found.time_inferred) == (("dt",), None, False)
