"""Every table at a glance: one line per spec file over real streams, unreadable tables on
their own line, and ``fscommit status --specs`` with its exit codes."""

from __future__ import annotations

import json
from datetime import timedelta

from airflow_provider_fscommit.cli.main import main
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.status.table_overview import read_tables, spec_files
from airflow_provider_fscommit.core.status.table_report import read_table_report
from fscommit_dev.tables import hourly_table
from tests.support.compaction import publish_and_commit

# Longer than a suite runs: the session's streams stop moving when written, and a stall
# verdict that flips between two reads would compare the clock, not the two readers.
WEEK = timedelta(days=7)


def write_spec(path, stream, table) -> str:
    options = hourly_table(
        stream.staging, stream.checkpoint, table_path=str(table), policy_kind="success-file"
    )
    path.write_text(json.dumps(options))  # JSON is YAML
    return str(path)


def test_spec_globs_expand_in_order_and_a_missing_file_stays_listed(tmp_path):
    for name in ("b.yaml", "a.yaml"):
        (tmp_path / name).write_text("{}")
    listed = spec_files([f"{tmp_path}/*.yaml", str(tmp_path / "a.yaml"), "/nowhere/x.yaml"])
    assert listed == [str(tmp_path / "a.yaml"), str(tmp_path / "b.yaml"), "/nowhere/x.yaml"]


def test_one_line_per_table_with_its_counts_and_the_oldest_uncommitted_partition(
    compacted_stream, late_stateful_stream, tmp_path, capsys
):
    specs = tmp_path / "specs"
    specs.mkdir()
    hourly = write_spec(specs / "hourly.yaml", compacted_stream, tmp_path / "hourly")
    write_spec(specs / "stateful.yaml", late_stateful_stream, tmp_path / "stateful")
    (specs / "typo.yaml").write_text("staging_path: /s\ncheckpoint_path: /c\npartition_kyes: dt\n")
    spec = TableSpec.from_file(hourly)
    ready = [p.partition for p in read_table_report(spec).partitions if p.state == "committable"]
    publish_and_commit(spec, ready[:1])

    hourly_entry, stateful_entry, typo = read_tables([f"{specs}/*.yaml"], WEEK)
    assert [e.name for e in (hourly_entry, stateful_entry, typo)] == ["hourly", "stateful", "typo"]
    report = hourly_entry.report
    assert hourly_entry.committed == 1 and hourly_entry.committable == len(ready) - 1
    assert hourly_entry.pending == len(report.in_state("pending")) > 0
    assert hourly_entry.oldest_uncommitted.partition == ready[1]  # 00 is committed
    assert hourly_entry.errors == 0 and stateful_entry.errors == 0
    assert typo.report is None and "partition_kyes" in typo.error and typo.errors == 1
    line = hourly_entry.to_dict()
    assert line["watermark_ms"] == report.status.checkpoint.watermark_ms
    assert line["oldest_uncommitted"] == ready[1] and line["stalled"] is report.stalled

    # The command: the same lines; 1 while a spec cannot be read, else 0 (committable work
    # is no alert; attention is, tests/cli/test_exit_codes.py).
    assert main(["status", "--specs", f"{specs}/*.yaml", "--json", "--stall-timeout", "7 d"]) == 1
    shown = json.loads(capsys.readouterr().out)["tables"]
    expected = [e.to_dict() for e in read_tables([f"{specs}/*.yaml"], WEEK)]
    for line in (*shown, *expected):  # the clock moved between the two reads
        line.pop("watermark_lag_s")
    assert shown == expected  # the command counts the settled partitions, not lists them
    (specs / "typo.yaml").unlink()
    assert main(["status", "--specs", f"{specs}/*.yaml", "--stall-timeout", "7 d"]) == 0
    text = capsys.readouterr().out.splitlines()
    assert text[0].split()[:3] == ["TABLE", "WATERMARK", "(UTC)"]
    assert text[1].startswith("hourly ") and ready[1] in text[1]
    assert text[2].startswith("stateful ")
