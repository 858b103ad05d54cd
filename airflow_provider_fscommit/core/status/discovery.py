"""Discovery: every partition that has something to commit, for a sweep or task mapping.

A partition needs work when it is committable and either some of its committed staged
files are not published yet (new, or late data for a committed partition) or its latest
publication has not gone through the commit policies. An expired partition (or one past
its expiration) needs none: its late data is never published.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.ledger.ledger import CommitLedger
from airflow_provider_fscommit.core.partition.partition_spec import PartitionGlob, PartitionSpec
from airflow_provider_fscommit.core.status.committable import PartitionState, TableStatusReader
from airflow_provider_fscommit.core.status.expiry import expired_reason
from airflow_provider_fscommit.core.storage.object_store import store_errors


@dataclass(frozen=True)
class PendingCommit:
    partition: str
    reason: str  # new | late-data | policies-pending


@store_errors
def partitions_to_commit(spec: TableSpec, within: str | None = None) -> list[PendingCommit]:
    """Committable partitions not committed yet, plus committed ones with late data.

    ``within``: only the partitions of this glob (``region=*/dt=2026-11-20/hour=03``: the
    hour of every region) or this one partition. The table state answers for the
    partitions with nothing new; only the others' records are read (the state may lag
    them, never lead).
    """
    reader = TableStatusReader(spec)
    status = reader.read(find_orphans=False)
    ledger = CommitLedger(spec.require_table_path())
    state = ledger.state()
    selection = None if within is None else _selection(spec, within)
    look = []
    for partition in status.in_state(PartitionState.COMMITTABLE):
        if selection is not None and not selection.matches(partition.staged.spec):
            continue
        recorded = state.get(partition.staged.path)
        if recorded is not None and (
            recorded.expired_at_ms is not None
            or (recorded.settles(partition.staged.files) and recorded.policies_current)
        ):
            continue
        look.append(partition.staged.path)
    files = reader.staging.committed_files(status.snapshot, set(look))
    pending = []
    now_ms = int(time.time() * 1000)
    for path in look:
        records = ledger.look(path, state)
        if expired_reason(spec, path, records, now_ms):
            continue
        unpublished = {f.uri for f in files[path]} - records.settled_inputs
        if unpublished:
            pending.append(PendingCommit(path, "late-data" if records.commits else "new"))
        elif not records.policies_current:
            pending.append(PendingCommit(path, "policies-pending"))
    return pending


def _selection(spec: TableSpec, within: str) -> PartitionGlob:
    """``within`` as a glob (one partition's path: a glob without wildcards)."""
    keys, default = spec.partition_keys, spec.partition_default_name
    glob = PartitionGlob.parse(within, keys, default)
    if glob is None:
        one = PartitionSpec.parse(within, keys, default)
        glob = PartitionGlob(one.keys, one.values, frozenset())
    return glob
