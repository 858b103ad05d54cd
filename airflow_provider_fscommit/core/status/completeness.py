"""The table's completeness: up to which partition time every partition is committed.

Readers outside Airflow (Trino, Athena, Spark) ask "up to when is this table complete?",
and should not have to list partitions and reason about their states to answer it. Two
instants answer, both epoch ms UTC:

- ``watermark``: the stream's safe watermark (the one ``partition-time`` judges by), once
  it has advanced;
- ``complete_through``: a partition time, inclusive. Every partition the table knows (its
  stream staged it, or the ledger has records of it) whose partition time is at or before
  it is committed: none of them is pending, committable but not committed, or in error.
  Under ``partition-time`` it is moreover never later than what the watermark says is
  complete (the watermark has passed each such partition's commit time).

What counts as committed: a partition committed once (``committed``), again
(``re-committed``), or committed and then given late rows not committed yet
(``late-data``): its readers see its rows as of its last commit, and the next run
refreshes it, as Flink re-commits late data. A partition whose unreadable staged file a
user quarantined counts once the rest of it is committed: the user gave those rows up,
and it will not change again. Expired partitions neither count nor hold it back. A
partition with no time (the extractor cannot read its values) makes it unknown: it is
never guessed.

The committer publishes it after each commit run (``completeness.json`` in the ledger),
forward only (:meth:`Completeness.advance`): a late row that creates an older partition
lowers what the state gives now, never what was published. docs/concepts/table-state.md
says what a reader may conclude, per trigger.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from airflow_provider_fscommit.core.compat import strict_zip
from airflow_provider_fscommit.core.config.options import TriggerKind
from airflow_provider_fscommit.core.config.quantities import epoch_ms, iso_ms
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.errors import ConfigError, LedgerError, PartitionTimeError
from airflow_provider_fscommit.core.gc_pause import gc_paused
from airflow_provider_fscommit.core.ledger.ledger import CommitLedger
from airflow_provider_fscommit.core.partition.commit_trigger import PartitionTimeCommitTrigger
from airflow_provider_fscommit.core.partition.partition_spec import PartitionSpec
from airflow_provider_fscommit.core.status.committable import PartitionState
from airflow_provider_fscommit.core.status.partition_times import partition_times_ms
from airflow_provider_fscommit.core.status.table_report import (
    PartitionStates,
    TableReport,
)
from airflow_provider_fscommit.core.storage.object_store import store_errors

# Readers see these partitions' rows as committed (late data: as of the last commit).
COMMITTED_STATES = frozenset(
    {PartitionState.COMMITTED, PartitionState.RECOMMITTED, PartitionState.LATE_DATA}
)

# The table parameters that carry it in every catalog of the chain (``core.catalogs``).
WATERMARK_PARAMETER = "fscommit.watermark"
COMPLETE_THROUGH_PARAMETER = "fscommit.complete-through"
COMMITTED_AT_PARAMETER = "fscommit.committed-at"


@dataclass(frozen=True)
class Completeness:
    """A table's watermark and complete-through (epoch ms UTC; None: not known).

    ``committed_at_ms`` is when a commit run last moved the published values forward
    (None for what the current state gives). ``reason`` says what keeps
    ``complete_through_ms`` where it is, or why it is None.
    """

    watermark_ms: int | None
    complete_through_ms: int | None
    committed_at_ms: int | None = None
    reason: str | None = None

    def advance(self, current: Completeness, now_ms: int) -> Completeness:
        """The published values after a commit run found ``current``: each the later one.

        Neither ever moves back, so a reader that saw a value may rely on it; a late row
        that creates an older, uncommitted partition lowers ``current`` only, and holds
        the published value where it is until that partition is committed. Unchanged
        values keep their ``committed_at_ms``: a rerun that changes nothing publishes
        nothing new.
        """
        watermark = _later(self.watermark_ms, current.watermark_ms)
        through = _later(self.complete_through_ms, current.complete_through_ms)
        if (watermark, through) == (self.watermark_ms, self.complete_through_ms):
            return self
        return Completeness(watermark, through, now_ms)

    def table_parameters(self) -> dict[str, str]:
        """The catalogs' table parameters, ISO-8601 UTC; an unknown value is left out."""
        values = {
            WATERMARK_PARAMETER: self.watermark_ms,
            COMPLETE_THROUGH_PARAMETER: self.complete_through_ms,
            COMMITTED_AT_PARAMETER: self.committed_at_ms,
        }
        return {key: iso for key, ms in values.items() if (iso := iso_ms(ms)) is not None}

    def to_record(self) -> dict[str, int | None]:
        """What the ledger keeps (the reason is the moment's, not kept)."""
        return {
            "watermark_ms": self.watermark_ms,
            "complete_through_ms": self.complete_through_ms,
            "committed_at_ms": self.committed_at_ms,
        }

    @classmethod
    def from_table_parameters(cls, parameters: Mapping[str, str], table: str) -> Completeness:
        """What catalog ``table``'s parameters publish (the inverse of
        :meth:`table_parameters`): what readers without the stream's files can know."""
        return cls(
            _parameter_ms(parameters, WATERMARK_PARAMETER, table),
            _parameter_ms(parameters, COMPLETE_THROUGH_PARAMETER, table),
            _parameter_ms(parameters, COMMITTED_AT_PARAMETER, table),
        )

    def reaches(self, through_ms: int, table: str) -> tuple[bool, str]:
        """Whether ``table`` is complete through the partition time ``through_ms``, and
        what a waiting reader is told."""
        wanted = iso_ms(through_ms)
        if self.complete_through_ms is None:
            return False, (
                f"{table} has no {COMPLETE_THROUGH_PARAMETER} yet: no commit run has published "
                f"its completeness (each run copies it into every catalog of its chain); "
                f"waiting for {wanted}"
            )
        through = iso_ms(self.complete_through_ms)
        if self.complete_through_ms < through_ms:
            return False, f"{table} is complete through {through}; waiting for {wanted}"
        return True, f"{table} is complete through {through}, at or after {wanted}"

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> Completeness:
        return cls(
            record.get("watermark_ms"),
            record.get("complete_through_ms"),
            record.get("committed_at_ms"),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "watermark_ms": self.watermark_ms,
            "watermark": iso_ms(self.watermark_ms),
            "complete_through_ms": self.complete_through_ms,
            "complete_through": iso_ms(self.complete_through_ms),
            "committed_at_ms": self.committed_at_ms,
            "committed_at": iso_ms(self.committed_at_ms),
            "reason": self.reason,
        }


