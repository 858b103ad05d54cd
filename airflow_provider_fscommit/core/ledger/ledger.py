"""The commit ledger: what has been published, kept next to the published data.

Like the ``max-committed-checkpoint-id`` an Iceberg sink keeps in its snapshots, it makes
every step idempotent: retries, backfills and re-triggers consult it before doing anything.
It lives in ``<table>/_fscommit/`` (names starting with ``_`` are hidden from Spark, Hive and
Trino). Per partition, ``plan-<seq>.json`` is the write-ahead intent of one compaction and
``commit-<seq>.json`` its commit point: once that file exists, the plan's inputs are
published into its outputs, whatever happens afterwards. A plan without a commit record
is unfinished; the next run abandons it by creating its ``commit-<seq>.json`` as an
*abandoned* mark, and deletes its hidden outputs.

Every record is **created once** (:mod:`conditional_writes`), never overwritten, so the
commit point decides between a run that finishes a plan and a run that abandons it: of
the two, exactly one creates ``commit-<seq>.json``. Sequence numbers are never reused.
``policy-<n>.json`` records that the commit policies made a compaction visible (``n``
counts commits, the record names the compaction). ``quarantine-<n>.json`` records staged
files a user excluded (``fscommit quarantine``): unreadable ones whose rows cannot be
recovered, so that the rest of the partition can be published; they are never published
afterwards. ``expire-<n>.json`` records that partition expiration dropped the partition and
deleted its published files (:mod:`expiration`): nothing of it is published again.
``clean-<n>.json`` records published staged files that staging retention deleted
(:mod:`retention`), so that it never looks at them again.

A *rewrite* (a fragmented partition compacted again, :mod:`fragmentation`) publishes into
a directory of its own under the partition's; later compactions publish there too, and
the catalog's partition location moves to it when the policies commit it. Only then are
the files it replaced deleted, and ``retire-<n>.json`` records that they are: until
then readers through the catalog still read them.

One table-wide record is overwritten rather than created once: ``completeness.json``, the
table's published completeness (``status.completeness``), which only the committer writes,
under the table lock, and only ever moves forward.

Runs that only need to know *whether* a partition needs work ask the table's state
(:mod:`.table_state`: every partition's records summarized, read in what changed) through
:meth:`CommitLedger.state`; a run records the partitions it wrote with
:meth:`CommitLedger.record`, and acts on a partition only after reading its records with
:meth:`CommitLedger.look`. This module and that one are the only readers of ``_fscommit/``.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pyarrow.fs as pafs

from airflow_provider_fscommit.core.compaction.plan import CompactionPlan
from airflow_provider_fscommit.core.errors import FsCommitError, LedgerError
from airflow_provider_fscommit.core.faults import fault_point
from airflow_provider_fscommit.core.ledger.table_state import (
    PartitionSummary,
    StateLog,
    TableState,
)
from airflow_provider_fscommit.core.storage.conditional_writes import (
    ConditionalStore,
    conditional_store,
)
from airflow_provider_fscommit.core.storage.filesystem import (
    exists,
    list_names,
    read_json,
    resolve_filesystem,
    write_json,
)

log = logging.getLogger(__name__)

LEDGER_DIR = "_fscommit"
_COMPLETENESS = "completeness.json"
_EXPIRATION_CHECK = "expiration-check.json"
_APPEND_ATTEMPTS = 10
_RECORD = re.compile(r"(plan|commit|policy|quarantine|expire|clean|retire)-(\d{8})\.json")


@dataclass
class PartitionLedger:
    """The ledger records of one partition."""

    plans: dict[int, CompactionPlan] = field(default_factory=dict)
    commits: dict[int, dict[str, Any]] = field(default_factory=dict)
    abandoned: dict[int, dict[str, Any]] = field(default_factory=dict)
    policy_commits: dict[int, dict[str, Any]] = field(default_factory=dict)
    quarantines: dict[int, dict[str, Any]] = field(default_factory=dict)
    expirations: dict[int, dict[str, Any]] = field(default_factory=dict)
    cleanings: dict[int, dict[str, Any]] = field(default_factory=dict)
    retirements: dict[int, dict[str, Any]] = field(default_factory=dict)

    @property
    def open_plans(self) -> list[CompactionPlan]:
        """Plans neither committed nor abandoned: a crashed run's, or one still running."""
        closed = self.commits.keys() | self.abandoned.keys()
        return [p for seq, p in sorted(self.plans.items()) if seq not in closed]

    @property
    def committed_plans(self) -> list[CompactionPlan]:
        return [p for seq, p in sorted(self.plans.items()) if seq in self.commits]

    @property
    def published_inputs(self) -> set[str]:
        """Staged files published (a rewrite's published inputs are not staged ones)."""
        return {f.uri for plan in self.committed_plans for f in plan.staged_inputs}

    @property
    def latest_rewrite(self) -> CompactionPlan | None:
        """The latest committed rewrite: the partition's files are its outputs and later ones."""
        return next((p for p in reversed(self.committed_plans) if p.rewrites), None)

    @property
    def directory(self) -> str:
        """Where the partition's files are, under its directory ("": in it)."""
        rewrite = self.latest_rewrite
        return rewrite.directory if rewrite is not None else ""

    @property
    def live_plans(self) -> list[CompactionPlan]:
        """The committed plans whose outputs the partition holds (its latest rewrite's on)."""
        rewrite = self.latest_rewrite
        first = rewrite.seq if rewrite is not None else -1
        return [p for p in self.committed_plans if p.seq >= first]

    @property
    def live_commits(self) -> list[dict[str, Any]]:
        """The commit records of :attr:`live_plans`."""
        return [self.commits[plan.seq] for plan in self.live_plans]

    @property
    def superseded(self) -> list[str]:
        """Files a committed rewrite replaced that are not deleted yet (paths under the
        partition's directory)."""
        rewrite = self.latest_rewrite
        if rewrite is None:
            return []
        retired = {path for r in self.retirements.values() for path in r["files"]}
        paths = (
            "/".join(x for x in (self.plans[seq].directory, output["name"]) if x)
            for seq in sorted(self.commits)
            if seq < rewrite.seq
            for output in self.commits[seq].get("outputs", [])
        )
        return [path for path in paths if path not in retired]

    @property
    def retire_pending(self) -> bool:
        """Whether replaced files wait for deletion and may go: the policies committed the
        rewrite (the catalog reads its directory)."""
        rewrite = self.latest_rewrite
        if rewrite is None:
            return False
        committed = (r.get("compaction_seq") for r in self.policy_commits.values())
        return any(seq is not None and seq >= rewrite.seq for seq in committed) and bool(
            self.superseded
        )

    @property
    def quarantined_inputs(self) -> set[str]:
        return {f["uri"] for record in self.quarantines.values() for f in record["files"]}

    @property
    def cleaned_inputs(self) -> set[str]:
        """Published staged files that staging retention deleted (or found gone)."""
        return {uri for record in self.cleanings.values() for uri in record["files"]}

    @property
    def settled_inputs(self) -> set[str]:
        """Staged files that need no more work: published, or excluded by a user."""
        return self.published_inputs | self.quarantined_inputs

    @property
    def expired(self) -> dict[str, Any] | None:
        """The expiration record, once the partition is expired (for good)."""
        return self.expirations[min(self.expirations)] if self.expirations else None

    @property
    def expired_at_ms(self) -> int | None:
        expired = self.expired
        return None if expired is None else expired["expired_at_ms"]

    @property
    def last_update_ms(self) -> int | None:
        """When the partition last changed: its latest policy commit, else publication."""
        times = [r.get("committed_at_ms") for r in self.policy_commits.values()] or [
            r.get("committed_ms") for r in self.commits.values()
        ]
        return max((t for t in times if t is not None), default=None)

    @property
    def latest_commit(self) -> int | None:
        """The seq of the latest published compaction (None: nothing published)."""
        return max(self.commits, default=None)

    @property
    def policies_current(self) -> bool:
        """Whether the policies have committed the latest publication (or the empty one)."""
        latest = self.latest_commit
        return any(r.get("compaction_seq") == latest for r in self.policy_commits.values())

    def summary(self) -> PartitionSummary:
        """What the table state keeps of these records (:class:`PartitionSummary`)."""
        live = self.live_commits
        outputs = [o for r in live for o in r.get("outputs", [])]
        policy = [self.policy_commits[seq] for seq in sorted(self.policy_commits)]
        last = max(policy, key=lambda r: r.get("committed_at_ms") or 0, default=None)
        latest = self.latest_commit
        plan = self.plans[latest] if latest is not None else None
        return PartitionSummary(
            settled_files=len(self.settled_inputs),
            published_inputs=len(self.published_inputs),
            quarantined_files=len(self.quarantined_inputs),
            cleaned_files=len(self.cleaned_inputs),
            open_plans=len(self.open_plans),
            latest_commit=latest,
            policies_current=self.policies_current,
            policy_commits=len(policy),
            published_files=len(outputs),
            published_bytes=sum(o.get("bytes", 0) for o in outputs),
            published_rows=sum(o.get("rows", 0) for o in outputs),
            last_commit_ms=last.get("committed_at_ms") if last else None,
            last_origin=last.get("origin") if last else None,
            last_update_ms=self.last_update_ms,
            published_ms=self.commits[latest].get("committed_ms") if latest is not None else None,
            expired_at_ms=self.expired_at_ms,
            watermark_ms=plan.watermark_ms if plan else None,
            max_batch_id=plan.sink_latest_batch if plan else None,
            format=plan.format.value if plan else None,
            published_compactions=len(live),
            retire_pending=self.retire_pending,
            receipts=last.get("receipts") if last else None,
        )

    @property
    def next_seq(self) -> int:
        """A sequence number no record has used (an abandoned plan's is never reused)."""
        return max(self.plans.keys() | self.commits.keys() | self.abandoned.keys(), default=-1) + 1


