"""Compaction and publishing of committable partitions, exactly once whatever fails.

The protocol, per partition (BucketingSink's pending → finished, with Iceberg's idempotent
commit):

1. **Recover.** A plan of an earlier run that has no commit record is abandoned (its
   commit record is created as an *abandoned* mark) and its hidden outputs are deleted:
   nothing of it was ever visible. A committed plan whose outputs are not all published
   yet is rolled forward.
2. **Plan.** Inputs are the sink log's committed files not yet published (ledger), so
   late data and reruns are handled by the same rule. The plan is created in the ledger
   before anything executes (write-ahead intent).
3. **Execute.** Every unit of every plan runs as one Spark task (one application for a
   whole sweep), writing its output under a hidden name of its own (the plan id is in it).
   A unit reads its inputs' footers itself, once each, and writes their merged schema;
   the units of a partition must agree on one, so those whose inputs lacked a column
   another unit's have (a column added mid-stream) are written again with the
   partition's merged schema, and a partition whose schemas are incompatible, or lack a
   column the table's sort order or bloom filters name, fails here.
4. **Commit.** When all units of a plan succeeded, agree on one schema and their row
   counts add up to what their inputs' footers count, the commit record is created: that
   is the commit point.
5. **Publish.** Hidden outputs get their visible names (idempotent): a rename on local
   disks and HDFS; on object stores a copy, then a delete of the hidden object.

A crash anywhere before 4 leaves only hidden files and an open plan, abandoned by step 1
of the next run, which then plans again with whatever the log holds by then (late rows
included), so no row can be published twice. A crash after 4 is finished by step 1.

A fragmented partition (:mod:`fragmentation`) is planned as a *rewrite*: its published
files and its new staged ones into a directory of the plan's own, by the same steps.
Publishing it leaves the files it replaced where they are: the catalog's readers keep
reading them until the policies move the partition's location to the new directory,
and the committer retires them after that (:mod:`retirement`). So rewrites need a catalog
policy that moves its readers to the new files at once (one that switches a partition's
location atomically: metastore, glue; or an Iceberg snapshot that swaps the files): a
reader that lists directories would see both for a while.

Steps 1 and 4 race for one name, ``commit-<seq>.json``, created once: should two runs
overlap (a lease lost on a stalled host or a slow store), the one that abandons a plan and
the one that commits it cannot both succeed. The run that finds its plan abandoned
deletes its hidden outputs and reports the partition failed; a rerun publishes it.

Publishing is the first half of a partition's commit (the committer's policies are the
second), and it combines the layers below: the status readers (what is committable), the
planner and the compactor, the ledger and the table lock. So it has a layer of its own,
``publish``, above all of them and below ``commit``, and ``compaction`` stays a pure
Spark-side merge that knows no ledger.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import pyarrow as pa

from airflow_provider_fscommit.core.compaction.compactor import UnitResult, UnitTask, hidden_name
from airflow_provider_fscommit.core.compaction.layout import OutputLayout
from airflow_provider_fscommit.core.compaction.plan import CompactionPlan
from airflow_provider_fscommit.core.compaction.plan_schema import merge_schemas, read_plan_schema
from airflow_provider_fscommit.core.compaction.planner import (
    CODEC_EXTENSIONS,
    plan_partition,
    plan_rewrite,
)
from airflow_provider_fscommit.core.compaction.summary import (
    CompactionState,
    CompactionSummary,
    PartitionResult,
)
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.errors import ConfigError, FsCommitError, LedgerError
from airflow_provider_fscommit.core.faults import fault_point
from airflow_provider_fscommit.core.formats.csv_header import partition_header
from airflow_provider_fscommit.core.formats.file_format import FileFormat, partition_format
from airflow_provider_fscommit.core.ledger.ledger import CommitLedger, PartitionLedger
from airflow_provider_fscommit.core.ledger.lock import TableLock
from airflow_provider_fscommit.core.ledger.table_state import TableState
from airflow_provider_fscommit.core.spark.sink_log import SinkLogSnapshot
from airflow_provider_fscommit.core.spark.staging import StagedFile
from airflow_provider_fscommit.core.status.committable import PartitionState
from airflow_provider_fscommit.core.status.expiry import expired_reason
from airflow_provider_fscommit.core.status.table_watch import table_watch
from airflow_provider_fscommit.core.status.work import (
    PUBLISHING,
    Work,
    answered_by_summary,
    partition_work,
)
from airflow_provider_fscommit.core.storage.filesystem import (
    delete_dir_if_exists,
    delete_if_exists,
    exists,
    list_names,
)
from airflow_provider_fscommit.core.storage.object_store import is_s3, store_errors, task_settings

_CONCURRENT = (
    "another run created the same plan at the same moment (two runs of this table "
    "overlapped: a lost table lock?); nothing of this partition was published by this run, "
    "rerun it"
)
_ABANDONED = (
    "another run abandoned this run's plan before its commit point (this run's table lock "
    "had expired: a stalled host or a slow store?); its outputs were deleted and nothing "
    "was published by this run, rerun it"
)

RunUnits = Callable[[list[UnitTask]], list[UnitResult]]


@dataclass(frozen=True)
class CompactionPreview:
    """What a run would do now: its plans, the partitions it would leave as they are, and
    how many need nothing at all (counted, not listed: ``CompactionSummary.unchanged``).

    The operator's and the CLI's dry runs show it, and the launcher uses it to finish an
    idle run without starting Spark; nothing is written to decide it.
    """

    plans: list[CompactionPlan]
    settled: list[PartitionOutcome]
    unchanged: int = 0

    @property
    def selected(self) -> bool:
        """Whether the run would have any partition to look at (listed or counted)."""
        return bool(self.plans or self.settled) or self.unchanged > 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "plans": [p.to_dict() for p in self.plans],
            "unchanged": self.unchanged,
            # Nothing to publish, the policies still to run (or its replaced files to delete)
            "up_to_date": [o.partition for o in self.settled if o.error is None],
            # Expired partitions, and those the run would refuse (e.g. a missing sort column)
            "refused": [
                {"partition": o.partition, "state": o.state.value, "error": o.error}
                for o in self.settled
                if o.error is not None
            ],
        }


@dataclass
class PartitionOutcome:
    """What happened to one partition in one run."""

    partition: str
    state: CompactionState
    plan: CompactionPlan | None = None
    rows: int = 0
    bytes_out: int = 0
    error: str | None = None

    def result(self) -> PartitionResult:
        """The outcome as the run's summary keeps it: the plan's size, not the plan."""
        plan = self.plan
        return PartitionResult(
            partition=self.partition,
            state=self.state,
            seq=plan.seq if plan else None,
            files_in=len(plan.inputs) if plan else 0,
            bytes_in=plan.bytes if plan else 0,
            files_out=len(plan.units) if plan else 0,
            bytes_out=self.bytes_out,
            rows=self.rows,
            error=self.error,
        )


@dataclass(frozen=True)
class Selection:
    """The partitions a run works on, how many committed files the sink log lists for
    each, how many the table state settles whole (counted, not selected), and the
    stream's progress."""

    partitions: list[str]
    staged_files: dict[str, int]
    snapshot: SinkLogSnapshot | None
    sink_latest_batch: int | None
    watermark_ms: int | None
    unchanged: int = 0


