"""``MetastoreTable``: a table of a Hive metastore, over Thrift, with its partition events.

All partitions of a commit go through one ``add_partitions_req`` (``ifNotExists``) call,
and existing ones whose location or statistics changed through one ``alter_partitions``
call; values travel as Thrift fields, never as SQL text. The partition's storage
descriptor is the table's with ``LOCATION`` set to the published partition directory; its
parameters carry Hive's statistics (``numFiles``, ``totalSize``, ``numRows``) and our commit
facts (``fscommit.watermark``, ``fscommit.max-batch-id``, ``fscommit.committed-at``). With
``metastore.column-statistics``, one ``set_aggr_stats_for`` call then writes every
partition's column statistics (:mod:`column_statistics`). Altering a partition's location
is one call: readers switch to a rewrite's directory at once.

Paimon's ``mark-event`` marks a partition ``LOAD_DONE`` (:meth:`MetastoreTable.mark_done`):
Hive-world consumers (``isPartitionMarkedForEvent`` pollers, schedulers that wait on it)
learn that a partition is complete from a partition event rather than from its existence.

The client comes from a factory (the operator and CLI pass the Airflow Hive provider's
``HiveMetastoreHook`` client), so this module needs no Airflow. Its Thrift types
(``hmsclient``'s, ``thrift``'s) are the ``hive`` extra's: imported when a call needs them
(``ttypes``, :func:`_call_errors`), never with the module, which imports without them.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from airflow_provider_fscommit.core.catalogs.catalog_table import CatalogTable, forward
from airflow_provider_fscommit.core.catalogs.hive_partition import (
    catalog_values,
    check_format,
    done_location,
    done_values,
    partition_parameters,
    unchanged,
)
from airflow_provider_fscommit.core.compat import strict_zip
from airflow_provider_fscommit.core.config.options import PolicyKind
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.errors import MetastoreError, MissingExtraError, import_extra
from airflow_provider_fscommit.core.formats.column_statistics import (
    HIVE_KINDS,
    ColumnStatistics,
    StatsKind,
    partition_column_statistics,
)
from airflow_provider_fscommit.core.publish.published import CommitContext
from airflow_provider_fscommit.core.storage.filesystem import resolve_filesystem

ClientFactory = Callable[[], AbstractContextManager[Any]]
#: What the ``hive`` extra's missing message says needs it.
USED_BY = "the metastore policy (a Hive metastore over Thrift)"


class _HiveTypes:
    """The Hive metastore's Thrift types (``hmsclient``'s ``ttypes``), imported at their
    first use: ``ttypes.Partition`` reads as the module's would; without the ``hive``
    extra, the one error that names it."""

    def __getattr__(self, name: str) -> Any:
        module = import_extra("hmsclient.genthrift.hive_metastore.ttypes", "hive", USED_BY)
        return getattr(module, name)


ttypes = _HiveTypes()


def _call_errors() -> tuple[type[Exception], ...]:
    """What a failed Thrift call or connection raises: Thrift's base error and ``OSError``."""
    return (import_extra("thrift.Thrift", "hive", USED_BY).TException, OSError)


