"""``fscommit status`` as a person and a script use it."""

from __future__ import annotations

import json
import subprocess

import pytest

from airflow_provider_fscommit.cli.main import main
from fscommit_dev.tables import status_args, table_flags
from tests.support.compaction import FSCOMMIT


def test_status_json_has_the_documented_fields(compacted_stream, capsys):
    assert main(status_args(compacted_stream, "--json")) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["latest_committed_batch"] == compacted_stream.progress[-1]["batchId"]
    assert out["watermark_ms"] == compacted_stream.last_watermark_ms
    assert out["sink_latest_batch"] == 7
    assert out["orphan_files"] == []
    first = out["partitions"][0]
    assert first["partition"] == "dt=2026-11-20/hour=00"
    assert {"partition", "files", "bytes", "state"} <= set(first)
    assert first["state"] == "committable" and first["files"] == 1 and first["bytes"] > 0
    assert out["partitions"][-1]["state"] == "pending"


def test_status_of_a_stream_that_has_just_started_says_its_watermark_has_not_advanced(
    first_batches_stream, capsys
):
    assert main(status_args(first_batches_stream)) == 0
    human = capsys.readouterr().out
    assert "Watermark  not advanced yet (safe; next batch runs with 2026-11-20T00:10" in human
    assert "Format     parquet\n" in human
    assert "1 partition(s): 1 pending" in human
    assert main(status_args(first_batches_stream, "--json")) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["watermark_ms"], out["watermark_pending"]) == (0, True)
    assert [p["state"] for p in out["partitions"]] == ["pending"]


@pytest.mark.slow
def test_status_of_a_killed_query_lists_its_orphans_through_the_installed_command(killed_stream):
    result = subprocess.run(
        [FSCOMMIT, *status_args(killed_stream, "--json")], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["orphan_files"] and all("hour=02/part-" in f for f in out["orphan_files"])
    human = subprocess.run(
        [FSCOMMIT, *status_args(killed_stream)], capture_output=True, text=True
    ).stdout
    assert "Orphan files (not in the sink log; never published)" in human
    assert out["orphan_files"][0] in human


def test_status_of_one_partition_is_the_sensors_verdict_with_the_tables_states(
    compacted_stream, capsys
):
    assert main(status_args(compacted_stream, "--json")) == 0
    states = {p["partition"]: p["state"] for p in json.loads(capsys.readouterr().out)["partitions"]}
    assert set(states.values()) == {"committable", "pending"}
    for partition, state in states.items():
        code = main(status_args(compacted_stream, partition, "--stall-timeout", "365 d", "--json"))
        check = json.loads(capsys.readouterr().out)
        assert code == (0 if state == "committable" else 3), partition
        assert check["committable"] is (state == "committable") and not check["stalled"]
        assert check["watermark_ms"] == compacted_stream.last_watermark_ms
        assert check["batch_id"] == compacted_stream.progress[-1]["batchId"]
    pending = max(states)
    assert main(status_args(compacted_stream, pending, "--stall-timeout", "365 d")) == 3
    human = capsys.readouterr().out
    assert f"Partition  {pending}\nVerdict    waiting\n" in human
    assert "Why        waiting: watermark " in human


def test_human_output_is_a_table(compacted_stream, capsys):
    assert main(status_args(compacted_stream)) == 0
    out = capsys.readouterr().out
    assert "Watermark  2026-11-20T" in out
    assert "PARTITION" in out and "STATE" in out
    assert "dt=2026-11-20/hour=00" in out
    assert "committable" in out and "pending" in out


def test_flink_keys_through_option(compacted_stream, capsys):
    args = status_args(compacted_stream, "--json")
    args[args.index("--delay") : args.index("--delay") + 2] = [
        "--option",
        "sink.partition-commit.delay=100 d",
    ]
    assert main(args) == 0
    states = {p["state"] for p in json.loads(capsys.readouterr().out)["partitions"]}
    assert states == {"pending"}


def test_errors_are_one_line_with_exit_code_1(tmp_path, capsys):
    table = {
        "staging_path": str(tmp_path / "s"),
        "checkpoint_path": str(tmp_path / "nope"),
        "partition_keys": "dt",
    }
    code = main(["status", *table_flags(table)])
    assert code == 1
    err = capsys.readouterr().err
    assert err.startswith("fscommit: error: checkpoint ") and err.count("\n") == 1


def test_usage_errors_exit_2(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["status", "--staging", "/s"])
    assert exit_info.value.code == 2


def test_a_spec_file_describes_the_table_and_flags_override_it(compacted_stream, tmp_path, capsys):
    spec = tmp_path / "table.yaml"
    spec.write_text(
        f"staging_path: {compacted_stream.staging}\n"
        f"checkpoint_path: {compacted_stream.checkpoint}\n"
        "partition_keys: dt,hour\n"
        "partition.time-extractor.timestamp-pattern: $dt $hour:00:00\n"
        "sink.partition-commit.delay: 100 d\n"
    )
    assert main(["status", "--spec", str(spec), "--json"]) == 0
    states = {p["state"] for p in json.loads(capsys.readouterr().out)["partitions"]}
    assert states == {"pending"}  # nothing is 100 days behind the watermark
    # --delay replaces the file's Flink-keyed delay (not "given twice").
    assert main(["status", "--spec", str(spec), "--delay", "1 h", "--json"]) == 0
    states = {p["state"] for p in json.loads(capsys.readouterr().out)["partitions"]}
    assert "committable" in states


def test_without_a_spec_file_the_table_flags_are_required(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["status", "--staging", "/s"])
    assert exit_.value.code == 2
    assert "--checkpoint, --partition-keys (or --spec)" in capsys.readouterr().err


def test_a_missing_spec_file_is_an_error_naming_it(tmp_path, capsys):
    assert main(["status", "--spec", str(tmp_path / "nope.yaml")]) == 1
    assert f"cannot read the table spec file {tmp_path / 'nope.yaml'}" in capsys.readouterr().err


def test_nothing_committable_yet_exits_3_and_plan_changes_nothing(
    compacted_stream, tmp_path, capsys
):
    table = tmp_path / "table"
    base = [*status_args(compacted_stream)[1:], "--table", str(table)]
    later = [*base, "--delay", "100 d"]  # the last --delay wins: nothing is that old
    assert main(["plan", *base, "--json"]) == 0
    plans = json.loads(capsys.readouterr().out)["plans"]
    assert plans and all(p["units"] for p in plans)
    assert main(["plan", *later]) == 3
    assert not table.exists()  # a plan writes nothing
    for command in (["compact"], ["commit", "--policy", "success-file"]):
        # Nothing to compute: no Spark application (a spark-submit that fails never runs).
        assert main([*command, *later, "--spark-submit", "/bin/false"]) == 3
        assert "nothing committable yet" in capsys.readouterr().err
