"""Retiring the files a committed rewrite replaced (BucketingSink's clean-up of what a
finished bucket no longer needs).

A rewrite (a fragmented partition compacted again into a directory of its own,
:mod:`publisher`) leaves the files it replaced where they are: the catalog's readers read
them until the policies move the partition's location to the rewrite's directory. Only
then are they deleted, and the ledger records it. Idempotent: a run killed in between
leaves the partition's summary saying ``retire_pending``, and the next run deletes the rest.
"""

from __future__ import annotations

import time

from airflow_provider_fscommit.core.faults import fault_point
from airflow_provider_fscommit.core.ledger.ledger import CommitLedger, PartitionLedger
from airflow_provider_fscommit.core.ledger.lock import TableLock
from airflow_provider_fscommit.core.storage.filesystem import (
    delete_dir_if_exists,
    delete_if_exists,
)


def retire(ledger: CommitLedger, path: str, records: PartitionLedger, lock: TableLock) -> None:
    """Delete the files a committed rewrite replaced (and the directories of earlier
    rewrites they leave empty), then record that they are gone.

    Only after the policies committed the rewrite: readers through the catalog read its
    directory by then.
    """
    rewrite = records.latest_rewrite
    assert rewrite is not None
    files = records.superseded
    directory = ledger.partition_dir(path)
    filesystem = ledger.filesystem
    for position, name in enumerate(files):
        delete_if_exists(filesystem, f"{directory}/{name}")
        if position == 0:
            fault_point("during-retire")
    for emptied in sorted({name.rpartition("/")[0] for name in files} - {"", rewrite.directory}):
        delete_dir_if_exists(filesystem, f"{directory}/{emptied}")
    lock.check()
    record = {"rewrite_seq": rewrite.seq, "files": files, "retired_ms": int(time.time() * 1000)}
    ledger.write_retirement(path, record)