class CompactionPublisher:
    """Runs the protocol above for a table; ``run_units`` executes units (on Spark)."""

    def __init__(self, spec: TableSpec, codec: str = "snappy") -> None:
        if codec not in CODEC_EXTENSIONS:
            raise ConfigError(
                f"compression codec {codec!r} is not supported; use one of "
                f"{', '.join(CODEC_EXTENSIONS)}"
            )
        self.spec = spec
        self.codec = codec
        self.table_path = spec.require_table_path()
        self.ledger = CommitLedger(self.table_path, spec.single_writer)
        # This process's reader of the table, kept: the run's reads after the dry run's,
        # and the committer's after the run's, are incremental (:mod:`..status.table_watch`).
        self._watch = table_watch(spec)
        self.reader = self._watch.status_reader()
        self.layout = OutputLayout.of(spec)  # how every output of the table is laid out
        self._lock: TableLock | None = None
        self._read_ahead_seconds = 0.0
        # Per CSV partition: the files its header was decided on, and the decision.
        self._csv_headers: dict[str, tuple[tuple[str, ...], bool]] = {}
        # The partitions this run read the records of: recorded in the table state at its end.
        self._looked: set[str] = set()

    def select(self, partitions: Sequence[str] | None, state: TableState, now_ms: int) -> Selection:
        """The partitions to work on: those named, or every committable one that ``state``
        does not settle whole (those are counted as unchanged, not judged)."""
        if partitions is None:
            with self._watch.lock:
                status, settled = self.reader.read_unsettled(state, now_ms)
            unchanged = len(settled)
            chosen = sorted(p.staged.path for p in status.in_state(PartitionState.COMMITTABLE))
        else:
            with self._watch.lock:
                status = self.reader.read(find_orphans=False)
            unchanged = 0
            for partition in partitions:
                _, ready = status.judge(partition)  # raises for one it cannot judge
                staged = status.find(partition)
                if not ready:
                    state_of = staged.state.value if staged else "pending (no committed files)"
                    raise FsCommitError(
                        f"partition {partition} is {state_of}, not committable: the stream may "
                        "still write to it. Wait until the watermark passes its commit time "
                        "(fscommit status)"
                    )
            chosen = list(dict.fromkeys(partitions))
        counts = {p.staged.path: p.staged.files for p in status.partitions}
        return Selection(
            partitions=chosen,
            staged_files={p: counts.get(p, 0) for p in chosen},
            snapshot=status.snapshot,
            sink_latest_batch=status.sink_latest_batch,
            watermark_ms=status.checkpoint.watermark_ms,
            unchanged=unchanged,
        )

    def preview(
        self, partitions: Sequence[str] | None, check_layout: bool = True
    ) -> CompactionPreview:
        """Plan without recovering or writing anything (a dry run).

        ``check_layout=False`` leaves out the check of a sorted or bloom-filtered table's
        columns, which reads every input's footer: a caller that only asks whether there
        is work (the launcher's idle check, the run's read-ahead) would read them all once
        more before the run's units read them (workload (b) sorted: 4.8 s of an 18 s run).
        """
        return CompactionPreview(*self.prepare(partitions, dry_run=True, check_layout=check_layout))

    @store_errors
    def prepare(
        self, partitions: Sequence[str] | None, dry_run: bool = False, check_layout: bool = True
    ) -> tuple[list[CompactionPlan], list[PartitionOutcome], int]:
        """Recover, then plan; the plans are durable intents unless ``dry_run``. Returns
        the plans, the partitions left as they are, and how many need nothing at all.

        The table's state tells which partitions have nothing to do (every committed file
        published or quarantined, no plan left open) without reading their records: only
        the others are looked at, so a run costs what changed, not the table's age.
        """
        # The state first: the selection counts what it settles (either order is safe: a
        # partition is settled only while its staged and settled files are equal).
        state = self.ledger.state() if dry_run else self.ledger.upgrade()
        now_ms = int(time.time() * 1000)
        selection = self.select(partitions, state, now_ms)
        settled: list[PartitionOutcome] = []  # nothing to publish, or refused
        unchanged = selection.unchanged  # nothing to do at all: counted, not listed
        needs: list[str] = []  # the partitions whose records decide
        for partition in selection.partitions:
            summary = state.get(partition)
            staged = selection.staged_files[partition]
            work = partition_work(self.spec, partition, summary, staged, now_ms)
            if not answered_by_summary(work, summary, PUBLISHING):
                needs.append(partition)
                continue
            assert summary is not None
            if not work:
                unchanged += 1
                continue
            if work & Work.EXPIRED:
                expired = expired_reason(self.spec, partition, summary, now_ms)
                settled.append(PartitionOutcome(partition, CompactionState.EXPIRED, error=expired))
                continue
            empty = not staged and not summary.published_inputs
            state_of = CompactionState.EMPTY if empty else CompactionState.UP_TO_DATE
            settled.append(PartitionOutcome(partition, state_of))
        with self._watch.lock:
            files = (
                self.reader.staging.committed_files(selection.snapshot, set(needs))
                if selection.snapshot is not None
                else {p: [] for p in needs}
            )
        formats = {  # every partition's, before anything is written: a wrong spec changes nothing
            p: partition_format(p, [f.uri for f in files[p]], self.spec.format) for p in needs
        }
        for partition in needs:  # CSV headers too: refused, nothing written
            if formats[partition] is FileFormat.CSV:
                self._csv_header(partition, [f.uri for f in files[partition]])
        plans: list[CompactionPlan] = []
        for partition in needs:
            ledger = self.ledger.look(partition, state)
            if not dry_run:
                self._looked.add(partition)
            # Before recovery, which would publish a committed plan's outputs again.
            expired = expired_reason(self.spec, partition, ledger, now_ms)
            if expired:
                settled.append(PartitionOutcome(partition, CompactionState.EXPIRED, error=expired))
                continue
            if not dry_run:
                self.recover(partition)
                ledger = self.ledger.read(partition)  # recovery may have closed plans
            plan = self._plan(partition, files[partition], ledger, selection, now_ms, formats)
            if plan is None:
                empty = not files[partition] and not ledger.published_inputs
                state_of = CompactionState.EMPTY if empty else CompactionState.UP_TO_DATE
                settled.append(PartitionOutcome(partition, state_of))
                continue
            # A run's units read the footers and refuse there (before anything is
            # published); a dry run reads them here to say what the run would refuse.
            refused = self._layout_refusal(plan, footers=dry_run and check_layout)
            if refused is not None:  # before the plan is written: nothing is planned
                settled.append(PartitionOutcome(partition, CompactionState.FAILED, error=refused))
                continue
            if not dry_run and not self.ledger.write_plan(plan):
                settled.append(
                    PartitionOutcome(partition, CompactionState.FAILED, error=_CONCURRENT)
                )
                continue
            plans.append(plan)
        if plans and not dry_run:
            # The intents enter the table state before any can be committed: a summary
            # with a plan open is never trusted, so a commit point that a run killed
            # before its last record reached is found by the next run's look.
            self.ledger.record(p.partition for p in plans)
            fault_point("after-plan")
        return plans, sorted(settled, key=lambda o: o.partition), unchanged

    def _plan(
        self,
        partition: str,
        committed: list[StagedFile],
        ledger: PartitionLedger,
        selection: Selection,
        now_ms: int,
        formats: dict[str, FileFormat],
    ) -> CompactionPlan | None:
        """The partition's next plan: its new staged files compacted beside what it holds,
        or, when that would leave it fragmented, all of it compacted again (a rewrite)."""
        common: dict[str, Any] = {
            "seq": ledger.next_seq,
            "target_file_size": self.spec.compaction_file_size,
            "codec": self.codec,
            "sink_latest_batch": selection.sink_latest_batch,
            "watermark_ms": selection.watermark_ms,
            "created_ms": now_ms,
            "file_format": formats[partition],
        }
        plan = plan_partition(
            partition,
            committed,
            ledger.settled_inputs,
            auto_compaction=self.spec.auto_compaction,
            directory=ledger.directory,
            **common,
        )
        if not self.spec.rewrites_fragmented or formats[partition].is_lines:
            return plan
        after = ledger.summary().fragmentation(self.spec.compaction_file_size)
        if plan is not None:
            after = after.with_plan(len(plan.units), plan.bytes)
        if not after.fragmented(self.layout.sort is not None):
            return plan
        directory = self.ledger.files_location(partition, ledger.directory)
        live = [o for record in ledger.live_commits for o in record.get("outputs", [])]
        published = [StagedFile(f"{directory}/{o['name']}", o.get("bytes", 0)) for o in live]
        return plan_rewrite(partition, published, committed, ledger.settled_inputs, **common)

    def _layout_refusal(self, plan: CompactionPlan, footers: bool) -> str | None:
        """Why the table's layout (sort order, bloom filters) cannot lay out ``plan``'s
        rows, or None.

        Its columns are checked against the plan's merged schema when ``footers`` (a dry
        run: the footers are read here); otherwise only what needs no footer.
        """
        layout = self.layout
        if not layout.names_columns:
            return None
        if plan.format.is_lines:
            if layout.sort is None:
                return None  # bloom filters are the columnar formats' own keys
            return (
                f"{layout.sort.option} is set but the files of partition {plan.partition} are "
                f"{plan.format.value.upper()}, whose lines are concatenated, not rewritten; "
                "sorting applies to Parquet and ORC. Drop the option for this table"
            )
        if not footers:
            return None
        try:
            schema = read_plan_schema([f.uri for f in plan.inputs], plan.format).schema
            layout.check(schema, plan.partition, plan.format)
        except FsCommitError as exc:
            return str(exc)
        return None

    def _csv_header(self, partition: str, uris: list[str]) -> bool:
        """Whether the partition's CSV files merge as files with a header (``csv_header``),
        decided once per set of files: the read-ahead's dry run and the run see the same."""
        known = self._csv_headers.get(partition)
        if known is None or known[0] != tuple(uris):
            decided = partition_header(partition, uris, self.spec.csv_header)
            known = self._csv_headers[partition] = (tuple(uris), decided)
        return known[1]

    def look_ahead(self, partitions: Sequence[str] | None) -> CompactionPreview:
        """A dry run that reads no footer, timed as the run's read-ahead: what the run
        will plan from (the checkpoint, the sink log, the table state), read, and whether
        there is work. Writes nothing.

        The run's reads after it are incremental. The launcher's look for work is one:
        a run in this process (on Spark Connect) continues from it instead of reading
        everything again in a read-ahead of its own (:meth:`read_ahead`).
        """
        started = time.monotonic()
        try:
            return self.preview(partitions, check_layout=False)
        finally:
            self._read_ahead_seconds = time.monotonic() - started

    def read_ahead(self, partitions: Sequence[str] | None) -> None:
        """:meth:`look_ahead` while the executors start, its errors left to the run.

        A Spark session takes seconds to start. The footers are the units' to read,
        once each: reading them here too cost workload (b) 3.1-3.5 s of 9,602 footers,
        which the units then read again. The run meets an error of this dry run again
        and reports it (nothing does, if Spark never starts).
        """
        with contextlib.suppress(FsCommitError):
            self.look_ahead(partitions)

    def recover(self, partition: str, reason: str = "unfinished by an earlier run") -> None:
        """Abandon unfinished plans, delete what they left, roll committed ones forward."""
        ledger = self.ledger.read(partition)
        if ledger.open_plans:
            for plan in ledger.open_plans:
                self.ledger.abandon(plan, reason)  # False: its run committed it first
            ledger = self.ledger.read(partition)
        self._sweep(partition, ledger)
        for plan in ledger.live_plans:  # a rewrite replaced the others' outputs
            self.publish(plan)

    def _close(self, plan: CompactionPlan, reason: str) -> None:
        """Abandon this run's own plan (unless committed) and delete its outputs."""
        if (
            self.ledger.abandon(plan, reason)
            or plan.seq in self.ledger.read(plan.partition).abandoned
        ):
            self._discard_outputs(plan)

    def _sweep(self, partition: str, ledger: PartitionLedger) -> None:
        """Delete hidden outputs of abandoned plans, whenever their run wrote them.

        A run that lost its lease may still be writing when another run abandons its
        plan, and a SIGKILL can end it before it cleans up; abandoned plans never become
        visible, so what they left is found by name in one listing and deleted.
        """
        if not ledger.abandoned:
            return
        leftovers: dict[str, set[str]] = {}  # directory: hidden names
        for seq in ledger.abandoned:
            plan = ledger.plans.get(seq)
            if plan is None:
                continue
            if plan.rewrites:  # its directory holds nothing but what it wrote
                delete_dir_if_exists(self.ledger.filesystem, self._directory(plan))
                continue
            names = leftovers.setdefault(self._directory(plan), set())
            names.update(hidden_name(unit.output) for unit in plan.units)
        for directory, names in leftovers.items():
            for name in names.intersection(list_names(self.ledger.filesystem, directory)):
                delete_if_exists(self.ledger.filesystem, f"{directory}/{name}")

    def _directory(self, plan: CompactionPlan) -> str:
        return self.ledger.files_dir(plan.partition, plan.directory)

    def _discard_outputs(self, plan: CompactionPlan) -> None:
        """Delete the hidden outputs of a plan that will never be published."""
        directory = self._directory(plan)
        if plan.rewrites:
            delete_dir_if_exists(self.ledger.filesystem, directory)
            return
        for unit in plan.units:
            delete_if_exists(self.ledger.filesystem, f"{directory}/{hidden_name(unit.output)}")

    def tasks(self, plan: CompactionPlan) -> list[UnitTask]:
        """The Spark tasks of a plan. Each reads its inputs' footers itself and writes their
        merged schema (:meth:`_agreed` checks that a partition's units agree)."""
        inputs = [f.uri for f in plan.inputs]
        s3 = task_settings() if is_s3(self.table_path, self.spec.staging_path) else None
        # Decided in prepare() on all of the partition's files, of which the plan's inputs
        # may be a part.
        decided = self._csv_headers.get(plan.partition)
        header = plan.format is FileFormat.CSV and (
            decided[1] if decided else self._csv_header(plan.partition, inputs)
        )
        layout = self.layout
        # A sorted partition, or a rewrite, is one task: its rows are dealt out across all
        # its outputs (ordered, in a sorted table).
        one_task = layout.sort is not None or plan.rewrites
        units = [plan.units] if one_task else [(unit,) for unit in plan.units]
        return [
            UnitTask(
                table_path=self.table_path,
                partition=plan.partition,
                plan_id=plan.plan_id,
                unit=group[0].index,
                inputs=tuple(f.uri for unit in group for f in unit.inputs),
                output=group[0].output,
                codec=plan.codec,
                bytes=sum(unit.bytes for unit in group),
                input_sizes=tuple(f.size for unit in group for f in unit.inputs),
                s3=s3,
                format=plan.format,
                header=header,
                layout=layout,
                more_outputs=tuple((unit.index, unit.output) for unit in group[1:]),
                directory=plan.directory,
                whole=len(units) == 1,
            )
            for group in units
        ]

    def _agreed(
        self, plan: CompactionPlan, results: list[UnitResult], tasks: list[UnitTask]
    ) -> list[UnitTask]:
        """The tasks to run again so that every output of ``plan`` has one schema: the
        merged schema of all its inputs (none when its units agree already).

        Raises when the partition's schemas are incompatible, or lack a column the table's
        layout names: before the commit point, so nothing is published.
        """
        if plan.format.is_lines or len(results) != len(plan.units) or any(r.error for r in results):
            return []  # _commit says what failed
        if _one_schema(results):
            schema = pa.ipc.read_schema(pa.py_buffer(results[0].schema))
            self.layout.check(schema, plan.partition, plan.format)
            return []
        ordered = sorted(results, key=lambda r: r.unit)
        distinct = [pa.ipc.read_schema(pa.py_buffer(s)) for r in ordered for s in r.schemas]
        schema = merge_schemas(distinct, [f.uri for f in plan.inputs])
        self.layout.check(schema, plan.partition, plan.format)
        int96 = any(r.int96 for r in results)
        target = schema.serialize().to_pybytes()
        differ = _differing(results, target, int96)
        return [replace(task, schema=target, int96=int96) for task in tasks if task.unit in differ]

    @store_errors
    def run(
        self,
        run_units: RunUnits,
        partitions: Sequence[str] | None = None,
        progress: Callable[[PartitionResult], None] | None = None,
        on_plans: Callable[[list[CompactionPlan]], None] | None = None,
    ) -> CompactionSummary:
        """The whole protocol for the given (or every committable) partition.

        Under the table lock: recovery abandons open plans, which must be a crashed
        run's, not those of a run still working (that run would then fail, and publish
        nothing: the commit point is created once).
        """
        with TableLock(self.table_path, "compact", single_writer=self.spec.single_writer) as lock:
            self._lock = lock
            try:
                return self._run(run_units, partitions, progress, on_plans)
            finally:
                self._lock = None
                self._record()

    def _record(self) -> None:
        """Record the partitions this run looked at in the table state, after all its
        writes (whatever stopped the run)."""
        looked, self._looked = self._looked, set()
        if looked:
            self.ledger.record_done(looked)

    def _run(
        self,
        run_units: RunUnits,
        partitions: Sequence[str] | None,
        progress: Callable[[PartitionResult], None] | None,
        on_plans: Callable[[list[CompactionPlan]], None] | None,
    ) -> CompactionSummary:
        started = time.monotonic()
        plans, outcomes, unchanged = self.prepare(partitions)
        if on_plans:
            on_plans(plans)
        tasks: dict[str, list[UnitTask]] = {}
        failed: dict[str, str] = {}
        for plan in plans:
            try:
                tasks[plan.plan_id] = self.tasks(plan)
            except FsCommitError as exc:
                failed[plan.plan_id] = str(exc)
        every = [task for plan_tasks in tasks.values() for task in plan_tasks]
        by_plan = _by_plan(run_units(every) if every else [])
        again: list[UnitTask] = []
        for plan in plans:
            try:
                again += self._agreed(
                    plan, by_plan.get(plan.plan_id, []), tasks.get(plan.plan_id, [])
                )
            except FsCommitError as exc:
                failed[plan.plan_id] = str(exc)
        if again:  # a partition's units disagreed: those written again, with its schema
            for plan_id, rewritten in _by_plan(run_units(again)).items():
                units = {r.unit for r in rewritten}
                kept = [r for r in by_plan[plan_id] if r.unit not in units]
                by_plan[plan_id] = kept + rewritten
        fault_point("after-units")
        for index, plan in enumerate(plans):
            try:
                outcome = self._commit(
                    plan, by_plan.get(plan.plan_id, []), failed.get(plan.plan_id)
                )
            except FsCommitError as exc:  # e.g. the lease is lost: close what is left
                for unfinished in plans[index:]:
                    with contextlib.suppress(FsCommitError, OSError):
                        self._close(unfinished, f"its run stopped: {exc}")
                raise
            outcomes.append(outcome)
            if progress:
                progress(outcome.result())
        return CompactionSummary(
            outcomes=tuple(o.result() for o in sorted(outcomes, key=lambda o: o.partition)),
            seconds=time.monotonic() - started,
            read_ahead_seconds=self._read_ahead_seconds,
            unchanged=unchanged,
        )

    def _commit(
        self, plan: CompactionPlan, results: list[UnitResult], error: str | None
    ) -> PartitionOutcome:
        counted = [r.input_rows for r in results]
        # The rows the inputs' footers count, as the units read them (None: line files).
        expected_rows = None if None in counted or not results else sum(counted)  # type: ignore[arg-type]
        errors = [r.error for r in results if r.error]
        if error is None and errors:
            error = errors[0]
        if error is None and len(results) != len(plan.units):
            error = f"{len(plan.units) - len(results)} unit(s) reported no result"
        if error is None and not _one_schema(results):
            error = "its units wrote different schemas; nothing was published. Rerun it"
        if (
            error is None
            and expected_rows is not None
            and sum(r.rows for r in results) != expected_rows
        ):
            error = (
                f"row count mismatch: the inputs hold {expected_rows} rows, the outputs "
                f"{sum(r.rows for r in results)}; nothing was published"
            )
        if error is not None:
            self._close(plan, f"failed: {error}")
            return PartitionOutcome(plan.partition, CompactionState.FAILED, plan, error=error)
        record = {
            "seq": plan.seq,
            "plan_id": plan.plan_id,
            "committed_ms": int(time.time() * 1000),
            "rows": sum(r.rows for r in results),
            "outputs": [
                {"name": plan.units[r.unit].output, "rows": r.rows, "bytes": r.bytes}
                for r in sorted(results, key=lambda r: r.unit)
            ],
        }
        if self._lock is not None:
            self._lock.check()  # a run that lost its lease must not reach the commit point
        if not self.ledger.write_commit(plan, record):
            self._discard_outputs(plan)
            return PartitionOutcome(plan.partition, CompactionState.FAILED, plan, error=_ABANDONED)
        fault_point("after-commit-record")
        self.publish(plan)
        return PartitionOutcome(
            plan.partition,
            CompactionState.PUBLISHED,
            plan,
            record["rows"],
            sum(r.bytes for r in results),
        )

    def publish(self, plan: CompactionPlan) -> None:
        """Give a committed plan's hidden outputs their visible names (idempotent).

        On an object store a move is a copy and a delete: a crash in between leaves both,
        and the next run copies again (same bytes) and deletes. Two runs publishing the
        same plan at once both succeed.
        """
        directory = self._directory(plan)
        filesystem = self.ledger.filesystem
        for position, unit in enumerate(plan.units):
            final = f"{directory}/{unit.output}"
            hidden = f"{directory}/{hidden_name(unit.output)}"
            if exists(filesystem, hidden) and self._move(hidden, final):
                if position == 0:
                    fault_point("during-publish")
                continue
            if not exists(filesystem, final):
                raise LedgerError(
                    f"the ledger records {final} as published but it is missing; restore it "
                    "from a backup, or remove the partition's ledger records and republish"
                )

    def _move(self, hidden: str, final: str) -> bool:
        """Publish one output; False when another run moved it at the same moment."""
        try:
            self.ledger.filesystem.move(hidden, final)
        except OSError:
            if exists(self.ledger.filesystem, hidden):
                raise
            return False
        return True


def _one_schema(results: list[UnitResult]) -> bool:
    """Whether the units wrote one schema (none: line files)."""
    return not results or not _differing(results, results[0].schema, results[0].int96)


def _differing(results: list[UnitResult], schema: bytes, int96: bool) -> set[int]:
    """The units whose output is not of ``schema`` (serialized, empty for line files; its
    metadata included: Spark's schema JSON) with timestamps as ``int96`` says. Compared as
    schemas, not by their bytes: the same schema serializes differently from different
    units."""
    decoded: dict[bytes, pa.Schema] = {}

    def of(raw: bytes) -> pa.Schema:
        if raw not in decoded:
            decoded[raw] = pa.ipc.read_schema(pa.py_buffer(raw))
        return decoded[raw]

    def same(raw: bytes) -> bool:
        if raw == schema:
            return True
        return bool(raw and schema) and of(raw).equals(of(schema), check_metadata=True)

    return {r.unit for r in results if r.int96 != int96 or not same(r.schema)}


def _by_plan(results: list[UnitResult]) -> dict[str, list[UnitResult]]:
    by_plan: dict[str, list[UnitResult]] = {}
    for result in results:
        by_plan.setdefault(result.plan_id, []).append(result)
    return by_plan
