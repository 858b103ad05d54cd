"""Staging retention: delete staged files once their rows are published, after an age.

The streaming query's output keeps growing; once a file's rows live in the published
table (the ledger records its compaction as committed) the staged copy only serves
rollback and audits. Only such files older than the given age are deleted; the sink log,
the checkpoint, orphans and files not yet published are never touched. Spark reading the
staging directory itself through its sink log would then miss those files: point readers
at the published table.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from airflow_provider_fscommit.core.compat import strict_zip
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.ledger.ledger import CommitLedger
from airflow_provider_fscommit.core.ledger.lock import TableLock
from airflow_provider_fscommit.core.spark.sink_log import SINK_LOG_DIR
from airflow_provider_fscommit.core.status.committable import TableStatusReader
from airflow_provider_fscommit.core.storage.filesystem import (
    delete_if_exists,
    exists,
    normalize_uri,
    relative_path,
    resolve_filesystem,
)
from airflow_provider_fscommit.core.storage.object_store import store_errors


@dataclass
class CleanupReport:
    """What a cleanup deleted (or, in a dry run, would delete)."""

    older_than: timedelta
    dry_run: bool
    files: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "older_than_s": self.older_than.total_seconds(),
            "dry_run": self.dry_run,
            "files": self.files,
            "count": len(self.files),
            "bytes": sum(f["size"] for f in self.files),
        }


@store_errors
def clean_staging(
    spec: TableSpec, older_than: timedelta, dry_run: bool, now_ms: int | None = None
) -> CleanupReport:
    """Delete (unless ``dry_run``) published staged files modified before now - age."""
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    cutoff_ms = now_ms - older_than // timedelta(milliseconds=1)
    report = CleanupReport(older_than, dry_run)
    ledger = CommitLedger(spec.require_table_path(), spec.single_writer)
    reader = TableStatusReader(spec)
    filesystem, root = resolve_filesystem(spec.staging_path)
    staging_root = normalize_uri(spec.staging_path)
    # Under the table lock: a compaction planning from these files must not run meanwhile.
    with TableLock(ledger.table_path, "clean-staging", single_writer=spec.single_writer):
        state = ledger.upgrade()
        status = reader.read(find_orphans=False)
        # Partitions with published staged files not cleaned yet (or unknown to the state):
        # the others' records are never read, so a routine clean-up costs what changed.
        candidates = {
            p.staged.path
            for p in status.partitions
            if (recorded := state.get(p.staged.path)) is None
            or recorded.published_inputs > recorded.cleaned_files
        }
        pending: dict[str, set[str]] = {}
        chosen: list[tuple[str, str]] = []  # each report file's partition and URI
        gone: dict[str, list[str]] = {}  # partition -> URIs deleted (by hand, or below)
        files = status.snapshot.files if status.snapshot is not None else None
        rows = files.to_pylist() if files is not None else []
        for entry in rows:
            relative = relative_path(normalize_uri(entry["path"]), staging_root)
            if relative is None or relative.split("/")[0] == SINK_LOG_DIR:
                continue
            partition = relative.rpartition("/")[0]
            if partition not in candidates:
                continue
            if partition not in pending:
                records = ledger.look(partition, state)
                pending[partition] = records.published_inputs - records.cleaned_inputs
            if entry["path"] not in pending[partition] or entry["modificationTime"] >= cutoff_ms:
                continue
            if not exists(filesystem, f"{root.rstrip('/')}/{relative}"):
                gone.setdefault(partition, []).append(entry["path"])  # deleted by hand
                continue
            report.files.append(
                {
                    "path": relative,
                    "size": entry["size"],
                    "modification_time_ms": entry["modificationTime"],
                }
            )
            chosen.append((partition, entry["path"]))
        if not dry_run:
            for file, (partition, uri) in strict_zip(report.files, chosen):
                delete_if_exists(filesystem, f"{root.rstrip('/')}/{file['path']}")
                gone.setdefault(partition, []).append(uri)
            for partition, uris in sorted(gone.items()):
                ledger.write_cleaning(
                    partition, {"files": sorted(uris), "cleaned_ms": int(time.time() * 1000)}
                )
            ledger.record_done(gone)
    return report
