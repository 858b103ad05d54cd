"""``fscommit status`` as a person and a script use it."""

from __future__ import annotations

import json
import subprocess

import pytest

from airflow_provider_fscommit.cli.main import main
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from fscommit_dev.tables import status_args, table_flags
from tests.support.compaction import FSCOMMIT, publish_and_commit, table_options


def test_status_json_has_the_documented_fields(compacted_stream, capsys):
    assert main(status_args(compacted_stream, "--json", "--stall-timeout", "365 d")) == 0
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
    assert main(status_args(first_batches_stream, "--stall-timeout", "365 d")) == 0
    human = capsys.readouterr().out
    assert "Watermark  not advanced yet (safe; next batch runs with 2026-11-20T00:10" in human
    assert "Format     parquet\n" in human
    assert "1 partition(s): 1 pending" in human
    assert main(status_args(first_batches_stream, "--json", "--stall-timeout", "365 d")) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["watermark_ms"], out["watermark_pending"]) == (0, True)
    assert [p["state"] for p in out["partitions"]] == ["pending"]


@pytest.mark.slow
def test_status_of_a_killed_query_lists_its_orphans_through_the_installed_command(killed_stream):
    result = subprocess.run(
        [FSCOMMIT, *status_args(killed_stream, "--json", "--stall-timeout", "365 d")],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 4, result.stderr  # orphans: attention needed
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
    assert main(status_args(compacted_stream, "--json", "--stall-timeout", "365 d")) == 0
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
    assert main(status_args(compacted_stream, "--stall-timeout", "365 d")) == 0
    out = capsys.readouterr().out
    assert "Watermark  2026-11-20T" in out
    assert "PARTITION" in out and "STATE" in out
    assert "dt=2026-11-20/hour=00" in out
    assert "committable" in out and "pending" in out


def test_status_shows_the_published_completeness_and_the_current_one_where_it_differs(
    compacted_stream, tmp_path, capsys
):
    stream = compacted_stream  # safe watermark 06:10: hours 00 to 05 committable
    options = table_options(stream, str(tmp_path / "table"))
    args = ["status", *table_flags(options), "--stall-timeout", "365 d"]
    assert main(args) == 0
    human = capsys.readouterr().out
    assert "Complete   nothing published yet (a commit run publishes it)\n" in human
    assert "Now        through -\n" in human
    assert "Why        dt=2026-11-20/hour=00 is committable, not committed\n" in human

    spec = TableSpec.from_options(options | {"sink.partition-commit.policy.kind": "success-file"})
    hours = ["dt=2026-11-20/hour=00", "dt=2026-11-20/hour=01", "dt=2026-11-20/hour=03"]
    committer = publish_and_commit(spec, hours)
    assert committer.completeness is not None and committer.completeness.published is not None
    committed_at = committer.completeness.published.to_dict()["committed_at"]
    assert main(args) == 0
    human = capsys.readouterr().out
    assert (
        "Complete   through 2026-11-20T01:00:00.000+00:00 (published "
        f"{committed_at}; watermark 2026-11-20T06:10:00.000+00:00)\n"
    ) in human
    assert "Now " not in human  # the state gives what was published
    assert "Why        dt=2026-11-20/hour=02 is committable, not committed\n" in human
    assert main([*args, "--json"]) == 0
    completeness = json.loads(capsys.readouterr().out)["completeness"]
    assert completeness["published"] == committer.completeness.published.to_dict()
    assert completeness["current"]["complete_through"] == "2026-11-20T01:00:00.000+00:00"
    assert completeness["current"]["reason"] == (
        "dt=2026-11-20/hour=02 is committable, not committed"
    )

    # A longer delay since: the watermark has not passed 01's commit time any more. The
    # published value stands (forward only); what the state gives now is shown beside it.
    assert main([*args, "--delay", "330 min"]) == 0
    human = capsys.readouterr().out
    assert "Complete   through 2026-11-20T01:00:00.000+00:00 (published" in human
    assert "Now        through 2026-11-20T00:00:00.000+00:00\n" in human
    assert "Why        dt=2026-11-20/hour=01 is committed, but the watermark" in human
