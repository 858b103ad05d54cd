"""What work a partition needs: the one answer every caller asks for.

Discovery (a sweep's list), the publisher (what to compact), the committer (what to commit
or retire), the table report and the status page (what is outstanding) and expiration
(what to expire) all ask it of a partition, from the same facts: its summary (the table
state's, or its records' own) and the number of committed files the sink log lists for it.
Each caller acts on the part of the answer that is its step, so none re-decides it.

The table state's summary may lag the records (a run killed before it recorded them), never
lead them: a lagging summary can only ask for more work than the records would. So the
state answers a caller whose steps it finds nothing for; otherwise the records decide
(:func:`answered_by_summary`), and a run reads only the records of partitions with work.
"""

from __future__ import annotations

import enum

from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.formats.file_format import FileFormat
from airflow_provider_fscommit.core.ledger.table_state import PartitionSummary
from airflow_provider_fscommit.core.status.expiry import expired_reason


class Work(enum.Flag):
    """The steps a partition needs, in the order a run takes them (none: ``NONE``).

    ``EXPIRED`` stands alone: past its expiration, nothing of the partition is published or
    committed again (expiration itself deletes it, if it has not yet).
    """

    NONE = 0
    COMPACT = enum.auto()  # committed staged files not published yet, or a plan left open
    REWRITE = enum.auto()  # published, but fragmented: compacted again into a new directory
    COMMIT = enum.auto()  # the policies have not committed its latest publication
    RETIRE = enum.auto()  # the files a committed rewrite replaced wait for deletion
    EXPIRED = enum.auto()

    @property
    def names(self) -> list[str]:
        """Each step's name, lower case, as the JSON outputs show them ([] for none)."""
        return [step.name.lower() for step in Work if step & self and step.name]


_COMPACT, _REWRITE, _COMMIT, _RETIRE, _EXPIRED = (
    step.value for step in (Work.COMPACT, Work.REWRITE, Work.COMMIT, Work.RETIRE, Work.EXPIRED)
)
# Every combination of the four steps a partition can need together, by its value.
_WORKS = {bits: Work(bits) for bits in range(_RETIRE * 2)}

#: The steps of a compaction run (the publisher's), and every step (a commit run commits
#: what a publication made, which a summary asking for any step may lag).
PUBLISHING = Work.COMPACT | Work.REWRITE
EVERY_STEP = PUBLISHING | Work.COMMIT | Work.RETIRE


def partition_work(
    spec: TableSpec,
    path: str,
    summary: PartitionSummary | None,
    staged_files: int | None,
    now_ms: int,
    committable: bool = True,
) -> Work:
    """The work ``path`` needs, by ``summary`` (None: no records) and ``staged_files``, the
    committed files the sink log lists for it (None: the stream cannot be read, so whether
    anything is left to publish is not judged). A partition its commit trigger does not
    call ``committable`` yet, with no records, needs nothing yet."""
    if summary is None and not committable:
        return Work.NONE
    summary = summary or PartitionSummary()
    # Recorded as expired first: the reason is a sentence, made only for who shows it; a
    # table that sets no expiration has none to make (asked of every partition, each run).
    if summary.expired_at_ms is not None or (
        spec.expiration_time is not None and expired_reason(spec, path, summary, now_ms)
    ):
        return Work.EXPIRED
    # Asked for every partition of a table by every run: the steps are added as integers
    # and made a Work once (Flag arithmetic builds an enum member per operation).
    bits = 0
    if staged_files is not None and not summary.settles(staged_files):
        bits |= _COMPACT
    elif _fragmented(spec, summary):
        bits |= _REWRITE
    if not summary.policies_current:
        bits |= _COMMIT
    if summary.retire_pending:
        bits |= _RETIRE
    return _WORKS[bits]


def settled_as(
    spec: TableSpec, path: str, summary: PartitionSummary | None, staged_files: int, now_ms: int
) -> bool | None:
    """Whether the table state's ``summary`` settles ``path`` whole (None: it does not)
    and, if so, whether the partition is fragmented.

    Settled: no run has a step for it, or expiration dropped it and nothing was staged for
    it since (a run would only say so again, each run, for every hour a year of expiration
    drops). Such a partition is unchanged whatever its trigger says now (a query restarted
    from a new checkpoint judges it pending again), so a run counts it without judging it:
    of a year-old table, a run judges what changed. A status lists a fragmented one, as it
    says what becomes of it; an expired partition is never fragmented: nothing becomes of
    it. :mod:`.settlement` answers it for most partitions of a table at once, from the
    table state's columns, and is checked against this, the one definition.
    """
    if summary is None:
        return None
    work = partition_work(spec, path, summary, staged_files, now_ms).value  # no Flag operation
    if work & _EXPIRED:  # settled once recorded as expired, with nothing staged since
        dropped = summary.expired_at_ms is not None and summary.settles(staged_files)
        return False if dropped else None
    if work:
        return None
    return summary.fragmented(spec.compaction_file_size, bool(spec.sort_columns))


def answered_by_summary(work: Work, summary: PartitionSummary | None, steps: Work) -> bool:
    """Whether a table state's ``summary`` settles what a caller doing ``steps`` needs,
    without the partition's records: it asks for none of them, or the partition is
    recorded as expired (the records agree). A summary that asks for work, or that is past
    its expiration by its own clock (an ``update-time`` partition committed again since is
    not), may lag the records: they decide."""
    if summary is None:
        return False
    if work.value & _EXPIRED:
        return summary.expired_at_ms is not None
    return not work.value & steps.value


def _fragmented(spec: TableSpec, summary: PartitionSummary) -> bool:
    """Whether a settled partition is to be compacted again (``compaction.rewrite-fragmented``;
    never a line format's, whose files are concatenated, not rewritten). A summary older
    than rewrites does not count compactions: its records decide."""
    if not spec.rewrites_fragmented:  # first: most tables never rewrite, asked per partition
        return False
    if summary.format is not None and FileFormat(summary.format).is_lines:
        return False
    fragmentation = summary.fragmentation(spec.compaction_file_size)
    return fragmentation.fragmented(bool(spec.sort_columns))
