"""How every command names its table: flags, ``--option`` Flink keys, a spec file."""

from __future__ import annotations

import json

import pytest

from airflow_provider_fscommit.cli.arguments import DEPRECATED_FLAGS
from airflow_provider_fscommit.cli.main import main
from fscommit_dev.tables import hourly_table, status_args, table_flags


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
            main([command, "--staging-path", "/s"])
        assert exit_.value.code == 2
        assert "required: --checkpoint-path (or --spec)\n" in capsys.readouterr().err


def test_a_missing_spec_file_is_an_error_naming_it(tmp_path, capsys):
    assert main(["status", "--spec", str(tmp_path / "nope.yaml")]) == 1
    assert f"cannot read the table spec file {tmp_path / 'nope.yaml'}" in capsys.readouterr().err


NEW_NAMES = ("--staging-path", "--checkpoint-path", "--table-path", "--compaction-file-size")


def test_flags_are_named_after_their_spec_keys_and_the_old_names_say_they_are_deprecated(
    compacted_stream, tmp_path, capsys
):
    options = hourly_table(compacted_stream.staging, compacted_stream.checkpoint)
    new = [
        *table_flags(options),
        *("--table-path", str(tmp_path / "table"), "--compaction-file-size", "4KB"),
    ]
    renamed = {name: was for was, name in DEPRECATED_FLAGS.items()}
    old = [renamed.get(flag, flag) for flag in new]
    assert {renamed[flag] for flag in NEW_NAMES} <= set(old)
    plans = []
    for flags in (new, old):
        assert main(["plan", *flags, "--json"]) == 0
        out, err = capsys.readouterr()
        plans.append(
            [
                (p["partition"], [[i["uri"] for i in unit["inputs"]] for unit in p["units"]])
                for p in json.loads(out)["plans"]
            ]
        )
        deprecated = [line for line in err.splitlines() if "deprecated" in line]
        if flags is new:
            assert deprecated == []
        else:
            assert deprecated == [
                f"fscommit: warning: {renamed[flag]} is deprecated and will be removed; use "
                f"{flag}, named after the spec key it sets"
                for flag in NEW_NAMES
            ]
    assert plans[0] == plans[1]


def test_each_commands_help_lists_its_groups_with_examples_and_defaults_in_units(capsys):
    def help_of(command: str) -> str:
        with pytest.raises(SystemExit):
            main([command, "--help"])
        return capsys.readouterr().out

    commit = help_of("commit")
    assert "--compaction-file-size COMPACTION_FILE_SIZE" in commit
    assert "default: 128 MB." in commit and "134217728" not in commit
    kinds = (
        "metastore, glue, mark-event, done-partition, success-file, http-report, iceberg, custom"
    )
    assert kinds.replace(" ", "") in "".join(commit.split())  # every kind, however wrapped
    assert "examples:\n  fscommit commit --spec specs/events.yaml" in commit
    assert "--table " not in commit and "--database" not in commit  # old names hidden
    clean = help_of("clean-staging")
    assert "--partition-keys" in clean and "--older-than AGE" in clean
    for unused in ("--compaction-file-size", "--policy", "--metastore-table", "--expiration"):
        assert unused not in clean, unused
    assert len(clean.splitlines()) < len(commit.splitlines()) - 30


def test_a_catalog_table_given_as_the_old_table_flag_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(
            ["status", "--staging-path", "/s", "--checkpoint-path", "/c", "--table", "demo.events"]
        )
    assert exit_info.value.code == 2
    assert "--table 'demo.events' looks like a catalog table" in capsys.readouterr().err
