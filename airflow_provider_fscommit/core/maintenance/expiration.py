"""Partition expiration (Paimon's ``partition.expiration-time``): retire old partitions.

A published partition older than the expiration time is dropped from its catalogs, its
published files are deleted, and the ledger records it as expired; in that order, under
the table lock, so that a reader never finds a partition whose files are gone. Each step
is idempotent: a run that dies in between leaves the partition unrecorded, and the next
run does it again (the drop finds nothing to drop, the delete nothing to delete).

Age is measured, as ``partition.expiration-strategy`` says, from the partition's time
(``values-time``: the time extractor's, on the watermark time zone's clock) or from its
last commit (``update-time``). Only partitions the ledger knows are expired: the staging
directory is never touched (that is ``clean-staging``'s job), nor a partition younger than
the limit.

Once a partition is past the limit, compaction and the commit policies refuse it
(``status.expiry.expired_reason``), recorded or not: late data for it is never published
again, and a crash halfway through an expiration cannot be undone by a commit before the
next run.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import pyarrow.fs as pafs

from airflow_provider_fscommit.core.config.quantities import iso_ms
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.errors import ConfigError, LedgerError, PartitionTimeError
from airflow_provider_fscommit.core.faults import fault_point
from airflow_provider_fscommit.core.ledger.ledger import CommitLedger
from airflow_provider_fscommit.core.ledger.lock import TableLock
from airflow_provider_fscommit.core.partition.partition_spec import PartitionSpec
from airflow_provider_fscommit.core.status.expiry import PartitionHistory, expiry_start_ms
from airflow_provider_fscommit.core.storage.filesystem import exists
from airflow_provider_fscommit.core.storage.object_store import store_errors

if TYPE_CHECKING:  # a type only: expiring without a metastore needs no Thrift client
    from airflow_provider_fscommit.core.commit.catalog import CatalogPolicy

_MS = timedelta(milliseconds=1)
# When an applied expiration last looked at the table (partition.expiration-check-interval).


@dataclass
class ExpirationReport:
    """What an expiration dropped and deleted (or, in a dry run, would)."""

    expiration_time: timedelta
    strategy: str
    dry_run: bool
    now_ms: int
    partitions: list[dict[str, Any]] = field(default_factory=list)
    errors: list[dict[str, str]] = field(default_factory=list)
    # Set when the check interval had not passed since the last applied expiration.
    skipped_until_ms: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "expiration_time_s": self.expiration_time.total_seconds(),
            "strategy": self.strategy,
            "dry_run": self.dry_run,
            "now": iso_ms(self.now_ms),
            "partitions": self.partitions,
            "count": len(self.partitions),
            "files": sum(p["files"] for p in self.partitions),
            "bytes": sum(p["bytes"] for p in self.partitions),
            "errors": self.errors,
            "skipped_until": iso_ms(self.skipped_until_ms),
        }


@store_errors
def expire_partitions(
    spec: TableSpec,
    *,
    dry_run: bool = True,
    catalogs: Sequence[CatalogPolicy] = (),
    force: bool = False,
    now_ms: int | None = None,
    origin: Mapping[str, Any] | None = None,
) -> ExpirationReport:
    """Expire (unless ``dry_run``) the published partitions past the expiration time.

    ``catalogs`` (``policy_factory.catalog_policies``) drop them from the tables the
    chain's catalog policies add them to (every catalog of the chain), before any file is
    deleted. ``force`` runs within the check interval.
    """
    if spec.expiration_time is None:
        raise ConfigError(
            "partition expiration needs partition.expiration-time (--expiration-time), how "
            "old a partition may get before it is dropped, e.g. '30 d'"
        )
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    report = ExpirationReport(spec.expiration_time, spec.expiration_strategy, dry_run, now_ms)
    ledger = CommitLedger(spec.require_table_path(), spec.single_writer)
    if dry_run:
        _find(spec, ledger, report)
        return report
    with TableLock(ledger.table_path, "expire", single_writer=spec.single_writer) as lock:
        checked = ledger.read_expiration_check()
        interval_ms = spec.expiration_check_interval // _MS
        if not force and checked is not None and 0 <= now_ms - checked < interval_ms:
            report.skipped_until_ms = checked + interval_ms
            return report
        _find(spec, ledger, report)
        if catalogs and report.partitions:
            values = [list(p["values"].values()) for p in report.partitions]
            for catalog in catalogs:
                catalog.drop(spec, values)
            fault_point("after-expire-drop")
        for partition in report.partitions:
            directory = ledger.partition_dir(partition["partition"])
            if exists(ledger.filesystem, directory):
                ledger.filesystem.delete_dir(directory)
            fault_point("after-expire-delete")
            lock.check()
            record = partition | {"expired_at_ms": now_ms, "strategy": spec.expiration_strategy}
            ledger.write_expiration(
                partition["partition"], record | ({"origin": dict(origin)} if origin else {})
            )
        ledger.record_done(p["partition"] for p in report.partitions)
        ledger.write_expiration_check(now_ms)
    return report


def _find(spec: TableSpec, ledger: CommitLedger, report: ExpirationReport) -> None:
    """Add the partitions past the limit and not expired yet, with their published files.

    The table state names the candidates; each one's records decide (the state may lag
    them: an update-time partition committed again since is not expired).
    """
    state = ledger.state()
    report.errors.extend({"partition": p, "error": e} for p, e in sorted(state.errors.items()))
    for path, recorded in sorted(state.partitions.items()):
        try:
            if recorded.expired_at_ms is not None or _past(spec, path, recorded, report) is None:
                continue
            records = ledger.look(path, state)
            start = None if records.expired is not None else _past(spec, path, records, report)
            if start is None:
                continue
        except (LedgerError, PartitionTimeError) as exc:
            report.errors.append({"partition": path, "error": str(exc)})
            continue
        files = _files(ledger, path)
        report.partitions.append(
            {
                "partition": path,
                "values": PartitionSpec.parse(
                    path, spec.partition_keys, spec.partition_default_name
                ).as_dict(),
                "age_from_ms": start,
                "age_from": iso_ms(start),
                "files": len(files),
                "bytes": sum(files.values()),
            }
        )


def _past(
    spec: TableSpec, partition: str, history: PartitionHistory, report: ExpirationReport
) -> int | None:
    """When the partition's age (from ``history``) started, if it is past the expiration
    time (``status.expiry``'s rule: the one compaction and the commit refuse by)."""
    return expiry_start_ms(spec, partition, history, report.now_ms)


def _files(ledger: CommitLedger, partition: str) -> dict[str, int]:
    """Every file under the partition's published directory, with its size."""
    selector = pafs.FileSelector(ledger.partition_dir(partition), recursive=True)
    try:
        infos = ledger.filesystem.get_file_info(selector)
    except FileNotFoundError:
        return {}
    return {i.path: i.size or 0 for i in infos if i.type == pafs.FileType.File}
