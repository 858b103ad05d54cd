"""Discovery: every partition that has something to commit, for a sweep or task mapping.

A committable partition is discovered when it needs any work (:mod:`.work`): staged files
not published yet (new, or late data for a committed partition), a fragmented partition
to compact again, a publication the commit policies have not committed, or files a
committed rewrite replaced left to retire by a run that stopped. An expired partition (or
one past its expiration) needs none: its late data is never published.

A sweep's discovery reads the whole table, so it also tells how far commits are behind
(:class:`Discovery`): the partitions committable and never committed, the oldest of them
and since when, and the partitions in error; the sweep's operator reports them as metrics.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.ledger.ledger import CommitLedger
from airflow_provider_fscommit.core.ledger.table_state import PartitionSummary
from airflow_provider_fscommit.core.partition.partition_spec import PartitionGlob, PartitionSpec
from airflow_provider_fscommit.core.status.committable import PartitionState, TableStatusReader
from airflow_provider_fscommit.core.status.freshness import committable_since_ms
from airflow_provider_fscommit.core.status.work import (
    EVERY_STEP,
    Work,
    answered_by_summary,
    partition_work,
)
from airflow_provider_fscommit.core.storage.object_store import store_errors


@dataclass(frozen=True)
class PendingCommit:
    partition: str
    reason: str  # new | late-data | fragmented | policies-pending | retire-pending
    work: Work  # every step it needs (:mod:`.work`); ``reason`` names the first


@dataclass(frozen=True)
class Discovery:
    """What a discovery found: the partitions to commit, and how far commits are behind.

    ``uncommitted`` counts the partitions among ``pending`` that no policy has committed
    yet (readers do not see them; late data for a committed one is not counted), and
    ``oldest_committable_ms`` is since when the oldest of them has been committable
    (:mod:`.freshness`; None: there is none, or its moment is unknown). ``errors``
    counts the partitions in error: no partition time can be read from their path.
    """

    pending: list[PendingCommit]
    uncommitted: int
    oldest_committable_ms: int | None
    errors: int
    now_ms: int


@store_errors
def partitions_to_commit(spec: TableSpec, within: str | None = None) -> list[PendingCommit]:
    """Committable partitions with work: not committed yet, late data, fragmented (when
    rewrites are on), not committed since their last publication, or a rewrite's replaced
    files not retired yet.

    ``within``: only the partitions of this glob (``region=*/dt=2026-11-20/hour=03``: the
    hour of every region) or this one partition. The table state answers for the
    partitions it finds no work for; only the others' records are read (the state may lag
    them, never lead).
    """
    return discover(spec, within).pending


@store_errors
def discover(spec: TableSpec, within: str | None = None) -> Discovery:
    """:func:`partitions_to_commit`, with how far the commits are behind among them."""
    reader = TableStatusReader(spec)
    status = reader.read(find_orphans=False)
    ledger = CommitLedger(spec.require_table_path())
    state = ledger.state()
    selection = None if within is None else _selection(spec, within)
    now_ms = int(time.time() * 1000)
    pending = []
    uncommitted = []  # (commit time, path) of the pending ones no policy committed yet
    for partition in status.in_state(PartitionState.COMMITTABLE):
        if selection is not None and not selection.matches(partition.staged.spec):
            continue
        path, staged = partition.staged.path, partition.staged.files
        recorded = state.get(path)
        work = partition_work(spec, path, recorded, staged, now_ms)
        if not answered_by_summary(work, recorded, EVERY_STEP):
            records = ledger.look(path, state).summary()
            work = partition_work(spec, path, records, staged, now_ms)
            recorded = records
        if work and not work & Work.EXPIRED:
            assert recorded is not None
            pending.append(PendingCommit(path, _reason(work, recorded), work))
            if not recorded.policy_commits and partition.commit_time_ms is not None:
                uncommitted.append((partition.commit_time_ms, path))
    # The earliest commit time became committable first: the clock only moves forward.
    oldest = (
        committable_since_ms(spec, min(uncommitted)[0], reader.checkpoint, status.checkpoint)
        if uncommitted
        else None
    )
    errors = len(status.in_state(PartitionState.ERROR))
    return Discovery(pending, len(uncommitted), oldest, errors, now_ms)


def _reason(work: Work, recorded: PartitionSummary) -> str:
    """The first step a sweep takes for the partition, as the discovery names it."""
    if work & Work.COMPACT:
        return "late-data" if recorded.latest_commit is not None else "new"
    if work & Work.REWRITE:
        return "fragmented"
    return "policies-pending" if work & Work.COMMIT else "retire-pending"


def _selection(spec: TableSpec, within: str) -> PartitionGlob:
    """``within`` as a glob (one partition's path: a glob without wildcards)."""
    keys, default = spec.partition_keys, spec.partition_default_name
    glob = PartitionGlob.parse(within, keys, default)
    if glob is None:
        one = PartitionSpec.parse(within, keys, default)
        glob = PartitionGlob(one.keys, one.values, frozenset())
    return glob
