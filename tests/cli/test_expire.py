"""``fscommit expire``: lists by default, expires with --apply, at most once per interval."""

from __future__ import annotations

from pathlib import Path

from airflow_provider_fscommit.cli.main import main
from fscommit_dev.metastore.client import metastore_table_spec
from fscommit_dev.tables import table_flags
from tests.support.compaction import published_ledger

OLD = ["dt=2026-11-20/hour=00", "dt=2026-11-20/hour=01"]
FUTURE = "dt=2099-01-01/hour=00"


def test_expire_lists_then_applies_then_waits_for_the_check_interval(tmp_path, capsys):
    spec = metastore_table_spec(
        tmp_path / "table",
        "unused",
        **{"sink.partition-commit.policy.kind": "success-file", "expiration_time": "1 d"},
    )
    for partition in [*OLD, FUTURE]:
        published_ledger(spec, partition, rows=3)
        Path(spec.table_path, partition, "part-0.parquet").write_bytes(b"x" * 100)
    flags = table_flags(spec)

    assert main(["expire", *flags]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in listed[:-1]] == OLD
    assert listed[-1].startswith("would expire 2 partition(s) older than 1 d")
    assert listed[-1].endswith("; --apply to expire them")
    assert all(Path(spec.table_path, p, "part-0.parquet").exists() for p in OLD)

    assert main(["expire", *flags, "--apply"]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("expired 2 partition(s)")
    assert not any(Path(spec.table_path, p).exists() for p in OLD)
    assert Path(spec.table_path, FUTURE, "part-0.parquet").exists()

    assert main(["expire", *flags, "--apply"]) == 0
    assert "next check after" in capsys.readouterr().out
    assert main(["expire", *flags, "--apply", "--force"]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("expired 0 partition(s)")