class MetastoreTable(CatalogTable):
    """One table of a Hive metastore; every batch of calls opens its own connection."""

    kind = PolicyKind.METASTORE
    holds_done_partitions = True
    switches_location = True

    def __init__(self, client_factory: ClientFactory, database: str, table: str) -> None:
        self.client_factory = client_factory
        self.database = database
        self.table = table
        self.name = f"{database}.{table}"

    @contextmanager
    def _session(self, doing: str, then: str, location: str | None = None) -> Iterator[Any]:
        """One connected client; a Thrift or socket failure becomes the one message
        "``doing`` failed (why); ``then``" (a server without the partition location's
        filesystem: that fix, for ``location``)."""
        connection = self._connect()
        failures = _call_errors()
        try:
            with connection as client:
                yield client
        except failures as exc:
            moved = isinstance(exc, ttypes.MetaException) and location is not None
            error = _location_error(exc, location) if moved else None
            raise error or MetastoreError(
                f"{doing} failed ({type(exc).__name__}: {exc}); {then}"
            ) from exc

    def read_table_parameters(self) -> dict[str, str]:
        """The table's parameters, as readers of its published completeness see them."""
        with self._session(
            f"reading the table parameters of {self.name} from the metastore",
            "nothing was changed, and a retry is safe",
        ) as client:
            try:
                table = client.get_table(self.database, self.table)
            except ttypes.NoSuchObjectException as exc:
                raise MetastoreError(
                    f"table {self.name} does not exist in the metastore; fix the database or "
                    "table name (or the metastore connection, if it is another metastore's)"
                ) from exc
        return dict(table.parameters or {})

    def _connect(self) -> AbstractContextManager[Any]:
        """A client connection, or the one error a user fixes by starting or pointing it."""
        try:
            return self.client_factory()
        except MissingExtraError:
            raise  # the Hive provider is not installed: no server to start or point at
        except Exception as exc:  # the hook raises its own types for an unreachable server
            raise MetastoreError(
                f"cannot reach the metastore for {self.name} ({exc}); check that it runs and "
                "the connection (metastore_default or --metastore-uri) points at it; nothing "
                "was recorded as committed, and a retry is safe"
            ) from exc

    def add_partitions(
        self, contexts: Sequence[CommitContext], completeness: Mapping[str, str] | None = None
    ) -> None:
        """One metastore session for all partitions: the table checked, the partitions
        added or altered, then their column statistics; a failure says a retry is safe.
        (The completeness is set after, by :meth:`set_table_parameters`.)"""
        if not contexts:
            return
        # Footers are read before connecting: file I/O does not hold a metastore session.
        columns = [(c, _file_statistics(c)) for c in contexts if c.spec.metastore_column_statistics]
        with self._session(
            f"committing {len(contexts)} partition(s) of {self.name} to the metastore",
            "nothing after the metastore policy ran, and a retry commits them again safely",
            location=contexts[0].location,
        ) as client:
            table = self._table(client, contexts[0].spec)
            _check_format(table, self.name, contexts)
            self._add_or_alter(client, table, contexts)
            statistics = [s for c, found in columns if (s := self._statistics(table, c, found))]
            if statistics:
                client.set_aggr_stats_for(ttypes.SetPartitionsStatsRequest(statistics))

    def _add_or_alter(self, client: Any, table: Any, contexts: Sequence[CommitContext]) -> None:
        """Add the partitions the metastore lacks, alter the ones it has: two calls at most.

        One batch call each instead of one per partition (Thrift round trips dominate a
        commit of hundreds); an existing partition gets the new location and statistics.
        """
        names = [c.path for c in contexts]
        existing = {
            tuple(p.values): p
            for p in client.get_partitions_by_names(self.database, self.table, names)
        }
        new, changed = [], []
        for context in contexts:
            values = catalog_values(context.spec, context.values)
            partition = existing.get(tuple(values))
            if partition is None:
                new.append(self._partition(table, values, context))
            elif not unchanged(partition.sd.location, partition.parameters or {}, context):
                partition.sd.location = context.location
                partition.parameters = (partition.parameters or {}) | partition_parameters(context)
                changed.append(partition)
        if new:
            self._add_new(client, new)
        if changed:
            # Keep our statistics: without this the server recounts the files.
            client.alter_partitions_with_environment_context(
                self.database,
                self.table,
                changed,
                ttypes.EnvironmentContext({"DO_NOT_UPDATE_STATS": "true"}),
            )

    def _statistics(
        self, table: Any, context: CommitContext, found: Sequence[ColumnStatistics]
    ) -> Any:
        """The partition's column statistics for the table's columns of a matching type."""
        declared = {c.name.lower(): c.type.lower() for c in table.sd.cols or []}
        objects = [
            ttypes.ColumnStatisticsObj(s.name.lower(), declared[s.name.lower()], _stats_data(s))
            for s in found
            if HIVE_KINDS.get(declared.get(s.name.lower(), "")) == s.kind
        ]
        if not objects:
            return None
        analyzed_s = context.summary.committed_at_ms // 1000
        description = ttypes.ColumnStatisticsDesc(
            isTblLevel=False,
            dbName=self.database,
            tableName=self.table,
            partName=context.path,
            lastAnalyzed=analyzed_s,
        )
        return ttypes.ColumnStatistics(description, objects)

    def drop_partitions(self, spec: TableSpec, partitions: Sequence[Sequence[str | None]]) -> int:
        """Drop partitions given by their values: partition expiration undoes the add.

        The files stay (``deleteData`` false): expiration deletes them itself, after the
        drop, so a reader never finds a partition whose files are gone. A partition the
        metastore does not have is dropped already (a rerun after a crash). Returns how
        many existed.
        """
        if not partitions:
            return 0
        dropped = 0
        with_done = PolicyKind.DONE_PARTITION in spec.policy_kind
        with self._session(
            f"dropping {len(partitions)} expired partition(s) of {self.name} from the metastore",
            "no file was deleted, and a rerun expires them again safely",
        ) as client:
            self._table(client, spec)
            for values in partitions:
                held = catalog_values(spec, values)
                if with_done:
                    self._drop_one(client, done_values(held))
                dropped += self._drop_one(client, held)
        return dropped

    def _drop_one(self, client: Any, values: list[str]) -> bool:
        try:
            client.drop_partition(self.database, self.table, values, False)
        except ttypes.NoSuchObjectException:
            return False
        return True

    def add_done_partitions(self, contexts: Sequence[CommitContext]) -> None:
        """One ``add_partitions_req`` (``ifNotExists``) for every partition's done partition."""
        if not contexts:
            return
        with self._session(
            f"adding the done partitions of {len(contexts)} partition(s) of {self.name} to the "
            "metastore",
            "nothing after the done-partition policy ran, and a retry adds them again safely",
        ) as client:
            table = self._table(client, contexts[0].spec)
            done = [
                self._partition(
                    table,
                    done_values(catalog_values(c.spec, c.values)),
                    c,
                    done_location(c),
                )
                for c in contexts
            ]
            self._add_new(client, done)

    def set_table_parameters(self, spec: TableSpec, parameters: Mapping[str, str]) -> bool:
        """``alter_table`` with these parameters added, forward only (the server recounts
        nothing)."""
        with self._session(
            f"setting the table parameters of {self.name} in the metastore",
            "a retry sets them again safely",
        ) as client:
            table = self._table(client, spec)
            written = forward(table.parameters, parameters, self.name)
            if written is None:
                return False
            table.parameters = (table.parameters or {}) | written
            client.alter_table_with_environment_context(
                self.database,
                self.table,
                table,
                ttypes.EnvironmentContext({"DO_NOT_UPDATE_STATS": "true"}),
            )
        return True

    def mark_done(self, contexts: Sequence[CommitContext]) -> None:
        """Mark each partition ``LOAD_DONE``: one connection, one event each (Thrift has no
        batch call). Marking again is harmless: the partition stays marked."""
        if not contexts:
            return
        connection = self._connect()
        keys, failures = contexts[0].partition.keys, _call_errors()
        load_done = ttypes.PartitionEventType.LOAD_DONE
        try:
            with connection as client:
                for context in contexts:
                    values = dict(strict_zip(keys, catalog_values(context.spec, context.values)))
                    client.markPartitionForEvent(self.database, self.table, values, load_done)
        except ttypes.UnknownTableException as exc:
            raise MetastoreError(
                f"table {self.name} does not exist in the metastore, so no partition of it can "
                "be marked done; create it or fix the database/table name"
            ) from exc
        except failures as exc:
            raise MetastoreError(
                f"marking {len(contexts)} partition(s) of {self.name} done in the metastore "
                f"failed ({type(exc).__name__}: {exc}); nothing after the mark-event policy "
                "ran, and a retry marks them again safely"
            ) from exc

    def _table(self, client: Any, spec: TableSpec) -> Any:
        try:
            table = client.get_table(self.database, self.table)
        except ttypes.NoSuchObjectException as exc:
            raise MetastoreError(
                f"table {self.name} does not exist in the metastore; create it (partitioned by "
                f"{', '.join(spec.partition_keys)}) or fix the database/table name"
            ) from exc
        keys = [k.name for k in table.partitionKeys or []]
        if keys != list(spec.partition_keys):
            raise MetastoreError(
                f"table {self.name} is partitioned by {keys}, but the table spec's partition keys "
                f"are {list(spec.partition_keys)}; make them agree"
            )
        return table

    def _add_new(self, client: Any, partitions: list[Any]) -> None:
        """Add partitions in one call, keeping any that exists already (a rerun's)."""
        client.add_partitions_req(
            ttypes.AddPartitionsRequest(
                dbName=self.database,
                tblName=self.table,
                parts=partitions,
                ifNotExists=True,
                needResult=False,
            )
        )

    def _partition(
        self, table: Any, values: list[str], context: CommitContext, location: str | None = None
    ) -> Any:
        """The table's storage descriptor at ``location`` (default: the published directory)."""
        sd = copy.deepcopy(table.sd)
        sd.location = location or context.location
        return ttypes.Partition(
            values=values,
            dbName=self.database,
            tableName=self.table,
            sd=sd,
            parameters=partition_parameters(context) if location is None else {},
        )


