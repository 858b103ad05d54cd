"""The exit-code table, one test per row, on the suite's real streams: what a cron job or
a monitoring check reads from every ``fscommit`` command."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from airflow_provider_fscommit.cli.exit_codes import EXIT_CODES, ExitCode
from airflow_provider_fscommit.cli.main import main
from fscommit_dev.tables import hourly_table, status_args, table_flags
from tests.support.compaction import publish_and_commit

_HEALTHY = ("--stall-timeout", "365 d")  # the suite's streams stopped when they were built


def last_progressed(stream, hours_ago: float) -> None:
    """The query of ``stream`` (the test's own copy) last planned a batch ``hours_ago``,
    which is what the stall check reads. Set both ways: the suite's shared streams were
    built when the run started, which on a slow run is past the default 30 minutes."""
    then = time.time() - hours_ago * 3600
    for offset in (Path(stream.checkpoint) / "offsets").iterdir():
        os.utime(offset, (then, then))


def test_the_help_prints_the_table_and_every_code_has_one_meaning(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    assert EXIT_CODES in capsys.readouterr().out
    assert [code.value for code in ExitCode] == list(range(len(ExitCode)))
    with pytest.raises(SystemExit):
        main(["commit", "--help"])
    assert "Exit codes (the same for every command):\n  0  done" in capsys.readouterr().out


def test_a_stalled_stream_needs_attention_in_status_and_for_one_partition(hourly_stream, capsys):
    last_progressed(hourly_stream, 0)
    assert main(status_args(hourly_stream)) == ExitCode.OK  # just run: moving
    capsys.readouterr()
    last_progressed(hourly_stream, 2)
    assert main(status_args(hourly_stream)) == ExitCode.ATTENTION  # default: 30 min
    assert "Attention  the stream is stalled: no progress since 20" in capsys.readouterr().out
    assert main(status_args(hourly_stream, "--json")) == 4
    assert json.loads(capsys.readouterr().out)["attention"][0].startswith("the stream is stalled")
    pending = "dt=2026-11-20/hour=03"
    assert main(status_args(hourly_stream, pending)) == 4
    assert "Verdict    stalled\n" in capsys.readouterr().out
    assert main(status_args(hourly_stream, pending, *_HEALTHY)) == 3


def test_a_partition_in_error_needs_attention(compacted_stream, capsys):
    # A formatter the values do not fit: each partition's time is unreadable, an error.
    flags = [*status_args(compacted_stream, *_HEALTHY), "--timestamp-formatter", "yyyyMMdd"]
    assert main([*flags, "--json"]) == ExitCode.ATTENTION
    report = json.loads(capsys.readouterr().out)
    assert set(report["states"]) == {"error"}
    assert report["attention"] == [
        f"{len(report['partitions'])} partition(s) in error, e.g. dt=2026-11-20/hour=00"
    ]


def test_status_specs_alerts_on_the_table_that_needs_attention(hourly_stream, tmp_path, capsys):
    specs = tmp_path / "specs"
    specs.mkdir()
    options = hourly_table(hourly_stream.staging, hourly_stream.checkpoint)
    (specs / "hourly.yaml").write_text(json.dumps(options))
    argv = ["status", "--specs", f"{specs}/*.yaml"]
    # Committable work is no alert: the next run commits it.
    last_progressed(hourly_stream, 0)
    assert main(argv) == ExitCode.OK
    capsys.readouterr()
    last_progressed(hourly_stream, 2)
    assert main(argv) == ExitCode.ATTENTION
    assert "hourly: attention: the stream is stalled" in capsys.readouterr().out
    (specs / "typo.yaml").write_text("staging_path: /s\ncheckpoint_path: /c\npartition_kyes: dt\n")
    assert main([*argv, *_HEALTHY]) == ExitCode.ERROR


def test_nothing_committable_then_nothing_to_do(compacted_stream, tmp_path, capsys):
    table = str(tmp_path / "table")
    options = hourly_table(compacted_stream.staging, compacted_stream.checkpoint)
    flags = [*table_flags(options), "--table-path", table]
    # A delay no partition is past: nothing committable, for plan as for status PARTITION.
    assert main(["plan", *flags, "--delay", "100 d"]) == ExitCode.NOTHING_COMMITTABLE
    assert "nothing committable yet" in capsys.readouterr().err
    # Everything committable committed: nothing to do, which is done.
    from airflow_provider_fscommit.core.config.table_spec import TableSpec

    spec = TableSpec.from_options(options | {"table_path": table, "policy_kind": "success-file"})
    assert main(["status", *flags, *_HEALTHY, "--json"]) == ExitCode.OK
    ready = [
        p["partition"]
        for p in json.loads(capsys.readouterr().out)["partitions"]
        if p["state"] == "committable"
    ]
    publish_and_commit(spec, ready)
    # Counted, not listed: a year-old table's plan is one line, not one per hour.
    assert main(["plan", *flags, "--json"]) == ExitCode.OK
    document = json.loads(capsys.readouterr().out)
    assert (document["plans"], document["up_to_date"]) == ([], [])
    assert document["unchanged"] == len(ready)
    assert main(["plan", *flags]) == ExitCode.OK
    assert capsys.readouterr().out == (
        f"{len(ready)} partition(s) unchanged: nothing staged since their last commit or expiry\n"
    )
    assert main(["status", *flags, *_HEALTHY]) == ExitCode.OK


def test_a_partition_the_stream_never_staged_is_named_so(compacted_stream, capsys):
    # The stream writes hour=03; hour=3 is past its commit time but was never staged.
    code = main(status_args(compacted_stream, "dt=2026-11-20/hour=3", *_HEALTHY, "--json"))
    assert code == ExitCode.NOT_STAGED
    check = json.loads(capsys.readouterr().out)
    assert (check["committable"], check["staged"]) == (False, False)
    assert "the stream writes dt=2026-11-20/hour=03" in check["reason"]
    assert main(status_args(compacted_stream, "dt=2026-11-20/hour=3", *_HEALTHY)) == 5
    assert "Verdict    not staged\n" in capsys.readouterr().out
    assert main(status_args(compacted_stream, "dt=2026-11-20/hour=03", *_HEALTHY)) == 0


@pytest.mark.parametrize(
    ("argv", "usage", "message"),
    [
        (["compact", "--bogus"], "usage: fscommit compact ", "unrecognized arguments: --bogus"),
        (
            ["status", "--staging-path", "/s", "--checkpoint-path", "/c", "--stall-timeout", "5"],
            "usage: fscommit status ",
            "the duration '5' has no unit; write it with one, e.g. '5 s' or '5 min' (units: d,",
        ),
        (["plan", "--staging-path", "/s"], "usage: fscommit plan ", "required: --checkpoint-path"),
        (
            [
                *("clean-staging", "--staging-path", "/s", "--checkpoint-path", "/c"),
                *("--partition-keys", "dt", "--older-than", "7"),
            ],
            "usage: fscommit clean-staging ",
            "argument --older-than: the duration '7' has no unit",
        ),
    ],
)
def test_a_usage_error_prints_its_commands_usage(argv, usage, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == ExitCode.USAGE
    err = capsys.readouterr().err
    assert err.startswith(usage) and message in err


def test_version(capsys):
    from airflow_provider_fscommit import __version__

    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out == f"fscommit {__version__}\n"
