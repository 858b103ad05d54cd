"""The partition committer (Flink's ``PartitionCommitter``): runs the policy chain.

A partition is committed once its published files are in the ledger; the policies run
for all partitions of a call together (the metastore in one batch), and only when every
policy succeeded is the commit recorded in the ledger. A partition whose latest
compaction is already recorded as committed is skipped, so retries, backfills and
re-triggers change nothing; late data makes a new compaction, which is committed again
(statistics and success file refreshed), as Flink does.

An hour in which the stream wrote nothing still has to be marked done, or downstream
waits forever (a known Flink gap): with ``commit_empty``, a partition with nothing
published is committed empty (its directory, metastore partition and success file).
A partition past its expiration (``status.expiry``) is never committed again.

A rewrite (a fragmented partition compacted again into a directory of its own,
:mod:`publisher`) is committed as any compaction, with the partition's location moved to
that directory: the catalog's readers switch over atomically. Then, and only then, the
files it replaced are deleted, and the ledger records it (a run killed in between
deletes the rest next time).

Each run moves the table's published completeness (``status.completeness``: its
watermark and the partition time through which every partition is committed) forward,
so catalogs can carry it to readers outside Airflow. It is one value per run, computed
before the policies (a catalog that commits it with the data, an Iceberg transaction, gets
it in the batch), recorded in the ledger after them and copied into every catalog, never
over a later one a catalog holds.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from airflow_provider_fscommit.core.commit.catalog import CatalogPolicy
from airflow_provider_fscommit.core.commit.policy import PartitionCommitPolicy
from airflow_provider_fscommit.core.compat import StrEnum
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.errors import FsCommitError
from airflow_provider_fscommit.core.faults import fault_point
from airflow_provider_fscommit.core.ledger.ledger import CommitLedger, PartitionLedger
from airflow_provider_fscommit.core.ledger.lock import TableLock
from airflow_provider_fscommit.core.ledger.table_state import TableState
from airflow_provider_fscommit.core.partition.partition_spec import PartitionSpec
from airflow_provider_fscommit.core.publish.published import (
    CommitBatch,
    CommitContext,
    CommitSummary,
    commit_summary,
)
from airflow_provider_fscommit.core.publish.retirement import retire
from airflow_provider_fscommit.core.status.committable import TableStatus, TableStatusReader
from airflow_provider_fscommit.core.status.completeness import (
    Completeness,
    TableCompleteness,
    current_completeness,
    published_completeness,
)
from airflow_provider_fscommit.core.status.expiry import expired_reason
from airflow_provider_fscommit.core.status.freshness import committable_since_ms
from airflow_provider_fscommit.core.status.table_report import (
    SettledPartitions,
    read_partition_states,
    read_unsettled,
)
from airflow_provider_fscommit.core.status.table_watch import TableWatch, table_watch
from airflow_provider_fscommit.core.status.work import (
    EVERY_STEP,
    Work,
    answered_by_summary,
    partition_work,
)
from airflow_provider_fscommit.core.storage.object_store import explain, store_errors

log = logging.getLogger(__name__)


class CommitState(StrEnum):
    """What one commit did to one partition."""

    COMMITTED = "committed"  # the policies ran for what was published
    COMMITTED_EMPTY = "committed-empty"  # nothing published; the policies marked it done
    UP_TO_DATE = "up-to-date"  # the policies ran for everything published already
    NOTHING_PUBLISHED = "nothing-published"  # no compaction published anything yet
    EXPIRED = "expired"  # partition expiration retired it: it is not announced again

    @property
    def committed(self) -> bool:
        return self in (CommitState.COMMITTED, CommitState.COMMITTED_EMPTY)


@dataclass(frozen=True)
class CommitOutcome:
    """What one commit did to one partition, with the facts the policies were given.

    ``summary`` is None when the policies had nothing to run for (nothing published, or
    expired: then ``reason`` says why).
    """

    partition: str
    state: CommitState
    summary: CommitSummary | None = None
    reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The outcome as XCom and ``fscommit commit --json`` show it: the summary's keys."""
        facts = self.summary.to_dict() if self.summary is not None else {}
        if self.reason is not None:
            facts["reason"] = self.reason
        return {"partition": self.partition, "state": self.state.value, **facts}