class CommitLedger:
    """Reads and writes the ledger of one published table.

    :param single_writer: the table spec's declaration that runs never overlap, for
        stores without conditional writes (see :mod:`conditional_writes`).
    """

    def __init__(self, table_path: str, single_writer: bool = False) -> None:
        self.table_path = table_path
        self.single_writer = single_writer
        self.filesystem, root = resolve_filesystem(table_path)
        self.root = root.rstrip("/")
        self.ledger_root = f"{self.root}/{LEDGER_DIR}"
        self._store: ConditionalStore | None = None
        self.state_log = StateLog(self.filesystem, self.ledger_root)

    @property
    def store(self) -> ConditionalStore:
        """The create-once writes of the ledger's store (looked up on the first write)."""
        if self._store is None:
            self._store = conditional_store(self.filesystem, self.ledger_root, self.single_writer)
        return self._store

    def partition_dir(self, partition: str) -> str:
        """The partition's published directory (its files are in it, or in its latest
        rewrite's directory under it: :meth:`files_dir`)."""
        return f"{self.root}/{partition}"

    def files_dir(self, partition: str, directory: str) -> str:
        """Where a partition's files are: ``directory`` (a plan's, or the partition's
        current one, :attr:`PartitionLedger.directory`) under its published directory."""
        return "/".join(x for x in (self.partition_dir(partition), directory) if x)

    def files_location(self, partition: str, directory: str) -> str:
        """:meth:`files_dir` as a URI of the table's (what catalogs and readers are given)."""
        return "/".join(x for x in (self.table_path.rstrip("/"), partition, directory) if x)

    def _records_dir(self, partition: str) -> str:
        return f"{self.ledger_root}/partitions/{partition}"

    def read(self, partition: str) -> PartitionLedger:
        ledger = PartitionLedger()
        directory = self._records_dir(partition)
        for name in list_names(self.filesystem, directory):
            match = _RECORD.fullmatch(name)
            if not match:
                continue
            kind, seq = match.group(1), int(match.group(2))
            try:
                document = read_json(self.filesystem, f"{directory}/{name}")
            except (ValueError, KeyError) as exc:
                raise LedgerError(
                    f"ledger record {directory}/{name} is unreadable ({exc}); restore it from "
                    "a backup (never edit the ledger by hand)"
                ) from None
            if kind == "plan":
                ledger.plans[seq] = CompactionPlan.from_dict(document)
            elif kind == "commit" and document.get("abandoned"):
                ledger.abandoned[seq] = document
            elif kind == "commit":
                ledger.commits[seq] = document
            elif kind == "policy":
                ledger.policy_commits[seq] = document
            elif kind == "expire":
                ledger.expirations[seq] = document
            elif kind == "clean":
                ledger.cleanings[seq] = document
            elif kind == "retire":
                ledger.retirements[seq] = document
            else:
                ledger.quarantines[seq] = document
        orphaned = sorted(set(ledger.commits) - set(ledger.plans))
        if orphaned:
            raise LedgerError(
                f"ledger of {partition} has commit records {orphaned} without their plans in "
                f"{directory}; restore the missing plan files from a backup"
            )
        return ledger

    def state(self) -> TableState:
        """Every partition's summary: the state log, read in what changed since its
        checkpoint. A table without one yet (today's layout until a run upgrades it, or a
        new table) is summarized from every partition's records, and nothing is written."""
        state = self.state_log.read()
        return state if state is not None else self._summarize_all()

    def look(self, partition: str, state: TableState) -> PartitionLedger:
        """A partition's records, read to act on it, checked against ``state``.

        A summary never leads the records it was made from, so records behind it were
        deleted or lost: refused, and nothing is published on top of them.
        """
        records = self.read(partition)
        recorded = state.get(partition)
        if recorded is not None and records.summary().behind(recorded):
            raise LedgerError(
                f"the ledger records of {partition} in {self._records_dir(partition)} miss "
                f"what the table state {self.state_log.directory} recorded of them "
                f"({recorded.settled_files} staged file(s) published or quarantined, "
                f"compaction {recorded.latest_commit}, {recorded.policy_commits} policy "
                "commit(s)): records were deleted or lost. Restore them from a backup; "
                "nothing was published"
            )
        return records

    def upgrade(self) -> TableState:
        """The table's state, after creating its state log if the table has none (call
        under the table lock).

        A table of the per-partition layout is read once, here, and its state created
        once as checkpoint 0: a run killed before that leaves the table as it was, and the
        next run upgrades it. A partition whose records cannot be read is left out: every
        run then looks at it (and reports it) as before.
        """
        state = self.state_log.read()
        if state is not None:
            return state
        summarized = self._summarize_all()
        fault_point("during-upgrade")
        self.state_log.create_checkpoint(TableState(0, summarized.partitions, 0), self.store)
        state = self.state_log.read()
        assert state is not None  # just created, by this run or another
        return state

    def record(
        self, partitions: Iterable[str], known: Mapping[str, PartitionLedger] | None = None
    ) -> None:
        """Summarize the partitions' records as they are now into the state log.

        Call after writing their records (the summary then lags them at worst), under the
        table lock; one entry for all of them (none, and nothing read, for no partition).
        ``known``: records this run holds with every record it wrote added (the
        ``records`` it gave the writes), summarized without reading them again; records
        another run added meanwhile are then missing, which a lagging summary allows.
        """
        wanted = sorted(set(partitions))
        known = known or {}
        if wanted:
            changes = {p: (known.get(p) or self.read(p)).summary() for p in wanted}
            self.state_log.append(changes, self.upgrade(), self.store)

    def record_done(
        self, partitions: Iterable[str], known: Mapping[str, PartitionLedger] | None = None
    ) -> None:
        """:meth:`record` at the end of a run, whose records are written: a failure only
        leaves the state behind them (which it may be), so it is logged, not raised; the
        next run that looks at those partitions records them."""
        try:
            self.record(partitions, known)
        except (FsCommitError, OSError) as exc:
            log.warning("the table state does not record this run's partitions yet: %s", exc)

    def _summarize_all(self) -> TableState:
        partitions: dict[str, PartitionSummary] = {}
        errors: dict[str, str] = {}
        for partition in self.partitions():
            try:
                partitions[partition] = self.read(partition).summary()
            except LedgerError as exc:
                errors[partition] = str(exc)
        return TableState(-1, partitions, errors=errors)

    def partitions(self) -> list[str]:
        """Every partition the ledger has records of, sorted (committed empty ones too).

        The status report needs them: a partition may be committed with nothing staged (an
        idle hour committed empty) or its staged files deleted by retention.
        """
        root = f"{self.ledger_root}/partitions"
        try:
            infos = self.filesystem.get_file_info(pafs.FileSelector(root, recursive=True))
        except FileNotFoundError:
            return []
        found = {
            info.path.rpartition("/")[0][len(root) + 1 :]
            for info in infos
            if info.type == pafs.FileType.File and _RECORD.fullmatch(info.base_name)
        }
        return sorted(found)

    def write_plan(self, plan: CompactionPlan) -> bool:
        """Record the intent; False when another run created this plan number first."""
        return self._create(self._path(plan.partition, "plan", plan.seq), plan.to_dict())

    def write_commit(self, plan: CompactionPlan, record: dict[str, Any]) -> bool:
        """The commit point; False when another run abandoned the plan first."""
        return self._create(self._path(plan.partition, "commit", plan.seq), record)

    def abandon(self, plan: CompactionPlan, reason: str) -> bool:
        """Close an open plan unpublished; False when its run committed it first."""
        record = {
            "seq": plan.seq,
            "plan_id": plan.plan_id,
            "abandoned": True,
            "abandoned_ms": int(time.time() * 1000),
            "reason": reason,
        }
        return self._create(self._path(plan.partition, "commit", plan.seq), record)

    def write_policy_commit(
        self, partition: str, record: dict[str, Any], records: PartitionLedger | None = None
    ) -> None:
        """Record that the policies made the partition's latest compaction visible.

        ``records``: the partition's records as this run read them; the next number is
        taken from them (read again only when another run took it), and the new record is
        added to them, so that :meth:`record` can summarize them without a read.
        """
        self._append(partition, "policy", record, lambda ledger: ledger.policy_commits, records)

    def write_quarantine(self, partition: str, record: dict[str, Any]) -> None:
        """Record staged files of ``partition`` excluded from publication (call under the lock)."""
        self._append(partition, "quarantine", record, lambda ledger: ledger.quarantines)

    def write_cleaning(self, partition: str, record: dict[str, Any]) -> None:
        """Record staged files of ``partition`` that retention deleted (under the lock)."""
        self._append(partition, "clean", record, lambda ledger: ledger.cleanings)

    def write_retirement(self, partition: str, record: dict[str, Any]) -> None:
        """Record files a rewrite replaced as deleted (call under the lock, after the deletes)."""
        self._append(partition, "retire", record, lambda ledger: ledger.retirements)

    def write_expiration(self, partition: str, record: dict[str, Any]) -> None:
        """Record that ``partition`` is expired (call under the lock, after the deletes)."""
        self._append(partition, "expire", record, lambda ledger: ledger.expirations)

    def _append(
        self,
        partition: str,
        kind: str,
        record: dict[str, Any],
        existing: Callable[[PartitionLedger], dict[int, dict[str, Any]]],
        records: PartitionLedger | None = None,
    ) -> None:
        """Create the next ``kind-<n>.json``; a number taken meanwhile moves to the next.

        ``records``: the partition's records as the caller read them (the first number is
        taken from them), updated with the new record. A number another run took reads
        them again, and leaves the caller's behind: a summary made of them lags, which the
        next run that looks at the partition corrects.
        """
        for _ in range(_APPEND_ATTEMPTS):
            current = records if records is not None else self.read(partition)
            n = max(existing(current), default=-1) + 1
            if self._create(self._path(partition, kind, n), record):
                if records is not None:
                    existing(records)[n] = record
                return
            records = None  # another run wrote one: the records decide the next number
        raise LedgerError(
            f"could not add a {kind} record to the ledger of {partition}: other runs kept "
            "adding records at the same time; rerun"
        )

    def _create(self, path: str, document: dict[str, Any]) -> bool:
        data = json.dumps(document, indent=1, sort_keys=True).encode()
        return self.store.create(path, data) is not None

    def write_run(self, run_id: str, result: dict[str, Any]) -> None:
        """Keep a run's summary, so a caller in another process (or host) can read it."""
        write_json(self.filesystem, self._run_path(run_id), result)

    def read_run(self, run_id: str) -> dict[str, Any] | None:
        if not exists(self.filesystem, self._run_path(run_id)):
            return None
        return read_json(self.filesystem, self._run_path(run_id))

    def read_completeness(self) -> dict[str, Any] | None:
        """The table's published completeness record (None: no commit run published one)."""
        path = f"{self.ledger_root}/{_COMPLETENESS}"
        if not exists(self.filesystem, path):
            return None
        try:
            return read_json(self.filesystem, path)
        except ValueError as exc:
            raise LedgerError(
                f"ledger record {path} is unreadable ({exc}); restore it from a backup, or "
                "delete it: the next commit run writes it again from the table's state"
            ) from None

    def write_completeness(self, record: dict[str, Any]) -> None:
        """Replace the completeness record (call under the lock: read, advance, write)."""
        write_json(self.filesystem, f"{self.ledger_root}/{_COMPLETENESS}", record)

    def read_expiration_check(self) -> int | None:
        """When partition expiration last looked for expired partitions (epoch ms)."""
        path = f"{self.ledger_root}/{_EXPIRATION_CHECK}"
        if not exists(self.filesystem, path):
            return None
        return int(read_json(self.filesystem, path)["at_ms"])

    def write_expiration_check(self, at_ms: int) -> None:
        write_json(self.filesystem, f"{self.ledger_root}/{_EXPIRATION_CHECK}", {"at_ms": at_ms})

    def _run_path(self, run_id: str) -> str:
        return f"{self.ledger_root}/runs/{run_id}.json"

    def _path(self, partition: str, kind: str, seq: int) -> str:
        return f"{self._records_dir(partition)}/{kind}-{seq:08d}.json"