def _location_error(exc: Exception, location: str) -> MetastoreError | None:
    """The metastore server checks every partition location with its own Hadoop client."""
    text = str(exc)
    if "S3AFileSystem not found" not in text and "No FileSystem for scheme" not in text:
        return None
    scheme = location.split("://", 1)[0] if "://" in location else "file"
    return MetastoreError(
        f"the metastore cannot use the partition location {location}: its server has no "
        f"Hadoop filesystem for {scheme}:// ({text.strip()[:160]}). A metastore that "
        "registers S3 tables needs the S3A connector on its classpath (hadoop-aws and the "
        "AWS SDK bundle of its Hadoop version) and its own S3 credentials (an instance role, "
        "or fs.s3a.* settings); write the table path as s3a://. Nothing after the metastore "
        "policy ran; rerun once the metastore has them"
    )


def _file_statistics(context: CommitContext) -> list[ColumnStatistics]:
    """Column statistics of a partition's published Parquet or ORC files (others: none)."""
    file_format = context.summary.format
    if file_format is None or not context.files:
        return []
    filesystem, root = resolve_filesystem(context.location)
    paths = [f"{root.rstrip('/')}/{name}" for name in context.files]
    return partition_column_statistics(filesystem, paths, file_format)


def _stats_data(stats: ColumnStatistics) -> Any:
    """Hive's statistics object of one column (``numDVs`` 0: unknown)."""
    if stats.kind == StatsKind.LONG:
        data = ttypes.LongColumnStatsData(stats.low, stats.high, stats.nulls, 0)
        return ttypes.ColumnStatisticsData(longStats=data)
    if stats.kind == StatsKind.DOUBLE:
        data = ttypes.DoubleColumnStatsData(stats.low, stats.high, stats.nulls, 0)
        return ttypes.ColumnStatisticsData(doubleStats=data)
    low, high = (None if v is None else ttypes.Date(int(v)) for v in (stats.low, stats.high))
    return ttypes.ColumnStatisticsData(
        dateStats=ttypes.DateColumnStatsData(low, high, stats.nulls, 0)
    )


def _check_format(table: Any, name: str, contexts: Sequence[CommitContext]) -> None:
    serde = table.sd.serdeInfo and table.sd.serdeInfo.serializationLib
    check_format(name, table.parameters, serde, table.sd.inputFormat, contexts, MetastoreError)