@dataclass(frozen=True)
class CommitTimings:
    """What a run's policies took, and how late they made its partitions visible.

    For the metrics a platform team alerts on, which the committer alone can measure:
    ``policy_seconds`` by policy kind (each ran once, for the run's whole batch; none when
    nothing was to commit), and ``freshness_s`` by partition committed for the first time:
    the seconds from the moment it became committable (:mod:`..status.freshness`) to the
    moment its policies had all committed it. A recommit (late data) has no freshness: it
    would measure how late the rows came, not how long the commit took.
    """

    policy_seconds: Mapping[str, float] = field(default_factory=dict)
    freshness_s: Mapping[str, float] = field(default_factory=dict)


class PartitionCommitter:
    def __init__(self, spec: TableSpec, policies: Sequence[PartitionCommitPolicy]) -> None:
        self.spec = spec
        self.policies = list(policies)
        self.table_path = spec.require_table_path()
        self.ledger = CommitLedger(self.table_path, spec.single_writer)
        # After each commit(): the table's published completeness (a catalog copies its
        # table_parameters()) and what the state gave; None before the first run.
        self.completeness: TableCompleteness | None = None
        # After each commit(): what its policies took and its partitions' freshness.
        self.timings = CommitTimings()

    @store_errors
    def commit(
        self,
        partitions: Sequence[str],
        commit_empty: bool = False,
        origin: Mapping[str, Any] | None = None,
    ) -> list[CommitOutcome]:
        """Run the policies for the partitions that have something new to commit.

        Under the table lock, so that two runs committing the same partition at once
        (a scheduled run and a backfill) record it once. ``origin`` says who commits (an
        Airflow task: ``dag_id``, ``run_id``, ``task_id``); the ledger keeps it with each
        commit so the status page can link the run that committed a partition.
        """
        # This process's reader of the table (:mod:`..status.table_watch`): a run that
        # compacted in this process has read the checkpoint and the sink log already.
        watch = table_watch(self.spec)
        now_ms = int(time.time() * 1000)
        with TableLock(self.table_path, "commit", single_writer=self.spec.single_writer) as lock:
            return self._commit(partitions, commit_empty, lock, origin, watch, now_ms)

    def _completeness(
        self,
        pending: Sequence[CommitContext],
        watch: TableWatch,
        status: TableStatus | None,
        settled: SettledPartitions,
        now_ms: int,
    ) -> tuple[TableCompleteness, Completeness | None]:
        """The run's one completeness value: what it publishes once ``pending`` is committed.

        Computed once, before the policies, counting ``pending`` as committed: a catalog
        that writes it in the same commit as the partitions' data (an Iceberg transaction)
        and the ledger's record after the policies get the same value, and it is never
        computed again from a state that a failed ledger write left behind (which would be
        lower). Forward only from the published record (:meth:`Completeness.advance`).
        Of the stream, the run's own look (``status``, and the partitions it left out as
        ``settled``) decides, as it did the partitions' work; None (it could not be read)
        is read again here, to say why.
        A state that cannot be read publishes nothing new, with the reason in ``current``;
        the next run publishes it. Returns it, and the value the ledger is to record (None:
        it holds it already).
        """
        published: Completeness | None = None
        try:
            published = published_completeness(self.ledger)
            if status is None:  # the run could not read the stream: read again, to say why
                with watch.lock:
                    status = watch.status_reader().read(now_ms=now_ms, find_orphans=False)
            states = read_partition_states(self.spec, status, now_ms, settled)
            current = current_completeness(states, committing={c.path for c in pending})
        except (FsCommitError, OSError) as exc:
            reason = _reason(exc)
            log.warning("the table's completeness is not published: %s", reason)
            return TableCompleteness(published, Completeness(None, None, reason=reason)), None
        previous = published or Completeness(None, None)
        advanced = previous.advance(current, now_ms)
        if advanced == previous:
            return TableCompleteness(published, current), None
        return TableCompleteness(advanced, current), advanced

    def _record_completeness(
        self, completeness: TableCompleteness, advanced: Completeness | None, lock: TableLock
    ) -> None:
        """Record the run's completeness in the ledger, after the policies and the partitions'
        records, then copy it into every catalog of the chain, for readers outside Airflow
        (Trino, Athena, Spark).

        Under the lock, so two runs never write an older value over a newer one; a catalog
        that already holds it (or a later one) is not written. The partitions are committed
        by then: a ledger or catalog that refuses is named in the log, and the next run
        writes it.
        """
        if advanced is not None:
            try:
                lock.check()
                self.ledger.write_completeness(advanced.to_record())
            except (FsCommitError, OSError) as exc:
                reason = _reason(exc)
                log.warning("the table's completeness is not recorded in the ledger: %s", reason)
        published = completeness.published
        if published is None:
            return
        parameters = published.table_parameters()
        for policy in self.policies:
            if not isinstance(policy, CatalogPolicy):
                continue
            try:
                policy.update_table_parameters(self.spec, parameters)
            except FsCommitError as exc:
                log.warning(
                    "the table's completeness is not in %s (%s); the partitions are "
                    "committed, and the next commit run writes it",
                    policy.name,
                    exc,
                )

    def _commit(
        self,
        partitions: Sequence[str],
        commit_empty: bool,
        lock: TableLock,
        origin: Mapping[str, Any] | None,
        watch: TableWatch,
        now_ms: int,
    ) -> list[CommitOutcome]:
        """The policy chain for the partitions that need it (``status.work``).

        The table state answers for a partition it finds no work for (its latest
        publication committed by the policies, no plan open since, every staged file
        settled: ``staged`` are the sink log's counts, None when the stream cannot be read),
        without reading its records; the others are looked at, committed, and recorded in
        the state after their policy records. The staged files are counted too because a
        summary may lag a publication that a run killed before recording (or a worker still
        on an older release) made: its inputs are then staged but not settled in the
        summary. The run's completeness is computed once, before the policies, and handed
        to each of them in the batch.
        """
        outcomes: list[CommitOutcome] = []
        pending: list[CommitContext] = []
        history: dict[str, PartitionLedger] = {}  # the records of the pending partitions
        known: dict[str, PartitionLedger] = {}  # the records looked at, with what this run wrote
        state = self.ledger.upgrade()
        with watch.lock:
            status, settled = _stream(watch.status_reader(), state, now_ms)
            staged = None if status is None else _staged(watch.status_reader(), status)
        looked: list[str] = []
        for path in dict.fromkeys(partitions):
            recorded = state.get(path)  # a partition of the state: a valid path
            counted = None if staged is None else staged.get(path, 0)
            work = partition_work(self.spec, path, recorded, counted, now_ms)
            # Any work the summary asks for may be a publication it lags: the records decide.
            if staged is not None and answered_by_summary(work, recorded, EVERY_STEP):
                assert recorded is not None
                if work & Work.EXPIRED:
                    expired = expired_reason(self.spec, path, recorded, now_ms)
                    outcomes.append(CommitOutcome(path, CommitState.EXPIRED, reason=expired))
                else:
                    summary = commit_summary(recorded, now_ms)
                    outcomes.append(CommitOutcome(path, CommitState.UP_TO_DATE, summary))
                continue
            spec = PartitionSpec.parse(  # before its records: a path from a user is checked
                path, self.spec.partition_keys, self.spec.partition_default_name
            )
            records = self.ledger.look(path, state)
            looked.append(path)
            known[path] = records
            facts = records.summary()
            work = partition_work(self.spec, path, facts, counted, now_ms)
            if work & Work.EXPIRED:
                expired = expired_reason(self.spec, path, records, now_ms)
                outcomes.append(CommitOutcome(path, CommitState.EXPIRED, reason=expired))
                continue
            if not records.commits and not commit_empty:
                outcomes.append(CommitOutcome(path, CommitState.NOTHING_PUBLISHED))
                continue
            summary = commit_summary(facts, now_ms)
            if not work & Work.COMMIT:
                outcomes.append(CommitOutcome(path, CommitState.UP_TO_DATE, summary))
                if work & Work.RETIRE:  # a run stopped between its policies and this
                    retire(self.ledger, path, records, lock)
                    del known[path]  # its retirement record: the state reads it
                continue
            location = self.ledger.files_location(path, records.directory)
            self.ledger.filesystem.create_dir(self.ledger.partition_dir(path), recursive=True)
            files = tuple(o["name"] for r in records.live_commits for o in r["outputs"])
            pending.append(CommitContext(self.spec, spec, path, location, summary, origin, files))
            history[path] = records
        completeness, advanced = self._completeness(pending, watch, status, settled, now_ms)
        published = completeness.published
        batch = CommitBatch(
            tuple(pending), None if published is None else published.table_parameters()
        )
        receipts: dict[str, dict[str, Any]] = {}  # by partition, then by policy kind
        policy_seconds: dict[str, float] = {}
        for policy in self.policies:
            started = time.monotonic()
            said = policy.commit_all(batch)
            if pending:
                policy_seconds[str(policy.kind)] = time.monotonic() - started
            for path, receipt in (said or {}).items():
                receipts.setdefault(path, {})[str(policy.kind)] = dict(receipt)
            if pending:
                fault_point("after-policy")
        if pending:
            fault_point("after-policies")
        committed_ms = int(time.time() * 1000)
        lock.check()
        first = [c.path for c in pending if not history[c.path].policy_commits]
        self.timings = CommitTimings(
            policy_seconds, self._freshness(first, status, watch, committed_ms)
        )
        for context in pending:
            record = context.summary.to_dict()
            record |= {"receipts": receipts[context.path]} if context.path in receipts else {}
            record |= {"origin": dict(origin)} if origin else {}
            self.ledger.write_policy_commit(context.path, record, known[context.path])
            state_of = (
                CommitState.COMMITTED
                if context.summary.compaction_seq is not None
                else CommitState.COMMITTED_EMPTY
            )
            outcomes.append(CommitOutcome(context.path, state_of, context.summary))
            if history[context.path].superseded:  # the catalog reads the rewrite's files now
                retire(self.ledger, context.path, history[context.path], lock)
                del known[context.path]  # its retirement record: the state reads it
        self.ledger.record_done(looked, known)
        self._record_completeness(completeness, advanced, lock)
        self.completeness = completeness
        return sorted(outcomes, key=lambda o: o.partition)

    def _freshness(
        self,
        partitions: Sequence[str],
        status: TableStatus | None,
        watch: TableWatch,
        committed_ms: int,
    ) -> dict[str, float]:
        """Each first-committed partition's seconds from committable to ``committed_ms``.

        Measured, never in the way of the commit: a partition the stream's status does not
        know, or a checkpoint that cannot be read, has none (the log says why).
        """
        if status is None or not partitions:
            return {}
        freshness = {}
        try:
            for path in partitions:
                found = status.find(path)
                commit_time = None if found is None else found.commit_time_ms
                with watch.lock:
                    since = committable_since_ms(
                        self.spec, commit_time, watch.checkpoint, status.checkpoint
                    )
                if since is not None:
                    freshness[path] = max(0.0, (committed_ms - since) / 1000)
        except (FsCommitError, OSError) as exc:
            log.warning("the partitions' freshness is not measured: %s", _reason(exc))
        return freshness


def _reason(exc: Exception) -> str:
    """What a store's or the ledger's failure says, for the log."""
    return str(explain(exc) or exc) if isinstance(exc, OSError) else str(exc)


def _stream(
    reader: TableStatusReader, state: TableState, now_ms: int
) -> tuple[TableStatus | None, SettledPartitions]:
    """What the stream wrote and the trigger allows, of the partitions ``state`` does not
    settle whole, and those it does (None: unreadable, so every partition's records are
    read, as before the table state, and no freshness is measured)."""
    try:
        return read_unsettled(reader, state, now_ms)
    except (FsCommitError, OSError):
        return None, SettledPartitions()


def _staged(reader: TableStatusReader, status: TableStatus) -> dict[str, int]:
    """Each partition's committed files as the sink log of ``status`` counts them."""
    assert status.snapshot is not None  # every read has one
    return reader.staging.counts(status.snapshot)
