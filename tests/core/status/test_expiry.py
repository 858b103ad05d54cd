"""A partition's expiry: expired for good once recorded, else past the limit by its age."""

from __future__ import annotations

from datetime import UTC, datetime

from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.ledger.ledger import PartitionLedger
from airflow_provider_fscommit.core.status.expiry import age_start_ms, expired_reason

HOUR = "dt=2026-11-20/hour=03"
BASE = {
    "staging_path": "/data/staging",
    "checkpoint_path": "/data/ckpt",
    "table_path": "/data/table",
    "partition_keys": "dt,hour",
    "partition.time-extractor.timestamp-pattern": "$dt $hour:00:00",
}


def ms(iso: str) -> int:
    return int(datetime.fromisoformat(iso).replace(tzinfo=UTC).timestamp() * 1000)


def spec(**options: str) -> TableSpec:
    return TableSpec.from_options(BASE | options)


def committed_at(epoch_ms: int) -> PartitionLedger:
    """A partition the policies committed once, at ``epoch_ms``."""
    return PartitionLedger(policy_commits={0: {"committed_at_ms": epoch_ms}})


def test_values_time_counts_from_the_partition_time_on_the_watermark_zone():
    shanghai = spec(**{"sink.partition-commit.watermark-time-zone": "Asia/Shanghai"})
    assert age_start_ms(spec(), HOUR, PartitionLedger()) == ms("2026-11-20T03:00:00")
    assert age_start_ms(shanghai, HOUR, PartitionLedger()) == ms("2026-11-19T19:00:00")


def test_update_time_counts_from_the_last_commit_and_none_before_it():
    table = spec(**{"partition.expiration-strategy": "update-time"})
    assert age_start_ms(table, HOUR, committed_at(1234)) == 1234
    assert age_start_ms(table, HOUR, PartitionLedger()) is None


def test_a_partition_past_the_limit_is_expired_and_one_within_it_is_not():
    table = spec(**{"partition.expiration-time": "1 d"})
    start = ms("2026-11-20T03:00:00")
    assert expired_reason(table, HOUR, PartitionLedger(), start + 86_400_000) is None
    assert expired_reason(table, HOUR, PartitionLedger(), start + 86_400_001) == (
        "past partition.expiration-time (1 d after 2026-11-20T03:00:00.000+00:00); "
        "it is expired, not published"
    )


def test_an_expiration_record_expires_it_for_good_whatever_the_options():
    records = PartitionLedger(expirations={0: {"expired_at_ms": ms("2026-12-01T00:00:00")}})
    assert expired_reason(spec(), HOUR, records, 0) == (
        "expired at 2026-12-01T00:00:00.000+00:00; late data for it is not published"
    )


def test_without_an_expiration_time_or_a_readable_time_nothing_expires():
    assert expired_reason(spec(), HOUR, PartitionLedger(), 2**62) is None
    table = spec(**{"partition.expiration-time": "1 d"})
    assert expired_reason(table, "dt=not-a-date/hour=03", PartitionLedger(), 2**62) is None
