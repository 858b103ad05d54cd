"""``IcebergTable``: committed partitions' files registered in an Apache Iceberg table.

The compaction's outputs are the data files: nothing is rewritten. Each file becomes an
Iceberg ``DataFile`` with its partition values taken from its path (a Hive-style layout
keeps the keys out of the files, so inferring them from column bounds, as pyiceberg's
``add_files`` does, would give nulls) and its metrics (rows, sizes, value, null and NaN
counts, bounds) from its footer. Spark's default INT96 timestamps have no defined order,
so those columns get counts without bounds, as Iceberg's own ``migrate`` and
``add_files`` of Spark tables record them. All partitions of a commit run go into one
Iceberg snapshot.

Exactly once, the way Iceberg's Flink sink keeps ``flink.max-committed-checkpoint-id``
in its snapshots: every snapshot this policy makes carries ``fscommit.commit-id`` (a
digest of the table path and each partition's compaction sequence number),
``fscommit.table-path``, ``fscommit.partitions`` and ``fscommit.watermark`` in its
summary. A run first looks for its id among the table's snapshots (in the metadata it
loaded: no extra read), so a rerun or a retry after a lost answer commits nothing; then
it compares each partition's current files (one scan planned with the partitions' values,
which Iceberg prunes by its manifest list) with the files the ledger publishes, and
commits only the difference, in one snapshot: late data adds its files, a rewrite swaps
the partition's files (no reader sees a row twice or misses one). A run that loses a race
(another writer committed first) reloads the table and decides again, so a partition the
other run committed is left alone.

The table's completeness (``fscommit.complete-through``, ``fscommit.watermark``) goes
into its properties in the same transaction as the partitions' files (the committer
computes it counting them committed), so a reader never sees a property ahead of its
data; a run that commits no data moves them in a metadata-only commit
(:meth:`IcebergTable.set_table_parameters`). Either way forward only: a property the
table holds is never replaced by an earlier time.

An Iceberg table has no done partitions (they are Hive partitions) and no partition
location to switch: a rewrite swaps the partition's files in one snapshot instead.

The catalog is pyiceberg's, loaded from a spec's ``iceberg.catalog.*`` properties
(:func:`load_catalog`); only the catalog's own refusals (:func:`catalog_errors`) become
one message naming the table, any other error keeps its type and cause.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import logging
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import pyarrow.parquet as pq

from airflow_provider_fscommit.core.catalogs.catalog_table import CatalogTable, forward
from airflow_provider_fscommit.core.catalogs.iceberg_schema import (
    added_columns,
    check_table,
    partition_record_values,
    spark_schema,
    table_schema,
)
from airflow_provider_fscommit.core.config.options import PolicyKind
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.errors import IcebergError, import_extra
from airflow_provider_fscommit.core.formats.file_format import FileFormat
from airflow_provider_fscommit.core.formats.spark_metadata import SPARK_SCHEMA_KEY
from airflow_provider_fscommit.core.publish.published import CommitContext
from airflow_provider_fscommit.core.storage.filesystem import resolve_filesystem

if TYPE_CHECKING:
    from pyiceberg.catalog import Catalog
    from pyiceberg.expressions import BooleanExpression
    from pyiceberg.manifest import DataFile
    from pyiceberg.table import Table
    from pyiceberg.table.update.snapshot import UpdateSnapshot

log = logging.getLogger(__name__)

COMMIT_ID = "fscommit.commit-id"
TABLE_PATH = "fscommit.table-path"
PARTITIONS = "fscommit.partitions"
WATERMARK = "fscommit.watermark"
# What a Hive 2 metastore answers pyiceberg's Hive 3 column types, and the catalog
# property that makes it write Hive 2's.
HIVE2_REFUSAL = "timestamp with local time zone"
HIVE2_COMPATIBLE = "hive.hive2-compatible"
# A concurrent writer's commit: reload and decide again, with backoff.
ATTEMPTS = 6
BACKOFF_S = 0.2


@dataclass(frozen=True)
class _Partition:
    """One partition of the commit: where its files are, and which they are."""

    context: CommitContext
    values: tuple[Any, ...]  # in the table's partition column types
    files: tuple[str, ...]  # full URIs of its published files


class IcebergTable(CatalogTable):
    """One Iceberg table of a pyiceberg catalog; a run's partitions go in one snapshot.

    :param catalog_factory: loads the pyiceberg catalog (properties and credentials).
    :param namespace: the Iceberg namespace (``metastore_database``).
    :param table: the table's name in it (``metastore_table``).
    :param create_table: create the table on the first commit (``iceberg.create-table``).
    """

    kind = PolicyKind.ICEBERG
    completeness_with_data = True

    def __init__(
        self,
        catalog_factory: Callable[[], Catalog],
        namespace: str,
        table: str,
        create_table: bool = False,
    ) -> None:
        self.catalog_factory = catalog_factory
        self.namespace = namespace
        self.table = table
        self.create_table = create_table
        self.name = f"{namespace}.{table}"

    def add_partitions(
        self, contexts: Sequence[CommitContext], completeness: Mapping[str, str] | None = None
    ) -> int | None:
        """Register the partitions' published files in one snapshot, or nothing if the
        table already holds them (see the module's doc); ``completeness``, the table's once
        they are committed, goes into the same transaction. Returns the snapshot the files
        are in (None: no partition has files, an empty partition has none)."""
        contexts = [c for c in contexts if c.files]
        if not contexts:
            return None
        _check_parquet(self.name, contexts)
        catalog = self.catalog_factory()
        with _catalog_errors(self.name, "the commit"):
            return self._commit_all(catalog, contexts, completeness or {})

    def _commit_all(
        self, catalog: Catalog, contexts: Sequence[CommitContext], parameters: Mapping[str, str]
    ) -> int | None:
        """The id of the snapshot holding the partitions' files once committed."""
        table = self._existing(catalog)
        held = None if table is None else _commit_snapshot(table, _commit_id(contexts))
        if held is not None:
            return held  # a rerun, or a retry whose first answer was lost: no footer read
        footers = {uri: footer for c in contexts for uri, footer in _footers(c)}
        spark = _spark_schemas(footers)
        keys = contexts[0].spec.partition_keys
        if table is None:
            table = self._create(catalog, next(iter(spark.values())), keys)
        if self.create_table:  # the table is the stream's: it takes a column the stream added
            table = self._add_columns(catalog, table, list(spark.values()))
        for attempt in range(ATTEMPTS):
            for schema in spark.values():
                check_table(self.name, table.schema(), table.spec(), schema, keys)
            partitions = [
                _Partition(
                    c,
                    tuple(
                        partition_record_values(
                            table.spec(), table.schema(), c.values, self.name, c.path
                        )
                    ),
                    tuple(_uris(c)),
                )
                for c in contexts
            ]
            try:
                return self._commit(table, partitions, footers, parameters)
            except _conflict() as exc:
                if attempt == ATTEMPTS - 1:
                    raise IcebergError(
                        f"Iceberg table {self.name} kept changing under this commit "
                        f"({ATTEMPTS} attempts, last: {exc}); nothing was recorded as "
                        "committed, and the next run commits these partitions"
                    ) from exc
                time.sleep(BACKOFF_S * 2**attempt)
                table = self._load(catalog)

    def _commit(
        self,
        table: Table,
        partitions: list[_Partition],
        footers: Mapping[str, _Footer],
        parameters: Mapping[str, str],
    ) -> int | None:
        """Commit what the table lacks; the id of the snapshot then holding the files."""
        from pyiceberg.table import TableProperties

        commit_id = _commit_id([p.context for p in partitions])
        held = _commit_snapshot(table, commit_id)
        if held is not None:
            return held  # another run committed this while this one read (a race)
        current = _current_files(table, [p.values for p in partitions])
        adds: list[DataFile] = []
        deletes: list[DataFile] = []
        for partition in partitions:
            held = current.get(partition.values, {})
            wanted = set(partition.files)
            deletes += [f for path, f in held.items() if path not in wanted]
            adds += [
                _data_file(table, uri, footers[uri], partition.values)
                for uri in partition.files
                if uri not in held
            ]
        if not adds and not deletes:  # the table holds what this commit would write
            return _current_snapshot_id(table)
        watermarks = [p.context.summary.watermark_ms for p in partitions]
        summary = {
            COMMIT_ID: commit_id,
            TABLE_PATH: partitions[0].context.spec.require_table_path(),
            PARTITIONS: str(len(partitions)),
        }
        if any(w is not None for w in watermarks):
            summary[WATERMARK] = str(max(w for w in watermarks if w is not None))
        with table.transaction() as transaction:
            mapping = table.metadata.name_mapping()
            names = {f.name for f in table.schema().fields}
            if mapping is None or not names <= {n for f in mapping for n in f.names}:
                # The files have no field ids: readers find their columns by these names.
                mapping_json = table.schema().name_mapping.model_dump_json()
                transaction.set_properties({TableProperties.DEFAULT_NAME_MAPPING: mapping_json})
            written = forward(table.properties, parameters, self.name)
            if written is not None:
                transaction.set_properties(written)
            update = transaction.update_snapshot(snapshot_properties=summary)
            with _producer(table, update, replaces=bool(deletes)) as snapshot:
                for data_file in deletes:
                    snapshot.delete_data_file(data_file)
                for data_file in adds:
                    snapshot.append_data_file(data_file)
        return _current_snapshot_id(table)  # the transaction's, as the table now reads

    def set_table_parameters(self, spec: TableSpec, parameters: Mapping[str, str]) -> bool:
        """Set the properties in a metadata-only commit (no snapshot), forward only."""
        catalog = self.catalog_factory()
        for attempt in range(ATTEMPTS):
            table = self._load(catalog)
            written = forward(table.properties, parameters, self.name)
            if written is None:
                return False
            try:
                with (
                    _catalog_errors(self.name, "its properties"),
                    table.transaction() as transaction,
                ):
                    transaction.set_properties(written)
                return True
            except _conflict() as exc:
                if attempt == ATTEMPTS - 1:
                    raise IcebergError(
                        f"Iceberg table {self.name} kept changing while its properties were "
                        f"set ({ATTEMPTS} attempts, last: {exc}); the next commit run sets them"
                    ) from exc
                time.sleep(BACKOFF_S * 2**attempt)
        return False

    def read_table_parameters(self) -> dict[str, str]:
        """The table's properties, as readers of its published completeness see them."""
        catalog = self.catalog_factory()
        with _catalog_errors(self.name, "reading its properties"):
            return dict(self._load(catalog).properties)

    def drop_partitions(self, spec: TableSpec, partitions: Sequence[Sequence[str | None]]) -> int:
        """Delete the partitions' files from the table in one snapshot; the files stay on
        storage for partition expiration to delete after."""
        table = self._existing(self.catalog_factory())
        if table is None:  # never created: nothing was committed to drop
            return 0
        values = [
            tuple(partition_record_values(table.spec(), table.schema(), v, self.name, str(v)))
            for v in partitions
        ]
        current = _current_files(table, values)
        if current:
            properties = {TABLE_PATH: spec.require_table_path()}
            # The files by name: a delete by predicate cannot prove that a file's rows all
            # match (the keys have no column metrics) and would rewrite the files.
            with (
                _catalog_errors(self.name, "the partitions' removal"),
                table.transaction() as transaction,
                transaction.update_snapshot(snapshot_properties=properties).overwrite() as snapshot,
            ):
                for files in current.values():
                    for data_file in files.values():
                        snapshot.delete_data_file(data_file)
        return len(current)

    def _add_columns(
        self, catalog: Catalog, table: Table, schemas: Sequence[dict[str, Any]]
    ) -> Table:
        """The table with the files' top-level columns it lacks added (optional, as Iceberg
        adds columns), in a schema change of its own: a column with no data yet reads
        null, so it may show before the files that hold it."""
        for attempt in range(ATTEMPTS):
            added = {
                name: kind
                for spark in schemas
                for name, kind in added_columns(table.schema(), spark)
            }
            if not added:
                return table
            try:
                with table.update_schema() as update:
                    for name, kind in added.items():
                        update.add_column(name, kind)
                log.info("added column(s) %s to Iceberg table %s", ", ".join(added), self.name)
                return table
            except _conflict() as exc:
                last = exc
                time.sleep(BACKOFF_S * 2**attempt)
                table = self._load(catalog)
        raise IcebergError(
            f"Iceberg table {self.name} kept changing while the files' new column(s) "
            f"{', '.join(added)} were added ({ATTEMPTS} attempts, last: {last}); nothing "
            "was recorded as committed"
        )

    def _existing(self, catalog: Catalog) -> Table | None:
        """The table (None: missing, and this policy creates it on its first commit)."""
        try:
            return self._load(catalog)
        except IcebergError:
            if self.create_table:
                return None
            raise

    def _create(self, catalog: Catalog, spark: dict[str, Any], keys: Sequence[str]) -> Table:
        """The table, made from the files' Spark schema (or as a racing run made it)."""
        from pyiceberg.exceptions import NamespaceAlreadyExistsError, TableAlreadyExistsError

        schema, partition_spec = table_schema(spark, keys)
        with contextlib.suppress(NamespaceAlreadyExistsError):  # a racing run made it
            catalog.create_namespace_if_not_exists(self.namespace)
        try:
            return catalog.create_table_if_not_exists(
                (self.namespace, self.table), schema=schema, partition_spec=partition_spec
            )
        except TableAlreadyExistsError:  # created by a run racing this one
            return self._load(catalog)

    def _load(self, catalog: Catalog) -> Table:
        from pyiceberg.exceptions import NoSuchNamespaceError, NoSuchTableError

        try:
            return catalog.load_table((self.namespace, self.table))
        except (NoSuchTableError, NoSuchNamespaceError) as exc:
            raise IcebergError(
                f"Iceberg table {self.name} does not exist in catalog {catalog.name}; create "
                "it, or set iceberg.create-table: true to create it on the first commit"
            ) from exc


@dataclass(frozen=True)
class _Footer:
    metadata: pq.FileMetaData
    size: int


def _footers(context: CommitContext) -> Iterator[tuple[str, _Footer]]:
    """Each published file's URI and footer. The table's root is a URI (decoded once, as
    the ledger reads it); the partition's directory names are taken as they are (Spark's
    escaped ``k=50%25`` is the directory's name, and the URI Iceberg keeps says so)."""
    root = context.spec.require_table_path().rstrip("/")
    filesystem, base = resolve_filesystem(root)
    directory = base.rstrip("/") + context.location.rstrip("/")[len(root) :]
    for name, uri in zip(context.files, _uris(context), strict=True):
        try:
            with filesystem.open_input_file(f"{directory}/{name}") as source:
                yield uri, _Footer(pq.read_metadata(source), source.size())
        except OSError as exc:
            raise IcebergError(
                f"published file {uri} of {context.path} cannot be read ({exc}); its footer "
                "gives the Iceberg data file's metrics, so nothing was recorded as committed"
            ) from exc


def _uris(context: CommitContext) -> list[str]:
    """The published files' full URIs (a local table's as ``file://``: Iceberg's readers
    on other engines resolve a bare path against their default file system)."""
    location = context.location.rstrip("/")
    if "://" not in location:
        location = f"file://{location}"
    return [f"{location}/{name}" for name in context.files]


def _spark_schemas(footers: Mapping[str, _Footer]) -> dict[bytes, dict[str, Any]]:
    """The distinct Spark schemas of the files (nearly always one), by their JSON."""
    schemas: dict[bytes, dict[str, Any]] = {}
    for uri, footer in footers.items():
        raw = (footer.metadata.metadata or {}).get(SPARK_SCHEMA_KEY)
        if raw is None or raw not in schemas:
            schemas[raw or b""] = spark_schema(footer.metadata.metadata, uri)
    return schemas


def _check_parquet(name: str, contexts: Sequence[CommitContext]) -> None:
    for context in contexts:
        staged = context.summary.format or context.spec.format
        if staged is not None and staged is not FileFormat.PARQUET:
            raise IcebergError(
                f"the files of {context.path} are {staged}; the iceberg policy registers "
                f"Parquet files in Iceberg table {name}, so this stream's table cannot use it"
            )


def _commit_id(contexts: Sequence[CommitContext]) -> str:
    """What this commit commits, as a digest: the table and each partition's compaction."""
    facts = sorted(f"{c.path}@{c.summary.compaction_seq}" for c in contexts)
    text = "\n".join([contexts[0].spec.require_table_path(), *facts])
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _commit_snapshot(table: Table, commit_id: str) -> int | None:
    """The snapshot of ``table`` that carries ``commit_id`` (in the metadata it loaded)."""
    return next(
        (
            s.snapshot_id
            for s in table.metadata.snapshots
            if (s.summary or {}).get(COMMIT_ID) == commit_id
        ),
        None,
    )


def _current_snapshot_id(table: Table) -> int | None:
    snapshot = table.current_snapshot()
    return None if snapshot is None else snapshot.snapshot_id


def _current_files(
    table: Table, partitions: Sequence[tuple[Any, ...]]
) -> dict[tuple[Any, ...], dict[str, DataFile]]:
    """The table's current data files of these partitions (by their values), by path."""
    if table.current_snapshot() is None:
        return {}
    wanted = set(partitions)
    held: dict[tuple[Any, ...], dict[str, DataFile]] = {}
    for task in table.scan(row_filter=_partition_filter(table, wanted)).plan_files():
        values = tuple(task.file.partition)
        if values in wanted:
            held.setdefault(values, {})[task.file.file_path] = task.file
    return held


def _partition_filter(table: Table, partitions: Iterable[tuple[Any, ...]]) -> BooleanExpression:
    """Rows of any of these partitions: what the scan plans files for (Iceberg skips the
    manifests whose partition ranges hold none of them)."""
    from pyiceberg.expressions import AlwaysFalse, And, EqualTo, IsNull, Or

    names = [table.schema().find_field(f.source_id).name for f in table.spec().fields]
    expression: BooleanExpression = AlwaysFalse()
    for values in partitions:
        terms = [
            IsNull(name) if value is None else EqualTo(name, value)
            for name, value in zip(names, values, strict=True)
        ]
        one = terms[0]
        for term in terms[1:]:
            one = And(one, term)
        expression = Or(expression, one)
    return expression


def _data_file(table: Table, uri: str, footer: _Footer, values: tuple[Any, ...]) -> DataFile:
    """The Iceberg data file of one published file: metrics from its footer."""
    from pyiceberg.io.pyarrow import (
        MetricModeTypes,
        MetricsMode,
        compute_statistics_plan,
        data_file_statistics_from_parquet_metadata,
        parquet_path_to_id_mapping,
    )
    from pyiceberg.manifest import DataFile, DataFileContent
    from pyiceberg.manifest import FileFormat as IcebergFileFormat
    from pyiceberg.typedef import Record

    schema = table.schema()
    mapping = parquet_path_to_id_mapping(schema)
    plan = compute_statistics_plan(schema, table.metadata.properties)
    metadata = footer.metadata
    for index in range(metadata.num_columns):
        column = metadata.schema.column(index)
        if column.physical_type == "INT96":  # no defined order: counts, no bounds
            field_id = mapping[column.path]
            plan[field_id] = replace(plan[field_id], mode=MetricsMode(MetricModeTypes.COUNTS))
    statistics = data_file_statistics_from_parquet_metadata(
        parquet_metadata=metadata, stats_columns=plan, parquet_column_mapping=mapping
    )
    return DataFile.from_args(
        content=DataFileContent.DATA,
        file_path=uri,
        file_format=IcebergFileFormat.PARQUET,
        partition=Record(*values),
        file_size_in_bytes=footer.size,
        sort_order_id=None,
        spec_id=table.metadata.default_spec_id,
        equality_ids=None,
        key_metadata=None,
        **statistics.to_serialized_dict(),
    )


def _producer(table: Table, update: UpdateSnapshot, replaces: bool) -> Any:
    """The snapshot's producer: an overwrite when files leave, else an append that merges
    manifests when the table asks for it (``commit.manifest-merge.enabled``, as Iceberg's
    own appends do; otherwise each commit adds a manifest until the table's maintenance
    rewrites them)."""
    from pyiceberg.table import TableProperties
    from pyiceberg.utils.properties import property_as_bool

    if replaces:
        return update.overwrite()
    merge = property_as_bool(
        table.properties,
        TableProperties.MANIFEST_MERGE_ENABLED,
        TableProperties.MANIFEST_MERGE_ENABLED_DEFAULT,
    )
    return update.merge_append() if merge else update.fast_append()


@contextlib.contextmanager
def _catalog_errors(name: str, what: str) -> Iterator[None]:
    """The catalog's own refusal (:func:`catalog_errors`) as one error naming the table,
    caused by it; a conflict, or any other error, stays itself."""
    try:
        yield
    except catalog_errors() as exc:
        fix = "nothing was recorded as committed"
        if HIVE2_REFUSAL in str(exc):  # a Hive 2 metastore has no such column type
            fix = f"a Hive 2 metastore needs iceberg.catalog.{HIVE2_COMPATIBLE}: true; {fix}"
        raise IcebergError(
            f"the catalog of Iceberg table {name} refused {what} ({type(exc).__name__}: "
            f"{exc}); {fix}"
        ) from exc


def _conflict() -> type[Exception]:
    from pyiceberg.exceptions import CommitFailedException

    return CommitFailedException


@functools.cache
def catalog_errors() -> tuple[type[Exception], ...]:
    """What an Iceberg catalog refuses with: pyiceberg's own exceptions (a REST catalog's
    answers, a missing table or namespace, a lock not taken), and those of the clients
    its catalogs talk through: SQLAlchemy's (the SQL catalog), botocore's (Glue, DynamoDB,
    S3), Thrift's (Hive), and ``OSError`` (a connection, the warehouse's storage). A
    conflict (``CommitFailedException``) is not one: the caller decides again."""
    from pyiceberg import exceptions as refusals

    errors: list[type[Exception]] = [
        refusals.RESTError,
        refusals.NoSuchTableError,
        refusals.NoSuchNamespaceError,
        refusals.NoSuchIdentifierError,
        refusals.NoSuchPropertyException,
        refusals.NamespaceAlreadyExistsError,
        refusals.NamespaceNotEmptyError,
        refusals.TableAlreadyExistsError,
        refusals.DynamoDbError,
        refusals.SignError,
        refusals.WaitingForLockException,
        OSError,
    ]
    with contextlib.suppress(ImportError):  # the hive catalog's (pyiceberg[hive])
        from thrift.Thrift import TException

        errors.append(TException)
    with contextlib.suppress(ImportError):  # the sql catalog's extra
        from sqlalchemy.exc import SQLAlchemyError

        errors.append(SQLAlchemyError)
    with contextlib.suppress(ImportError):  # the glue, dynamodb and s3 extras'
        from botocore.exceptions import BotoCoreError, ClientError

        errors += [BotoCoreError, ClientError]
    return tuple(errors)


def loading_errors() -> tuple[type[Exception], ...]:
    """What loading a catalog refuses with: :func:`catalog_errors`, pyiceberg's
    ``ValueError`` for properties it cannot make a catalog of (an unknown ``type``), and
    its ``NotInstalledError`` for a catalog type whose extra is missing."""
    from pyiceberg.exceptions import NotInstalledError

    return (*catalog_errors(), ValueError, NotInstalledError)


def wants_metastore_uri(properties: Mapping[str, str]) -> bool:
    """Whether the catalog is a Hive one without a ``uri``: it then takes the metastore's
    (the Airflow connection's, or the CLI's ``--metastore-uri``)."""
    return properties.get("type") == "hive" and "uri" not in properties


def load_catalog(properties: Mapping[str, str]) -> Catalog:
    """pyiceberg's catalog of these properties (``name`` picks an entry of its own
    configuration, ``.pyiceberg.yaml`` or ``PYICEBERG_CATALOG__…``; default ``default``)."""
    load = import_extra("pyiceberg.catalog", "iceberg", "the iceberg policy").load_catalog
    rest = dict(properties)
    name = rest.pop("name", "default")
    try:
        return load(name, **rest)
    except loading_errors() as exc:
        raise IcebergError(
            f"pyiceberg could not load Iceberg catalog {name!r} ({exc}); check the "
            "iceberg.catalog.* options (type, uri, warehouse)"
        ) from exc
