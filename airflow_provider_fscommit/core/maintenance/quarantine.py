"""Quarantine: give up unreadable staged files so the rest of their partition can be published.

A staged file the sink log lists but that is missing or not readable in its format stops its
partition: nothing of it is published and the error names the file, because publishing
the other files would silently lose that file's rows. When the rows cannot be restored,
only the user can decide to lose them, file by file (``fscommit quarantine``). The ledger
records the decision (file, size, reason, time) under the table lock; planning, discovery
and the status report then treat the file as settled, and it is never published later,
even if it reappears. The file itself stays where it is (``clean-staging`` leaves it too),
for whoever investigates.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.errors import FsCommitError
from airflow_provider_fscommit.core.ledger.ledger import CommitLedger
from airflow_provider_fscommit.core.ledger.lock import TableLock
from airflow_provider_fscommit.core.spark.staging import StagedFile
from airflow_provider_fscommit.core.status.committable import TableStatusReader
from airflow_provider_fscommit.core.storage.filesystem import normalize_uri
from airflow_provider_fscommit.core.storage.object_store import store_errors


@dataclass(frozen=True)
class QuarantinedFile:
    partition: str
    uri: str
    size: int
    new: bool  # False: an earlier quarantine recorded it already

    def to_dict(self) -> dict[str, str | int | bool]:
        return {"partition": self.partition, "uri": self.uri, "size": self.size, "new": self.new}


@store_errors
def quarantine(spec: TableSpec, files: Sequence[str], reason: str) -> list[QuarantinedFile]:
    """Record ``files`` (sink-log URIs or paths) as excluded from publication.

    All or nothing: a file that is not a committed staged file of the table, or that is
    published already, fails the call before anything is recorded.
    """
    if not reason.strip():
        raise FsCommitError("give the reason for the quarantine (--reason): the ledger keeps it")
    table = spec.require_table_path()
    with TableLock(table, "quarantine", single_writer=spec.single_writer):
        reader = TableStatusReader(spec)
        status = reader.read(find_orphans=False)
        staged = reader.staging.committed_files(
            status.snapshot, {p.staged.path for p in status.partitions}
        )
        ledger = CommitLedger(table, spec.single_writer)
        state = ledger.upgrade()
        chosen: dict[str, list[QuarantinedFile]] = {}
        for requested in dict.fromkeys(files):
            partition, staged_file = _find(requested, staged)
            records = ledger.look(partition, state)
            if staged_file.uri in records.published_inputs:
                raise FsCommitError(
                    f"staged file {staged_file.uri} is published already (its rows are in "
                    f"the table's {partition}); only files not yet published can be quarantined"
                )
            new = staged_file.uri not in records.quarantined_inputs
            chosen.setdefault(partition, []).append(
                QuarantinedFile(partition, staged_file.uri, staged_file.size, new)
            )
        for partition, quarantined in chosen.items():
            fresh = [f for f in quarantined if f.new]
            if fresh:
                ledger.write_quarantine(
                    partition,
                    {
                        "files": [{"uri": f.uri, "size": f.size} for f in fresh],
                        "reason": reason,
                        "quarantined_ms": int(time.time() * 1000),
                    },
                )
        ledger.record_done(chosen)
    return [f for quarantined in chosen.values() for f in quarantined]


def _find(requested: str, staged: dict[str, list[StagedFile]]) -> tuple[str, StagedFile]:
    """The partition and committed file ``requested`` names (a URI of any scheme, or a path)."""
    wanted = normalize_uri(requested)
    for partition, files in staged.items():
        for staged_file in files:
            location = normalize_uri(staged_file.uri)
            if location.path == wanted.path and (
                wanted.scheme is None
                or (location.scheme, location.authority) == (wanted.scheme, wanted.authority)
            ):
                return partition, staged_file
    raise FsCommitError(
        f"{requested} is not a committed staged file of this table (not in the sink log "
        "under the staging path); give a file as the error or `fscommit status` names it"
    )
