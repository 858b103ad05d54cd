"""``fscommit init`` on the suite's real streams: the spec it writes reads each table as the
hand-written spec does, and ``status`` and ``plan`` infer the same way when not told."""

from __future__ import annotations

import json
import os
import re
import subprocess
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from airflow_provider_fscommit.cli.main import main
from airflow_provider_fscommit.core.config import options as o
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.factory import BROKEN_SPEC_TAG, partition_commit_dags
from fscommit_dev.streams import StreamingTable, hourly_batches, row
from fscommit_dev.tables import hourly_table, table_flags, with_options
from tests.support.compaction import FSCOMMIT

# Fields of a status report that change with the moment it is read.
_MOMENT = ("now_ms", "last_batch_age_s", "watermark_lag_s")


@pytest.fixture(scope="module")
def orc_daily_stream(spark, tmp_path_factory) -> StreamingTable:
    """ORC, partitioned by day alone (a day's span, not an hour's)."""
    stream = StreamingTable(
        tmp_path_factory.mktemp("init-orc"), partition_by=("dt",), file_format="orc"
    )
    stream.add_batches([row(1, "2026-11-20T01:00:00Z")], [row(2, "2026-11-21T03:00:00Z")])
    stream.run(spark)
    return stream


@pytest.fixture(scope="module")
def csv_stream_without_watermark(spark, tmp_path_factory) -> StreamingTable:
    """CSV from a query that never calls withWatermark: process-time is the only trigger."""
    stream = StreamingTable(
        tmp_path_factory.mktemp("init-csv"), watermark_delay=None, file_format="csv"
    )
    stream.add_batches(*hourly_batches("2026-11-20", range(2)))
    stream.run(spark)
    return stream


@pytest.fixture(scope="module")
def country_stream(spark, tmp_path_factory) -> StreamingTable:
    """Partitioned by a key that is no time (k: the country, say): no partition time."""
    stream = StreamingTable(tmp_path_factory.mktemp("init-country"), partition_by=("k",))
    stream.add_batches([row(1, "2026-11-20T01:00:00Z", k="US"), row(2, "2026-11-20T01:00:00Z")])
    stream.run(spark)
    return stream


# Each stream's table as a person would write it (the hourly table's options, changed; None
# drops one), and what init is told (the time zone is not in the stream: the query's
# session time zone is nowhere in its output).
STREAMS: dict[str, tuple[dict[str, Any], list[str]]] = {
    "compacted_stream": ({}, []),
    "late_stateful_stream": ({}, []),
    "shanghai_stream": (
        {"sink.partition-commit.watermark-time-zone": "Asia/Shanghai"},
        ["--time-zone", "Asia/Shanghai"],
    ),
    "awkward_stream": (
        {
            "partition_keys": "dt,k",
            "partition.time-extractor.timestamp-pattern": "$dt",
            "sink.partition-commit.delay": "1 d",
        },
        [],
    ),
    "orc_daily_stream": (
        {
            "partition_keys": "dt",
            "partition.time-extractor.timestamp-pattern": "$dt",
            "sink.partition-commit.delay": "1 d",
        },
        [],
    ),
    "csv_stream_without_watermark": ({"sink.partition-commit.trigger": "process-time"}, []),
    "country_stream": (
        {
            "partition_keys": "k",
            "partition.time-extractor.timestamp-pattern": None,
            "sink.partition-commit.trigger": "process-time",
            "sink.partition-commit.delay": None,
        },
        [],
    ),
}


