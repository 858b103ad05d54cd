"""Staged files and a planner call with fixed options, for the planner's and the plan's tests."""

from __future__ import annotations

from airflow_provider_fscommit.core.compaction.planner import plan_partition
from airflow_provider_fscommit.core.spark.staging import StagedFile

FILES = [StagedFile(f"file:///s/dt=1/part-{n}.parquet", 40) for n in "dcbae"]


def plan(committed, published=frozenset(), **overrides):
    options = dict(
        seq=3,
        target_file_size=100,
        auto_compaction=True,
        codec="snappy",
        sink_latest_batch=9,
        watermark_ms=1000,
        created_ms=5,
    )
    return plan_partition("dt=1", committed, set(published), **(options | overrides))