@dataclass(frozen=True)
class TableCompleteness:
    """What the committer published (None: nothing yet, or ``published_error`` says why it
    cannot be read) and what the state gives now."""

    published: Completeness | None
    current: Completeness
    published_error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "published": None if self.published is None else self.published.to_dict(),
            "published_error": self.published_error,
            "current": self.current.to_dict(),
        }


@store_errors
def read_completeness(report: TableReport) -> TableCompleteness:
    """The published completeness from the ledger, and what ``report`` gives now.

    An unreadable record is shown, not raised: it must not hide the table's status.
    """
    current = current_completeness(report.states())
    if not report.spec.table_path or report.ledger_error:
        return TableCompleteness(None, current)
    try:
        published = published_completeness(CommitLedger(report.spec.table_path))
    except LedgerError as exc:
        return TableCompleteness(None, current, str(exc))
    return TableCompleteness(published, current)


def _parameter_ms(parameters: Mapping[str, str], key: str, table: str) -> int | None:
    text = parameters.get(key)
    if text is None:
        return None
    try:
        return epoch_ms(text)
    except ConfigError:
        raise ConfigError(
            f"{table}: its table parameter {key} is {text!r}, not an ISO-8601 time as fscommit "
            "writes it; remove it and let the next commit run publish it"
        ) from None


def forward_parameters(
    held: Mapping[str, str] | None, parameters: Mapping[str, str], table: str
) -> dict[str, str]:
    """The completeness parameters to write over those catalog ``table`` holds: each value
    the later of the two (:meth:`Completeness.advance`), so no reader of the catalog ever
    sees one go back, even where the catalog is ahead of the ledger (a run whose ledger
    record failed after the catalog committed). A held value that is not a time as fscommit
    writes it is replaced."""
    try:
        before = Completeness.from_table_parameters(held or {}, table)
    except ConfigError:
        return dict(parameters)
    wanted = Completeness.from_table_parameters(parameters, table)
    after = before.advance(wanted, wanted.committed_at_ms or 0)
    return before.table_parameters() if after is before else after.table_parameters()


def published_completeness(ledger: CommitLedger) -> Completeness | None:
    record = ledger.read_completeness()
    return None if record is None else Completeness.from_record(record)


def current_completeness(
    states: PartitionStates, committing: Collection[str] = frozenset()
) -> Completeness:
    """What the partitions' ``states`` give now; not forward only (see
    :meth:`Completeness.advance`).

    ``committing``: partitions counted as committed already, for a catalog that writes
    the completeness in the same commit as their data (an Iceberg transaction).
    """
    checkpoint = states.status.checkpoint
    watermark = checkpoint.watermark_ms if checkpoint.watermark_advanced else None
    with gc_paused():  # a time per partition: thousands of a year-old table
        through, reason = _complete_through(states, watermark, committing)
    return Completeness(watermark, through, reason=reason)