def report(capsys, *argv: str) -> dict[str, Any]:
    assert main(["status", *argv, "--stall-timeout", "365 d", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    for name in _MOMENT:
        document.pop(name)
    return document


@pytest.mark.parametrize("fixture", sorted(STREAMS))
def test_the_inferred_spec_reads_the_table_as_the_hand_written_one(
    fixture, request, tmp_path, capsys
):
    stream = request.getfixturevalue(fixture)
    changes, told = STREAMS[fixture]
    # init writes the paths as absolute URIs: the same table, from any directory.
    uris = (Path(stream.staging).as_uri(), Path(stream.checkpoint).as_uri())
    hourly = with_options(hourly_table(*uris), **changes)
    hand = {name: value for name, value in hourly.items() if value is not None}
    path = tmp_path / "spec.yaml"
    argv = ["init", "--staging-path", stream.staging, "--checkpoint-path", stream.checkpoint]
    assert main([*argv, *told, "-o", str(path)]) == 0
    printed = capsys.readouterr().out
    assert f"Wrote {path}" in printed and "partition_keys" in printed

    inferred, written = TableSpec.from_file(str(path)), TableSpec.from_options(hand)
    for field in ("partition_keys", "trigger", "delay", "watermark_time_zone"):
        assert getattr(inferred, field) == getattr(written, field), field
    assert inferred.format == stream.file_format
    text = path.read_text()
    if fixture == "country_stream":
        assert "# partition.time-extractor.timestamp-pattern: (none)\n" in text
        assert "k is left out (not a time, e.g." in text
    assert report(capsys, "--spec", str(path)) == report(capsys, *table_flags(hand))


def test_the_spec_file_says_the_evidence_and_loads_back(compacted_stream, tmp_path, capsys):
    table = tmp_path / "table"
    path = tmp_path / "events.yaml"
    argv = ["init", "--staging-path", compacted_stream.staging, "--checkpoint-path"]
    argv += [compacted_stream.checkpoint, "--table-path", str(table), "--policy", "success-file"]
    assert main([*argv, "-o", str(path)]) == 0
    text = path.read_text()
    assert (
        "# Read from the 8 staged directories the sink log lists, e.g. dt=2026-11-20/hour=00.\n"
        in text
    )
    assert "partition_keys: dt,hour\n" in text
    assert (
        "# The partition time: dt holds a date (yyyy-MM-dd, e.g. 2026-11-20), hour the hour (00).\n"
        in text
    )
    assert "# The checkpoint has an event-time watermark (2026-11-20T" in text
    assert "sink.partition-commit.delay: 1 h\n" in text
    assert "# partition.time-interval: 1 h\n" in text
    assert "format: parquet\n" in text
    assert (
        f"table_path: {table.as_uri()}\n" in text
        and "sink.partition-commit.policy.kind: success-file\n" in text
    )
    options = yaml.safe_load(text)
    assert options["partition.time-extractor.timestamp-pattern"] == "$dt $hour:00:00"
    # The DAG begins at the first partition the stream holds, and is named after the file.
    assert options["dag"] == {"start_date": datetime(2026, 11, 20), "dag_id": "fscommit_events"}
    assert (
        "  # The first partition the stream holds, dt=2026-11-20/hour=00 (of 8 staged), on the\n"
        in text
    )
    spec = TableSpec.from_file(str(path))
    assert (spec.table_path, [str(k) for k in spec.policy_kind]) == (
        table.as_uri(),
        ["success-file"],
    )
    capsys.readouterr()

    # Never over an existing spec; to stdout without -o, the evidence on stderr.
    assert main([*argv, "-o", str(path)]) == 1
    assert "exists; fscommit init does not overwrite a spec" in capsys.readouterr().err
    assert main([*argv, "-o", str(tmp_path / "no-such-dir" / "spec.yaml")]) == 1
    assert "cannot write the spec file " in capsys.readouterr().err
    assert main(argv) == 0
    out, err = capsys.readouterr()
    # Without -o the file's name (which names the DAG) is not known yet.
    assert yaml.safe_load(out) == options | {"dag": {"start_date": options["dag"]["start_date"]}}
    assert "  # dag_id: fscommit_<this file's name> unless set\n" in out
    assert "Inferred from " in err and "  sink.partition-commit.trigger: partition-time" in err


def test_init_json_names_each_option_and_its_evidence(csv_stream_without_watermark, capsys):
    stream = csv_stream_without_watermark
    argv = [
        "init",
        "--staging-path",
        stream.staging,
        "--checkpoint-path",
        stream.checkpoint,
        "--json",
    ]
    assert main(argv) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["options"]["sink.partition-commit.trigger"] == "process-time"
    assert document["options"]["format"] == "csv"
    (trigger,) = [
        f
        for f in document["inference"]["findings"]
        if f["option"] == "sink.partition-commit.trigger"
    ]
    assert "no event-time watermark (the query does not call withWatermark)" in trigger["evidence"]


def test_every_command_infers_what_it_is_not_told_as_init_does_and_says_so(
    compacted_stream, tmp_path, capsys
):
    stream = compacted_stream
    table = ["--staging-path", stream.staging, "--checkpoint-path", stream.checkpoint]
    inferred = report(capsys, *table)
    assert inferred.pop("inferred")["partitioning"]["timestamp_pattern"] == "$dt $hour:00:00"
    # The delay too (1 h, the partitions' span), as init infers it: the same states.
    assert inferred == report(capsys, *table_flags(hourly_table(stream.staging, stream.checkpoint)))

    assert main(["status", *table, "--stall-timeout", "365 d"]) == 0
    header = (
        "Inferred   partition keys dt, hour and pattern '$dt $hour:00:00' inferred from 8 "
        "staged directories; and, as init does, sink.partition-commit.trigger "
        "partition-time, sink.partition-commit.delay 1 h, format parquet\n"
    )
    assert header in capsys.readouterr().out
    # Anything given wins: with the keys given nothing is inferred.
    keys = ["--partition-keys", "dt,hour", "--stall-timeout", "365 d"]
    assert main(["status", *table, *keys]) == 0
    assert "Inferred" not in capsys.readouterr().out

    # Every other command that reads the table infers the same, and says so on stderr.
    published = ["--table-path", str(tmp_path / "table")]
    for argv in (
        ["plan", *table, *published],
        ["compact", *table, *published, "--dry-run"],
        ["expire", *table, *published, "--expiration-time", "3650 d"],
        ["clean-staging", *table, *published, "--older-than", "3650 d", "--dry-run"],
    ):
        assert main(argv) == 0, argv
        assert capsys.readouterr().err.startswith(header), argv
    assert main(["plan", *table, *published]) == 0
    assert "dt=2026-11-20/hour=00: 1 file(s)" in capsys.readouterr().out


def test_an_unpartitioned_stream_is_refused_naming_partition_by(spark, tmp_path, capsys):
    stream = StreamingTable(tmp_path, partition_by=())
    stream.add_batches([row(1, "2026-11-20T01:00:00Z")])
    stream.run(spark)
    argv = ["init", "--staging-path", stream.staging, "--checkpoint-path", stream.checkpoint]
    assert main([*argv, "-o", str(tmp_path / "spec.yaml")]) == 1
    assert "the stream is not partitioned" in capsys.readouterr().err
    assert not Path(tmp_path / "spec.yaml").exists()


def test_a_key_that_reads_two_ways_is_refused_until_the_pattern_is_given(spark, tmp_path, capsys):
    """``k=2026112003``: a date and hour, or epoch seconds; its name does not say which."""
    stream = StreamingTable(tmp_path / "stream", partition_by=("k",))
    stream.add_batches([row(1, "2026-11-20T03:10:00Z", k="2026112003")])
    stream.run(spark)
    path = tmp_path / "spec.yaml"
    argv = ["init", "--staging-path", stream.staging, "--checkpoint-path", stream.checkpoint]
    assert main([*argv, "-o", str(path)]) == 1
    err = capsys.readouterr().err
    assert "partition key 'k' reads two ways (e.g. '2026112003'): as yyyyMMddHH" in err
    assert "or as epoch seconds" in err and "--timestamp-formatter 'yyyyMMddHH'" in err
    assert err.count("\n") == 1 and not path.exists()

    given = ["--timestamp-pattern", "$k", "--timestamp-formatter", "yyyyMMddHH"]
    assert main([*argv, *given, "--delay", "1 h", "-o", str(path)]) == 0
    spec = TableSpec.from_file(str(path))
    assert (spec.partition_keys, spec.timestamp_formatter) == (("k",), "yyyyMMddHH")
    capsys.readouterr()
    (partition,) = report(capsys, "--spec", str(path))["partitions"]
    assert partition["commit_time"] == "2026-11-20T04:00:00.000+00:00"


# What the DAG factory makes of each stream's spec as init writes it (issue 46): None when
# it takes the file as it is, else the problem validate reports.
FACTORY_PROBLEMS: dict[str, str | None] = {
    "compacted_stream": None,
    "late_stateful_stream": None,
    "shanghai_stream": None,
    "orc_daily_stream": None,
    "csv_stream_without_watermark": None,
    "awkward_stream": None,  # dt, k: each day of every k
    "country_stream": "is required: the first partition to commit",
}


@pytest.mark.parametrize("fixture", sorted(FACTORY_PROBLEMS))
def test_validate_takes_the_spec_init_writes_as_it_is(fixture, request, tmp_path, capsys):
    """``init`` then ``validate``, no hand edits: the ``dag`` section is written too."""
    stream = request.getfixturevalue(fixture)
    folder = tmp_path / "specs"
    folder.mkdir()
    argv = ["init", "--staging-path", stream.staging, "--checkpoint-path", stream.checkpoint]
    argv += ["--table-path", str(tmp_path / "table"), "--policy", "success-file"]
    assert main([*argv, *STREAMS[fixture][1], "-o", str(folder / f"{fixture}.yaml")]) == 0
    text = (folder / f"{fixture}.yaml").read_text()
    capsys.readouterr()
    code = main(["validate", str(folder), "--json"])
    checked = json.loads(capsys.readouterr().out)
    problem = FACTORY_PROBLEMS[fixture]
    dag = partition_commit_dags(folder)[f"fscommit_{fixture}"]
    if problem is None:
        assert (code, checked["problems"]) == (0, [])
        assert checked["dags"][f"fscommit_{fixture}"] == str(folder / f"{fixture}.yaml")
        assert BROKEN_SPEC_TAG not in dag.tags and dag.start_date is not None
    else:
        assert code == 1 and problem in str(checked["problems"]), checked
        assert BROKEN_SPEC_TAG in dag.tags
    if fixture == "country_stream":  # no partition has a time: the file says why no DAG
        assert "# No DAG: no staged partition has a time this spec reads" in text


def test_a_spec_init_writes_from_relative_paths_works_from_any_directory(
    hourly_stream, connect_server, tmp_path, monkeypatch, capsys
):
    """A spec is read where the DAGs run, never where init ran: paths become absolute
    URIs, and the commit policy is written down (one that needs nothing, by default)."""
    here, elsewhere = tmp_path / "here", tmp_path / "elsewhere"
    here.mkdir()
    elsewhere.mkdir()
    monkeypatch.chdir(here)
    staging = os.path.relpath(hourly_stream.staging, here)
    checkpoint = os.path.relpath(hourly_stream.checkpoint, here)
    argv = [
        "init",
        "--staging-path",
        staging,
        "--checkpoint-path",
        checkpoint,
        "--table-path",
        "../table",
    ]
    assert main([*argv, "-o", "events.yaml"]) == 0
    capsys.readouterr()
    text = (here / "events.yaml").read_text()
    written = yaml.safe_load(text)
    assert written["staging_path"] == Path(hourly_stream.staging).resolve().as_uri()
    assert written["checkpoint_path"] == Path(hourly_stream.checkpoint).resolve().as_uri()
    assert written["table_path"] == (tmp_path / "table").as_uri()
    assert written["sink.partition-commit.policy.kind"] == "success-file"
    for kind in o.PolicyKind:  # every policy named, with what it needs
        assert re.search(rf"^#   {re.escape(kind)} +\S", text, re.MULTILINE), kind
    assert "Left alone, init writes success-file, which needs nothing" in text

    monkeypatch.chdir(elsewhere)
    spec = str(here / "events.yaml")
    assert main(["status", "--spec", spec, "--stall-timeout", "365 d", "--json"]) == 0
    states = {p["state"] for p in json.loads(capsys.readouterr().out)["partitions"]}
    assert "committable" in states
    result = subprocess.run(
        [FSCOMMIT, "commit", "--spec", spec, "--spark-remote", connect_server.url, "--json"],
        capture_output=True,
        text=True,
        cwd=elsewhere,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    commits = json.loads(result.stdout)["commits"]
    assert commits and {c["state"] for c in commits} == {"committed"}
    assert (tmp_path / "table" / commits[0]["partition"] / "_SUCCESS").exists()
    assert not (elsewhere / "table").exists()  # nothing landed where the command ran
