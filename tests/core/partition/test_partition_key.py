"""A partition's key in Airflow: its time in Airflow's own default key format."""

from __future__ import annotations

import re
from datetime import datetime

import pytest

from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.partition.partition_key import (
    parse_partition_key,
    partition_key,
)
from fscommit_dev.tables import hourly_table

# What Airflow accepts in a run id beside its own form ([scheduler] allowed_run_id_pattern's
# default): a scheduled partitioned run's id ends in its key.
ALLOWED_RUN_ID = re.compile(r"^[A-Za-z0-9_.~:+-]+$")


def test_a_key_is_the_partitions_start_and_reads_back():
    start = datetime(2026, 11, 20, 3)
    key = partition_key(start)
    assert key == "2026-11-20T03:00:00"
    assert parse_partition_key(key) == start
    assert ALLOWED_RUN_ID.match(f"scheduled__2026-11-20T04:00:00+00:00__{key}__x7Kq")


def test_a_table_names_each_partition_by_its_extracted_time(tmp_path):
    spec = TableSpec.from_options(
        hourly_table(
            str(tmp_path / "staging"),
            str(tmp_path / "checkpoint"),
            partition_keys="region,dt,hour",
            **{"partition.time-extractor.timestamp-pattern": "$dt $hour:00:00"},
        )
    )
    # Every region of an hour shares the hour's key; the path is not a key.
    assert spec.partition_time_key("region=US/dt=2026-11-20/hour=03") == "2026-11-20T03:00:00"
    assert spec.partition_time_key("region=DE/dt=2026-11-20/hour=03") == "2026-11-20T03:00:00"
    # No time, no key: values the extractor cannot read, a path of other keys.
    assert spec.partition_time_key("region=US/dt=tomorrow/hour=03") is None
    assert spec.partition_time_key("dt=2026-11-20/hour=03") is None


def test_a_key_of_another_form_is_refused_naming_the_form():
    with pytest.raises(
        ValueError, match=r"'2026-11-20 03:00' is not a time in '%Y-%m-%dT%H:%M:%S'"
    ):
        parse_partition_key("2026-11-20 03:00")
