"""How compacted outputs are laid out for readers: the table spec's format and sort options,
as the writers' settings.

Parquet row groups of about ``parquet.block.size`` on disk (rows per group estimated from
the inputs' bytes per row), statistics and the page index, optional bloom filters; ORC
stripes, row index and bloom filters as ORC's keys say. A table with a sort order
(:mod:`.sort_order`) has each partition's rows sorted across all its outputs, so files and
row groups cover disjoint ranges, and Parquet footers record the order.

:class:`OutputLayout` holds plain values a Spark task takes; it is checked against a
partition's columns before anything is published (by the unit that reads all of them, or
by the publisher on the schema its units agree on), and by a dry run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq

from airflow_provider_fscommit.core.compaction.sort_order import SortOrder
from airflow_provider_fscommit.core.compat import PARQUET_BLOOM_FILTERS, PYARROW_VERSION
from airflow_provider_fscommit.core.config import options as o
from airflow_provider_fscommit.core.config.option_values import BLOOM_ENABLED_PREFIX
from airflow_provider_fscommit.core.errors import ConfigError, FsCommitError
from airflow_provider_fscommit.core.formats.file_format import FileFormat

if TYPE_CHECKING:
    from airflow_provider_fscommit.core.config.table_spec import TableSpec

# Spark's (parquet-mr's) default false positive probability of a Parquet bloom filter.
_BLOOM_FPP = 0.01


@dataclass(frozen=True)
class OutputLayout:
    """How outputs are laid out for readers: the table spec's format and sort options, as
    plain values a Spark task takes."""

    parquet_block_size: int = 128 * 1024 * 1024
    # (column, expected distinct values or None: the output's rows)
    parquet_bloom_filters: tuple[tuple[str, int | None], ...] = ()
    orc_stripe_size: int = 64 * 1024 * 1024
    orc_row_index_stride: int = 10000
    orc_bloom_filter_columns: tuple[str, ...] = ()
    orc_bloom_filter_fpp: float = 0.05
    sort: SortOrder | None = None
    sort_memory: int = 256 * 1024 * 1024

    @classmethod
    def of(cls, spec: TableSpec) -> OutputLayout:
        order = (
            SortOrder(spec.sort_columns, z_order=bool(spec.compaction_z_order_by))
            if spec.sort_columns
            else None
        )
        return cls(
            parquet_block_size=spec.parquet_block_size,
            parquet_bloom_filters=tuple(spec.parquet_bloom_filters.items()),
            orc_stripe_size=spec.orc_stripe_size,
            orc_row_index_stride=spec.orc_row_index_stride,
            orc_bloom_filter_columns=spec.orc_bloom_filter_columns,
            orc_bloom_filter_fpp=spec.orc_bloom_filter_fpp,
            sort=order,
            sort_memory=spec.compaction_sort_memory,
        )

    @property
    def names_columns(self) -> bool:
        """Whether it names columns of the table (to check against its files)."""
        return bool(self.sort or self.parquet_bloom_filters or self.orc_bloom_filter_columns)

    def check(self, schema: pa.Schema, partition: str, file_format: FileFormat) -> None:
        """Refuse what names a column the partition's files lack."""
        if self.sort is not None:
            self.sort.check(schema, partition)
        bloom = (
            (o.ORC_BLOOM_FILTER_COLUMNS.key, self.orc_bloom_filter_columns)
            if file_format is FileFormat.ORC
            else (BLOOM_ENABLED_PREFIX + "<column>", [c for c, _ in self.parquet_bloom_filters])
        )
        missing = [name for name in bloom[1] if name not in schema.names]
        if missing:
            raise ConfigError(
                f"{bloom[0]} names column {missing[0]!r}, which the files of partition "
                f"{partition} do not have (their columns: {', '.join(schema.names)}); "
                "nothing was published. Fix the table spec"
            )

    def within(self, schema: pa.Schema, file_format: FileFormat) -> OutputLayout:
        """The layout of an output of ``schema``: bloom filters only on its columns.

        A unit of a partition whose columns grew may lack a column the others have; it
        writes what it has, and the publisher has it written again with the partition's
        schema (or refuses the partition, when none has the column) before its commit.
        """
        names = set(schema.names)
        if file_format is FileFormat.ORC:
            kept = tuple(c for c in self.orc_bloom_filter_columns if c in names)
            if kept == self.orc_bloom_filter_columns:
                return self
            return replace(self, orc_bloom_filter_columns=kept)
        parquet = tuple((c, n) for c, n in self.parquet_bloom_filters if c in names)
        return (
            self
            if parquet == self.parquet_bloom_filters
            else replace(self, parquet_bloom_filters=parquet)
        )

    def rewrites(self, file_format: FileFormat) -> bool:
        """Whether every output must be written row by row (no byte copy of an input):
        its rows are sorted, or it carries bloom filters an input may lack."""
        if self.sort is not None:
            return True
        if file_format is FileFormat.ORC:
            return bool(self.orc_bloom_filter_columns)
        return bool(self.parquet_bloom_filters)

    def refuse_unwritable(self, file_format: FileFormat) -> None:
        """Refuse, on the executor, what its pyarrow cannot write (Parquet bloom filters)."""
        if (
            file_format is FileFormat.PARQUET
            and self.parquet_bloom_filters
            and not PARQUET_BLOOM_FILTERS
        ):
            raise FsCommitError(
                "parquet.bloom.filter.enabled is set but the executors run pyarrow "
                f"{'.'.join(map(str, PYARROW_VERSION))}, which writes Parquet bloom filters "
                "from 24.0 on; install pyarrow 24+ on the cluster's Python, or drop the bloom "
                "filter keys. Nothing of the partition was published"
            )

    def row_group_rows(self, file_format: FileFormat, rows: int, size: int) -> int:
        """Rows per Parquet row group (ORC: per write, the writer cuts stripes itself) of
        inputs of ``rows`` rows in ``size`` bytes: the group's size (``parquet.block.size``,
        ``orc.stripe.size``) at the inputs' bytes per row. Sorted rows compress better, so
        a group comes out somewhat smaller."""
        group = self.orc_stripe_size if file_format is FileFormat.ORC else self.parquet_block_size
        if not rows or not size:
            return 1024 * 1024  # pyarrow's default
        return max(1, group * rows // size)

    def orc_options(self, schema: pa.Schema) -> dict[str, Any]:
        """The ORC writer's arguments for this layout."""
        return {
            "stripe_size": self.orc_stripe_size,
            "row_index_stride": self.orc_row_index_stride,
            "bloom_filter_columns": _orc_column_ids(schema, self.orc_bloom_filter_columns) or None,
            "bloom_filter_fpp": self.orc_bloom_filter_fpp,
        }

    def parquet_options(self, schema: pa.Schema, rows: int, sorting: bool) -> dict[str, Any]:
        """The Parquet writer's arguments for this layout, for an output of about ``rows``
        rows (what a bloom filter expects without a column's own distinct count);
        ``sorting``: the rows are in the layout's order, which the footer then records."""
        options: dict[str, Any] = {"write_page_index": True}
        if self.parquet_bloom_filters:
            options["bloom_filter_options"] = {
                name: {"ndv": ndv or max(rows, 1), "fpp": _BLOOM_FPP}
                for name, ndv in self.parquet_bloom_filters
            }
        if sorting and self.sort is not None and not self.sort.z_order:
            order = [(name, "ascending") for name in self.sort.columns]
            options["sorting_columns"] = pq.SortingColumn.from_ordering(
                schema, order, null_placement="at_start"
            )
        return options


def _orc_column_ids(schema: pa.Schema, names: Sequence[str]) -> list[int]:
    """The ORC column ids of top-level columns: ORC numbers every type in pre-order, the
    root struct 0, so a column's id counts the nested types before it."""
    ids, next_id = {}, 1
    for schema_field in schema:
        ids[schema_field.name] = next_id
        next_id += _orc_types(schema_field.type)
    return [ids[name] for name in names]


def _orc_types(kind: pa.DataType) -> int:
    """How many ORC types ``kind`` is: itself and everything nested in it. A map is its key
    and its value in ORC, where Arrow nests them in an entries struct of its own."""
    if pa.types.is_map(kind):
        return 1 + _orc_types(kind.key_type) + _orc_types(kind.item_type)
    return 1 + sum(_orc_types(kind.field(i).type) for i in range(kind.num_fields))
