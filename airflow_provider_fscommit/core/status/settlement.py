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

from collections.abc import Mapping

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from airflow_provider_fscommit.core.compat import strict_zip
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.formats.arrow_arrays import booleans, numbers
from airflow_provider_fscommit.core.formats.file_format import FileFormat
from airflow_provider_fscommit.core.ledger.table_state import TableState
from airflow_provider_fscommit.core.status.work import settled_as

# A partition's verdict from the columns: not settled, settled (fragmented or not), or
# to be asked one at a time.
_UNSETTLED, _SETTLED, _FRAGMENTED, _ASK = range(4)
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
        verdicts = [_ASK] * len(paths)
    summaries, changed = state.partitions, state.changed
    settled: dict[str, bool] = {}
    for path, verdict in strict_zip(paths, verdicts):
        if verdict == _ASK or path in changed:
            answer = settled_as(spec, path, summaries.get(path), counts[path], now_ms)
            if answer is not None:
                settled[path] = answer
        elif verdict != _UNSETTLED:
            settled[path] = verdict == _FRAGMENTED
    return settled


def _column_verdicts(
    spec: TableSpec, state: TableState, paths: list[str], counts: Mapping[str, int]
) -> list[int] | None:
    """Each partition's verdict by the checkpoint's columns, in the order of ``paths``
    (None: the columns cannot answer; a partition without a row is not settled)."""
    checkpoint = state.columns
    if (
        checkpoint is None
        or not checkpoint.rows
        or not paths
        or spec.expiration_time is not None
        or not all(name in checkpoint.table.column_names for name in _FACTS)
    ):
        return None
    columns, rows = checkpoint.table, checkpoint.rows
    row = np.fromiter((rows.get(path, -1) for path in paths), np.int64, len(paths))
    found = row >= 0

    def fact(name: str) -> np.ndarray:
        return numbers(columns[name])[row]

    def present(name: str) -> np.ndarray:
        return booleans(columns[name].combine_chunks().is_valid())[row]

    def flag(name: str) -> np.ndarray:
        return booleans(columns[name].combine_chunks())[row] & present(name)

    files = np.fromiter(counts.values(), np.int64, len(paths))
    settles = (fact("open_plans") == 0) & (fact("settled_files") == files)
    # Fragmentation.fragmented: two compactions' outputs or more, and more files than one
    # compaction of their bytes makes, plus one (or any such partition of a sorted table).
    published = fact("published_files")
    compactions = np.where(
        present("published_compactions"),
        fact("published_compactions"),
        np.where(published > 1, 2, 1),
    )
    one_compaction = np.maximum(1, -(-fact("published_bytes") // spec.compaction_file_size))
    fragmented = (compactions >= 2) & (bool(spec.sort_columns) | (published > one_compaction + 1))
    rewrite = fragmented & ~_lines(columns["format"], row) if spec.rewrites_fragmented else False
    no_work = settles & ~rewrite & flag("policies_current") & ~flag("retire_pending")
    expired = present("expired_at_ms")  # settled once nothing was staged since
    settled = np.where(expired, settles, no_work) & found
    verdict = np.where(expired | ~fragmented, _SETTLED, _FRAGMENTED)
    return np.where(settled, verdict, _UNSETTLED).tolist()


def _lines(formats: pa.ChunkedArray, row: np.ndarray) -> np.ndarray:
    """Whether each row's format is a line format (whose files are concatenated, never
    rewritten), by :attr:`FileFormat.is_lines` of each distinct format named (no format:
    not one)."""
    encoded = pc.dictionary_encode(formats.combine_chunks())
    named = [FileFormat(value).is_lines for value in encoded.dictionary.to_pylist()]
    lines = np.array([*named, False], bool)
    index = np.where(booleans(encoded.indices.is_valid()), numbers(encoded.indices), len(named))
    return lines[index][row]
