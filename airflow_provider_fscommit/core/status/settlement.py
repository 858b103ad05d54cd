"""Which partitions a table state settles: every partition of a year-old table at once.

A run counts the partitions whose summary settles them whole (:func:`.work.settled_as`)
and judges only the rest. Asked one partition at a time, that is ~3 us a partition: 25 ms
of a year-old table's routine run, once per reader. Where the state was read from an
Arrow checkpoint, its columns answer for every partition in a few numpy operations. A
partition whose summary is no longer its checkpoint row (an entry after the checkpoint),
a table under expiration (whose verdict moves with the clock and the partition's time),
and a checkpoint without a fact the answer reads are asked one at a time. The column
route is checked against :func:`.work.settled_as`, the one definition
(``tests/core/status/test_settlement.py``), as :mod:`.partition_times` is against a
partition's time.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping

import numpy as np
import pyarrow.compute as pc

from airflow_provider_fscommit.core.compat import strict_zip
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.formats.arrow_arrays import booleans, numbers
from airflow_provider_fscommit.core.formats.file_format import FileFormat
from airflow_provider_fscommit.core.ledger.table_state import RowFacts, TableState
from airflow_provider_fscommit.core.status.work import settled_as

# A partition's verdict from the columns: not settled, or settled (fragmented or not).
_UNSETTLED, _SETTLED, _FRAGMENTED = range(3)
# The facts the verdict reads, which an older checkpoint may lack.
_FACTS = (
    "settled_files",
    "open_plans",
    "policies_current",
    "retire_pending",
    "expired_at_ms",
    "published_files",
    "published_bytes",
    "published_compactions",
    "format",
)


def settled_partitions(
    spec: TableSpec, state: TableState, counts: Mapping[str, int], now_ms: int
) -> dict[str, bool]:
    """:func:`.work.settled_as` of each partition of ``counts`` (its path and committed
    files) that ``state`` settles: whether it is fragmented, by path."""
    paths = list(counts)
    verdicts = _column_verdicts(spec, state, paths, counts)
    if verdicts is None:
        asked: Iterable[str] = paths
        settled: dict[str, bool] = {}
    else:
        changed = state.changed
        ask = (
            np.fromiter(map(changed.__contains__, paths), bool, len(paths))
            if changed
            else np.zeros(len(paths), bool)
        )
        taken = (verdicts != _UNSETTLED) & ~ask
        fragmented = (verdicts[taken] == _FRAGMENTED).tolist()
        settled = dict(strict_zip(itertools.compress(paths, taken.tolist()), fragmented))
        asked = itertools.compress(paths, ask.tolist())
    summaries = state.partitions
    for path in asked:
        answer = settled_as(spec, path, summaries.get(path), counts[path], now_ms)
        if answer is not None:
            settled[path] = answer
    return settled


def _column_verdicts(
    spec: TableSpec, state: TableState, paths: list[str], counts: Mapping[str, int]
) -> np.ndarray | None:
    """Each partition's verdict by the checkpoint's columns, in the order of ``paths``
    (None: the columns cannot answer; a partition without a row is not settled)."""
    checkpoint = state.columns
    if checkpoint is None or not checkpoint.rows or not paths or spec.expiration_time is not None:
        return None
    facts = RowFacts(checkpoint, paths)
    if not facts.has(_FACTS):
        return None
    files = np.fromiter(counts.values(), np.int64, len(paths))
    settles = (facts.number("open_plans") == 0) & (facts.number("settled_files") == files)
    # Fragmentation.fragmented: two compactions' outputs or more, and more files than one
    # compaction of their bytes makes, plus one (or any such partition of a sorted table).
    published = facts.number("published_files")
    compactions = np.where(
        facts.present("published_compactions"),
        facts.number("published_compactions"),
        np.where(published > 1, 2, 1),
    )
    one_compaction = np.maximum(1, -(-facts.number("published_bytes") // spec.compaction_file_size))
    fragmented = (compactions >= 2) & (bool(spec.sort_columns) | (published > one_compaction + 1))
    rewrite = fragmented & ~_lines(facts) if spec.rewrites_fragmented else False
    no_work = settles & ~rewrite & facts.flag("policies_current") & ~facts.flag("retire_pending")
    expired = facts.present("expired_at_ms")  # settled once nothing was staged since
    settled = np.where(expired, settles, no_work) & facts.found
    verdict = np.where(expired | ~fragmented, _SETTLED, _FRAGMENTED)
    return np.where(settled, verdict, _UNSETTLED)


def _lines(facts: RowFacts) -> np.ndarray:
    """Whether each row's format is a line format (whose files are concatenated, never
    rewritten), by :attr:`FileFormat.is_lines` of each distinct format named (no format:
    not one)."""
    encoded = pc.dictionary_encode(facts.table["format"].combine_chunks())
    named = [FileFormat(value).is_lines for value in encoded.dictionary.to_pylist()]
    lines = np.array([*named, False], bool)
    index = np.where(booleans(encoded.indices.is_valid()), numbers(encoded.indices), len(named))
    return lines[index][facts.rows]
