"""A corpus of bad input: each case gets one clear error and changes nothing on disk.

Through ``fscommit commit`` (the command that writes the most) and the operators. The
manual DAG's form has its own corpus in ``tests/dags/test_parse.py``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from airflow_provider_fscommit.cli.main import main
from airflow_provider_fscommit.core.errors import FsCommitError
from fscommit_dev.streams import StreamingTable, hourly_batches
from fscommit_dev.tables import hourly_table, table_flags

HUGE = "9" * 100_000
# (id, partitions, flags (None removes a flag), expected exit code, message fragment)
CASES = [
    ("unknown key", ["dt=2026-11-20/minute=00"], {}, 1, "segment 'minute=00' is not 'hour="),
    ("parent traversal", ["../../etc"], {}, 1, "has 3 level(s) but the partition keys"),
    ("absolute path", ["/etc/passwd"], {}, 1, "segment 'etc' is not 'dt=<value>'"),
    ("traversal after keys", ["dt=2026-11-20/hour=03/../../x"], {}, 1, "has 5 level(s)"),
    ("separator in value", ["dt=2026-11-20/hour=a/b"], {}, 1, "has 3 level(s)"),
    ("quote in value", ["dt=2026-11-20'/hour=03"], {}, 1, "cannot parse partition time"),
    ("NUL in value", ["dt=2026\x00/hour=03"], {}, 1, "cannot parse partition time '2026\\x00"),
    ("huge value", [f"dt={HUGE}/hour=03"], {}, 1, "(100011 characters)"),
    ("pending partition", ["dt=2026-11-20/hour=07"], {}, 1, "is pending, not committable"),
    # A flag's value that does not parse is a usage error (2), its command's usage printed.
    ("bad duration", [], {"--delay": "1 fortnight"}, 2, "cannot parse duration '1 fortnight'"),
    ("negative duration", [], {"--delay": "-1 h"}, 2, "cannot parse duration '-1 h'"),
    ("unknown time zone", [], {"--time-zone": "Mars/Olympus"}, 1, "not a valid time zone"),
    (
        "pattern with unknown key",
        [],
        {"--timestamp-pattern": "$day $hour:00:00"},
        1,
        "references '$day', which is not a partition key",
    ),
    (
        "formatter that does not match",
        ["dt=2026-11-20/hour=03"],
        {"--timestamp-formatter": "yyyyMMdd HH:mm:ss"},
        1,
        "cannot be judged: cannot parse '2026-11-20 03:00:00' with timestamp formatter",
    ),
    ("bad formatter", [], {"--timestamp-formatter": "yyyy-MM-dd {{"}, 1, "reserved character"),
    ("no staging", [], {"--staging-path": "/nonexistent/staging"}, 1, "does not exist"),
    ("no checkpoint", [], {"--checkpoint-path": "/nonexistent/ckpt"}, 1, "does not exist"),
    ("table holds staging", [], {"--table-path": "{base}"}, 1, "overlap"),
    ("table inside checkpoint", [], {"--table-path": "{checkpoint}/table"}, 1, "overlap"),
    ("table is staging", [], {"--table-path": "{staging}"}, 1, "overlap"),
    (
        "unknown option",
        [],
        {"--option": "sink.partition-commit.dealy=1 h"},
        2,
        "did you mean sink.partition-commit.delay",
    ),
    ("option not a pair", [], {"--option": "delay"}, 2, "'delay' is not KEY=VALUE"),
    (
        "idle time without interval",
        [],
        {"--option": "partition.idle-time-to-done=30 min"},
        1,
        "the idle-time trigger needs partition.time-interval",
    ),
    ("bad size", [], {"--compaction-file-size": "12XB"}, 1, "cannot parse size '12XB'"),
    ("unknown policy", [], {"--policy": "drop-table"}, 1, "unknown policies ['drop-table']"),
    ("no policy", [], {"--policy": None}, 1, "policy.kind is empty"),
    ("metastore without table", [], {"--policy": "metastore"}, 1, "no metastore table"),
    (
        "success file first",
        [],
        {"--policy": "success-file,metastore", "--metastore-table": "t"},
        1,
        "success-file before metastore",
    ),
    ("custom without class", [], {"--policy": "custom"}, 1, "policy.class is not set"),
    ("bad codec", [], {"--codec": "lz0"}, 1, "codec 'lz0' is not supported"),
    (
        "not a Spark home",
        [],
        {"--spark-home": "/nonexistent/spark"},
        1,
        "--spark-home /nonexistent/spark has no bin/spark-submit; point it at the Spark",
    ),
    ("empty partition key", [], {"--partition-keys": "dt,,hour"}, 1, "has an empty entry"),
    ("keys that do not match", [], {"--partition-keys": "day"}, 1, "'$dt', which is not"),
    (
        "metastore uri",
        [],
        {"--policy": "metastore", "--metastore-table": "t", "--metastore-uri": "http://x:1"},
        1,
        "is not thrift://HOST:PORT",
    ),
    ("missing spec file", [], {"--spec": "/nonexistent/table.yaml"}, 1, "cannot read the table"),
    ("no table", [], {"--table-path": None}, 1, "has no table_path"),
]


@pytest.fixture(scope="module")
def no_watermark_stream(spark, tmp_path_factory) -> StreamingTable:
    stream = StreamingTable(tmp_path_factory.mktemp("nowatermark"), watermark_delay=None)
    stream.add_batches(*hourly_batches("2026-11-20", range(2)))
    stream.run(spark)
    return stream


def tree(root: str) -> dict[str, int]:
    return {
        os.path.join(d, f): os.stat(os.path.join(d, f)).st_mtime_ns
        for d, _, files in os.walk(root)
        for f in files
    }


def run(stream: StreamingTable, table: Path, partitions, flags, capsys) -> tuple[int, str]:
    options = hourly_table(
        stream.staging, stream.checkpoint, table_path=str(table), policy_kind="success-file"
    )
    hourly = table_flags(options)
    values = dict(zip(hourly[::2], hourly[1::2], strict=True)) | flags
    argv = ["commit"]
    for flag, value in values.items():
        if value is not None:
            value = value.format(
                base=stream.base, staging=stream.staging, checkpoint=stream.checkpoint
            )
            argv += [flag, value]
    try:
        code = main([*argv, *partitions])
    except SystemExit as exit_:
        code = exit_.code
    return code, capsys.readouterr().err


@pytest.mark.parametrize(
    ("partitions", "flags", "code", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_bad_input_is_refused_with_one_clear_message_and_nothing_written(
    compacted_stream, tmp_path, capsys, partitions, flags, code, message
):
    before = tree(str(compacted_stream.base))
    table = tmp_path / "table"
    exit_code, err = run(compacted_stream, table, partitions, flags, capsys)
    assert (exit_code, message in err) == (code, True), err
    assert len(err) < 2000 and err.count("error:") == 1
    assert not table.exists()
    assert tree(str(compacted_stream.base)) == before


def test_a_query_without_a_watermark_is_refused_for_partition_time(
    no_watermark_stream, tmp_path, capsys
):
    code, err = run(no_watermark_stream, tmp_path / "table", [], {}, capsys)
    assert code == 1 and "without an event-time watermark" in err and "withWatermark(" in err
    assert not (tmp_path / "table").exists()


@pytest.mark.parametrize(
    ("partitions", "message"),
    [
        ({"dt": "2026-11-20", "minute": "00"}, "unknown ['minute']"),
        ("../../etc", "has 3 level(s)"),
        ({"dt": "2026-11-20", "hour": "07"}, "is pending, not committable"),
    ],
)
def test_the_operators_refuse_bad_partitions_before_writing(
    compacted_stream, tmp_path, partitions, message
):
    from airflow_provider_fscommit.operators.commit import PartitionCommitOperator
    from airflow_provider_fscommit.operators.compact import PartitionCompactOperator

    table = hourly_table(
        compacted_stream.staging,
        compacted_stream.checkpoint,
        table_path=str(tmp_path / "table"),
        policy_kind="success-file",
    )
    compact = PartitionCompactOperator(task_id="compact", table=table, partitions=partitions)
    with pytest.raises(FsCommitError, match=re.escape(message)):
        compact.execute({})
    if "pending" not in message:
        commit = PartitionCommitOperator(task_id="commit", table=table, partitions=partitions)
        with pytest.raises(FsCommitError):
            commit.execute({})
    assert not (tmp_path / "table").exists()
