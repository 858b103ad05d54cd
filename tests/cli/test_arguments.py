"""How every command names its table: flags, ``--option`` Flink keys, a spec file."""

from __future__ import annotations

import json

import pytest

from airflow_provider_fscommit.cli.main import main
from fscommit_dev.tables import status_args


def test_flink_keys_through_option(compacted_stream, capsys):
    args = status_args(compacted_stream, "--json", "--stall-timeout", "365 d")
    args[args.index("--delay") : args.index("--delay") + 2] = [
        "--option",
        "sink.partition-commit.delay=100 d",
    ]
    assert main(args) == 0
    states = {p["state"] for p in json.loads(capsys.readouterr().out)["partitions"]}
    assert states == {"pending"}


def test_a_spec_file_describes_the_table_and_flags_override_it(compacted_stream, tmp_path, capsys):
    spec = tmp_path / "table.yaml"
    spec.write_text(
        f"staging_path: {compacted_stream.staging}\n"
        f"checkpoint_path: {compacted_stream.checkpoint}\n"
        "partition_keys: dt,hour\n"
        "partition.time-extractor.timestamp-pattern: $dt $hour:00:00\n"
        "sink.partition-commit.delay: 100 d\n"
    )
    assert main(["status", "--spec", str(spec), "--json", "--stall-timeout", "365 d"]) == 0
    states = {p["state"] for p in json.loads(capsys.readouterr().out)["partitions"]}
    assert states == {"pending"}  # nothing is 100 days behind the watermark
    # --delay replaces the file's Flink-keyed delay (not "given twice").
    assert (
        main(
            ["status", "--spec", str(spec), "--delay", "1 h", "--json", "--stall-timeout", "365 d"]
        )
        == 0
    )
    states = {p["state"] for p in json.loads(capsys.readouterr().out)["partitions"]}
    assert "committable" in states


def test_without_a_spec_file_the_table_flags_are_required(capsys):
    # Every command reads the partition keys off the stream when not given, as init does.
    for command in ("status", "plan", "init", "compact", "commit", "expire"):
        with pytest.raises(SystemExit) as exit_:
            main([command, "--staging", "/s"])
        assert exit_.value.code == 2
        assert "required: --checkpoint (or --spec)\n" in capsys.readouterr().err


def test_a_missing_spec_file_is_an_error_naming_it(tmp_path, capsys):
    assert main(["status", "--spec", str(tmp_path / "nope.yaml")]) == 1
    assert f"cannot read the table spec file {tmp_path / 'nope.yaml'}" in capsys.readouterr().err
