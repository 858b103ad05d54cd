"""The compaction plan is a JSON document: the ledger's record of it reads back the same."""

from __future__ import annotations

from airflow_provider_fscommit.core.compaction.plan import CompactionPlan
from airflow_provider_fscommit.core.formats.file_format import FileFormat
from tests.support.plans import FILES, plan


def test_plans_round_trip_through_json():
    result = plan(FILES)
    assert CompactionPlan.from_dict(result.to_dict()) == result


def test_a_plan_recorded_before_formats_existed_reads_as_parquet():
    document = plan(FILES, codec="zstd").to_dict()
    del document["format"]
    read = CompactionPlan.from_dict(document)
    assert read.format is FileFormat.PARQUET
    assert read.bytes == sum(f.size for f in FILES) == sum(u.bytes for u in read.units)
