"""ORC units on the edge of what pyarrow can read: Spark's full timestamp range."""

from __future__ import annotations

from pathlib import Path

import pyarrow.orc as po

from airflow_provider_fscommit.core.compaction.compactor import UnitTask, compact_task, hidden_name
from airflow_provider_fscommit.core.formats.file_format import FileFormat

FAR = (
    "SELECT 1 AS id, timestamp'9999-12-31 23:59:59.999999' AS t "
    "UNION ALL SELECT 2, timestamp'2026-11-20 01:02:03.123456'"
)


def _task(table: Path, inputs: list[Path], unit: int) -> UnitTask:
    return UnitTask(
        table_path=str(table),
        partition="dt=1",
        plan_id="p",
        unit=unit,
        inputs=tuple(str(p) for p in inputs),
        output=f"part-{unit}.c000.orc",
        codec="uncompressed",
        schema=po.ORCFile(str(inputs[0])).schema.serialize().to_pybytes(),
        int96=False,
        format=FileFormat.ORC,
    )


def test_timestamps_beyond_pyarrows_range_fail_a_merge_clearly_and_copy_byte_for_byte(
    spark, tmp_path
):
    for name in ("a", "b"):
        spark.sql(FAR).coalesce(1).write.orc(str(tmp_path / name))
    inputs = [next((tmp_path / n).glob("part-*.orc")) for n in ("a", "b")]
    table = tmp_path / "table"

    merged = compact_task(_task(table, inputs, 0))[0]
    assert merged.error is not None
    assert f"{inputs[0]} holds a timestamp outside 1677-09-21..2262-04-11" in merged.error
    assert "Set auto-compaction: false" in merged.error

    # Without auto-compaction every file is its own unit: copied, its rows never read.
    copied = compact_task(_task(table, inputs[:1], 1))[0]
    assert copied.error is None and copied.copied and copied.rows == 2
    output = table / "dt=1" / hidden_name("part-1.c000.orc")
    assert output.read_bytes() == inputs[0].read_bytes()