def _complete_through(
    states: PartitionStates, watermark: int | None, committing: Collection[str]
) -> tuple[int | None, str | None]:
    """The latest committed partition's time with nothing uncommitted at or before it.

    Under ``partition-time`` only partitions whose commit time the watermark has passed
    count (a partition committed ahead of it, by hand, does not make later hours
    complete); ``process-time`` and ``idle-time`` judge by the wall clock and files, so a
    committed partition counts as it is.
    """
    spec = states.spec
    if not spec.table_path:
        return None, "the spec has no table_path: nothing is committed"
    if states.ledger_error:
        return None, states.ledger_error
    if spec.trigger is TriggerKind.PARTITION_TIME and watermark is None:
        return None, "the stream's watermark has not advanced yet: no partition is complete"
    try:
        spec.time_extractor.validate(spec.partition_keys)
    except ConfigError as exc:
        return None, f"partitions have no time: {exc}"
    rows = [row for row in states.states if row[1] is not PartitionState.EXPIRED]
    paths = [path for path, _, _ in rows]
    times_ms = partition_times_ms(spec, paths)
    listed: list[int] = []
    for path in paths:
        try:
            listed.append(next(times_ms))
        except PartitionTimeError as exc:
            return None, (
                f"partition {path} has no partition time ({exc}); "
                "complete-through needs every partition's"
            )
    # Over arrays in the rows' order (by path): a year-old table's thousands at once.
    times = np.array(listed, np.int64)
    committed = np.fromiter((row[1] in COMMITTED_STATES for row in rows), bool, len(rows))
    if committing:
        committed |= np.fromiter(map(committing.__contains__, paths), bool, len(rows))
    held_by = _first_least(times, ~committed)
    counted = committed if held_by is None else committed & (times < times[held_by])
    ahead = counted & ~_past_commit_time(spec, watermark, paths, times, counted)
    early = _first_least(times, ahead)  # the watermark has not passed from here
    if early is not None:
        counted &= times < times[early]
    through = int(times[counted].max()) if counted.any() else None
    if early is not None:  # all of them before any partition that holds it back
        reason = (
            f"{paths[early]} is committed, but the watermark {iso_ms(watermark)} has not "
            "passed its commit time"
        )
    elif held_by is not None:
        path, state, failed = rows[held_by]
        error = f" ({failed})" if failed else ""
        reason = f"{path} is {state.value}{error}, not committed"
    elif through is None:
        reason = "no partition is committed yet"
    else:
        reason = None
    return through, reason


def _first_least(times: np.ndarray, among: np.ndarray) -> int | None:
    """The index of the first of the least ``times`` ``among`` selects (None: none)."""
    if not among.any():
        return None
    chosen = np.flatnonzero(among)
    return int(chosen[np.argmin(times[chosen])])


def _past_commit_time(
    spec: TableSpec, watermark: int | None, paths: list[str], times: np.ndarray, asked: np.ndarray
) -> np.ndarray:
    """Whether the trigger's clock has passed the commit time of each partition ``asked``
    selects (given its path and its time; the others: true), under ``partition-time``
    (the only trigger whose commit time the partition's path decides; the others' always
    has)."""
    trigger = spec.clock_trigger
    if not isinstance(trigger, PartitionTimeCommitTrigger):
        return np.ones(len(paths), bool)
    delay = trigger.fixed_delay_ms
    if delay is None:  # the zone's transitions move it: each partition's local time decides

        def past(partition: str) -> bool:
            values = PartitionSpec.parse(
                partition, spec.partition_keys, spec.partition_default_name
            )
            return trigger.is_committable(trigger.commit_time_ms(values, 0), watermark, 0)

        answers = (past(path) if ask else True for path, ask in strict_zip(paths, asked))
        return np.fromiter(answers, bool, len(paths))
    # The same delay for each: a clock past a commit time is past every earlier one, so
    # the trigger is asked of the distinct commit times by bisection, not of each.
    commit_times = times + delay
    distinct = np.unique(commit_times)
    first_not_past, end = 0, len(distinct)
    while first_not_past < end:
        middle = (first_not_past + end) // 2
        if trigger.is_committable(int(distinct[middle]), watermark, 0):
            first_not_past = middle + 1
        else:
            end = middle
    if first_not_past == len(distinct):
        return np.ones(len(paths), bool)
    return commit_times < distinct[first_not_past]


def _later(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else max(a, b)
