"""A partition's expiry (Paimon's ``partition.expiration-time``): may it still be published?

Once a partition is past the expiration time, compaction, the commit policies and a sweep's
discovery all refuse it, recorded as expired or not: late data for it is never published
again, and a crash halfway through an expiration cannot be undone by a commit before the
next run. That verdict is a state of the partition, read from the table spec and its
ledger records, so it lives with the other status readers, below the publisher and the
committer that ask for it and the expiration (``maintenance.expiration``) that acts on it.

Age is measured, as ``partition.expiration-strategy`` says, from the partition's time
(``values-time``: the time extractor's, on the watermark time zone's clock) or from its
last commit (``update-time``).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Protocol

from airflow_provider_fscommit.core.config.options import ExpirationStrategy
from airflow_provider_fscommit.core.config.quantities import format_duration, iso_ms
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.errors import PartitionTimeError

_MS = timedelta(milliseconds=1)


class PartitionHistory(Protocol):
    """What expiry needs of a partition: its records, or their summary in the table state."""

    @property
    def expired_at_ms(self) -> int | None: ...

    @property
    def last_update_ms(self) -> int | None: ...


def age_start_ms(spec: TableSpec, partition: str, records: PartitionHistory) -> int | None:
    """The instant a partition's age counts from (None: it has none yet, never committed).

    ``values-time`` raises ``PartitionTimeError`` for a path the extractor cannot read.
    """
    if spec.expiration_strategy is ExpirationStrategy.VALUES_TIME:
        return spec.partition_time_ms(partition)
    return records.last_update_ms


def expiry_start_ms(
    spec: TableSpec, partition: str, records: PartitionHistory, now_ms: int
) -> int | None:
    """The instant ``partition``'s age counts from, when it is past the expiration time
    (None: it is not, it has no age yet, or the table sets no expiration): the one rule
    that compaction, the commit, discovery and expiration itself all apply. ``values-time``
    raises ``PartitionTimeError`` for a path the extractor cannot read."""
    if spec.expiration_time is None:
        return None
    start = age_start_ms(spec, partition, records)
    if start is None or now_ms - start <= spec.expiration_time // _MS:
        return None
    return start


def expired_reason(
    spec: TableSpec, partition: str, records: PartitionHistory, now_ms: int
) -> str | None:
    """Why nothing of ``partition`` may be published or committed again (None: it may)."""
    if records.expired_at_ms is not None:
        return f"expired at {iso_ms(records.expired_at_ms)}; late data for it is not published"
    try:
        start = expiry_start_ms(spec, partition, records, now_ms)
    except PartitionTimeError:
        return None  # compaction reports the partition's time error itself
    if start is None:
        return None
    assert spec.expiration_time is not None
    return (
        f"past partition.expiration-time ({format_duration(spec.expiration_time)} after "
        f"{iso_ms(start)}); it is expired, not published"
    )
