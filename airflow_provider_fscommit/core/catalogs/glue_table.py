"""``GlueTable``: a table of the AWS Glue Data Catalog.

What Athena, EMR, Glue jobs, Redshift Spectrum and Trino's Glue connector read. The
partitions of a commit are looked up with ``batch_get_partition``, the missing ones
created with ``batch_create_partition`` and the ones whose location or parameters changed
(late data re-commits) updated with ``batch_update_partition``, in Glue's chunks; one
that already says what this commit would write is left alone, so a rerun writes nothing.
A partition's storage descriptor is the table's with the published directory as its
location, its parameters the ones a Hive metastore gets (:mod:`hive_partition`); a
partition's new location is one ``batch_update_partition`` entry, so readers switch to a
rewrite's directory at once.

Glue answers a batch call with per-partition errors rather than failing it: those are
never dropped. Throttling and concurrent modification are retried with backoff; any
other error fails the commit naming the partitions. The ledger then records none of the
call's partitions, as with any policy that fails: the ones Glue took are in it once, and
the next run finds them unchanged (no Glue write), creates the refused ones and records
them all, so the chain's later policies and the asset events see every partition once.

The client comes from a factory (the operators pass the Amazon provider's, the command
line boto3's standard chain), so this module needs neither Airflow nor boto3 itself.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

from airflow_provider_fscommit.core.catalogs.catalog_table import CatalogTable, forward
from airflow_provider_fscommit.core.catalogs.hive_partition import (
    catalog_values,
    check_format,
    done_location,
    done_values,
    partition_parameters,
    unchanged,
)
from airflow_provider_fscommit.core.config.options import PolicyKind
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.errors import GlueCatalogError, MissingExtraError
from airflow_provider_fscommit.core.publish.published import CommitContext

GlueClientFactory = Callable[[], Any]
T = TypeVar("T")

# Glue's limits per call (API reference: BatchGetPartition 1000, BatchCreatePartition and
# BatchUpdatePartition 100, BatchDeletePartition 25).
GET_CHUNK, WRITE_CHUNK, DELETE_CHUNK = 1000, 100, 25
#: Errors Glue gives for a call or an entry that a later attempt can pass.
RETRYABLE = frozenset(
    {
        "ThrottlingException",
        "ConcurrentModificationException",
        "InternalServiceException",
        "OperationTimeoutException",
    }
)
ATTEMPTS = 6
BACKOFF_S = 0.25
# The storage descriptor fields a PartitionInput takes (GetTable answers with more).
_DESCRIPTOR_FIELDS = (
    "Columns",
    "InputFormat",
    "OutputFormat",
    "Compressed",
    "NumberOfBuckets",
    "SerdeInfo",
    "BucketColumns",
    "SortColumns",
    "Parameters",
    "SkewedInfo",
    "StoredAsSubDirectories",
    "SchemaReference",
)
# The fields a TableInput takes (GetTable answers with more: times, versions, ids).
_TABLE_FIELDS = (
    "Name",
    "Description",
    "Owner",
    "LastAccessTime",
    "LastAnalyzedTime",
    "Retention",
    "StorageDescriptor",
    "PartitionKeys",
    "ViewOriginalText",
    "ViewExpandedText",
    "TableType",
    "Parameters",
    "TargetTable",
)
_CREDENTIAL_CODES = frozenset(
    {
        "AccessDeniedException",
        "UnrecognizedClientException",
        "InvalidClientTokenId",
        "InvalidSignatureException",
        "SignatureDoesNotMatch",
        "ExpiredTokenException",
    }
)


class GlueTable(CatalogTable):
    """One table of a Glue Data Catalog; partitions go in batches.

    :param client_factory: makes a boto3 Glue client (credentials, region, endpoint).
    :param catalog_id: the catalog's AWS account id (None: the caller's own).
    """

    kind = PolicyKind.GLUE
    holds_done_partitions = True
    switches_location = True

    def __init__(
        self,
        client_factory: GlueClientFactory,
        database: str,
        table: str,
        catalog_id: str | None = None,
    ) -> None:
        self.client_factory = client_factory
        self.database = database
        self.table = table
        self.catalog_id = catalog_id
        self.name = f"{database}.{table}"
        self._where = "the Glue Data Catalog"

    def add_partitions(
        self, contexts: Sequence[CommitContext], completeness: Mapping[str, str] | None = None
    ) -> None:
        """Create the partitions Glue lacks, update the changed ones; name any it refused.
        (The completeness is set after, by :meth:`set_table_parameters`.)"""
        if not contexts:
            return
        client = self._client()
        table = self._table(client, contexts[0].spec)
        descriptor = table.get("StorageDescriptor") or {}
        serde = (descriptor.get("SerdeInfo") or {}).get("SerializationLibrary")
        check_format(
            self.name,
            table.get("Parameters"),
            serde,
            descriptor.get("InputFormat"),
            contexts,
            GlueCatalogError,
        )
        values = {c.path: catalog_values(c.spec, c.values) for c in contexts}
        existing = self._existing(client, list(values.values()))
        creates, updates = [], []
        for context in contexts:
            held = existing.get(tuple(values[context.path]))
            if held is None:
                partition = self._input(descriptor, values[context.path], context)
                creates.append((context.path, partition))
                continue
            storage, parameters = held.get("StorageDescriptor") or {}, held.get("Parameters") or {}
            if unchanged(storage.get("Location", ""), parameters, context):
                continue
            partition = self._input(storage, values[context.path], context)
            partition["Parameters"] = parameters | partition["Parameters"]
            updates.append((context.path, partition))
        failed = self._create(client, creates) | self._update(client, updates)
        self._refused(
            failed,
            f"{len(failed)} of {len(contexts)} partition(s)",
            "the others are in Glue, nothing was recorded as committed, and the next run "
            "commits these once more",
        )

    def add_done_partitions(self, contexts: Sequence[CommitContext]) -> None:
        """Create each done partition Glue lacks (one already there is kept: a re-commit of
        late data writes nothing here)."""
        if not contexts:
            return
        client = self._client()
        table = self._table(client, contexts[0].spec)
        descriptor = table.get("StorageDescriptor") or {}
        done = {c.path: done_values(catalog_values(c.spec, c.values)) for c in contexts}
        existing = self._existing(client, list(done.values()))
        creates = [
            (c.path, self._input(descriptor, done[c.path], c, done_location(c)))
            for c in contexts
            if tuple(done[c.path]) not in existing
        ]
        failed = self._create(client, creates, existing_ok=True)
        self._refused(
            failed,
            f"the done partitions of {len(failed)} partition(s)",
            "nothing was recorded as committed, and the next run adds them again",
        )

    def set_table_parameters(self, spec: TableSpec, parameters: Mapping[str, str]) -> bool:
        """``update_table`` with the table as it is and these parameters added, forward only.

        Glue replaces a table whole, so every field it answered with goes back. The
        update skips Glue's table-version archive: an hourly parameter change would
        otherwise add a version of the table every hour.
        """
        client = self._client()
        table = self._table(client, spec)
        written = forward(table.get("Parameters"), parameters, self.name)
        if written is None:
            return False
        table_input = {k: table[k] for k in _TABLE_FIELDS if k in table}
        table_input["Parameters"] = (table.get("Parameters") or {}) | written
        self._call(client, "update_table", TableInput=table_input, SkipArchive=True)
        return True

    def drop_partitions(self, spec: TableSpec, partitions: Sequence[Sequence[str | None]]) -> int:
        """``batch_delete_partition`` in chunks; a partition Glue does not have is gone."""
        if not partitions:
            return 0
        client = self._client()
        self._table(client, spec)
        held = [catalog_values(spec, values) for values in partitions]
        with_done = PolicyKind.DONE_PARTITION in spec.policy_kind
        doomed = [*held, *(done_values(v) for v in held)] if with_done else held
        missing: set[tuple[str, ...]] = set()
        for chunk in _chunks(doomed, DELETE_CHUNK):
            answer = self._call(
                client,
                "batch_delete_partition",
                TableName=self.table,
                PartitionsToDelete=[{"Values": v} for v in chunk],
            )
            for error in answer.get("Errors") or []:
                detail = error.get("ErrorDetail") or {}
                if detail.get("ErrorCode") != "EntityNotFoundException":
                    raise GlueCatalogError(
                        f"dropping expired partitions of {self.name} from {self._where} failed "
                        f"({detail.get('ErrorCode')}: {detail.get('ErrorMessage')} for "
                        f"{error.get('PartitionValues')}); no file was deleted, and a rerun "
                        "expires them again safely"
                    )
                missing.add(tuple(error.get("PartitionValues") or ()))
        return sum(tuple(v) not in missing for v in held)

    def _refused(self, failed: dict[str, str], what: str, then: str) -> None:
        """One error naming every partition Glue refused and why, if it refused any."""
        if failed:
            listed = "; ".join(f"{path}: {reason}" for path, reason in sorted(failed.items()))
            raise GlueCatalogError(
                f"{self._where} refused {what} of {self.name} ({listed}); {then}"
            )

    def read_table_parameters(self) -> dict[str, str]:
        """The table's parameters, as readers of its published completeness see them."""
        client = self._client()
        try:
            table = self._call(client, "get_table", Name=self.table)["Table"]
        except _ClientError as exc:
            if exc.code != "EntityNotFoundException":
                raise
            raise GlueCatalogError(
                f"table {self.name} does not exist in {self._where}; fix the database or table "
                "name, or the region and catalog id (glue_catalog_id) if it is elsewhere"
            ) from exc
        return dict(table.get("Parameters") or {})

    def _client(self) -> Any:
        """A client, or the one error a user fixes by configuring AWS."""
        try:
            client = self.client_factory()
        except MissingExtraError:
            raise  # boto3 or the Amazon provider is not installed: nothing to configure
        except Exception as exc:  # botocore's NoRegionError, a connection the hook refuses
            raise GlueCatalogError(
                f"cannot make an AWS Glue client for {self.name} ({type(exc).__name__}: {exc}); "
                "give the AWS connection (aws_conn_id) or the environment a region and "
                "credentials (AWS_DEFAULT_REGION, the standard credential chain); nothing was "
                "recorded as committed"
            ) from exc
        region = getattr(getattr(client, "meta", None), "region_name", None)
        account = f", catalog {self.catalog_id}" if self.catalog_id else ""
        self._where = f"the Glue Data Catalog ({region}{account})"
        return client

    def _table(self, client: Any, spec: TableSpec) -> dict[str, Any]:
        try:
            table = self._call(client, "get_table", Name=self.table)["Table"]
        except _ClientError as exc:
            if exc.code != "EntityNotFoundException":
                raise
            raise self._missing(client, spec) from exc
        keys = [k["Name"] for k in table.get("PartitionKeys") or []]
        if [k.lower() for k in keys] != [k.lower() for k in spec.partition_keys]:
            raise GlueCatalogError(
                f"table {self.name} in {self._where} is partitioned by {keys}, but the table "
                f"spec's partition keys are {list(spec.partition_keys)}; make them agree"
            )
        return table

    def _missing(self, client: Any, spec: TableSpec) -> GlueCatalogError:
        """Which is missing, the database or the table, and how to create it."""
        try:
            self._call(client, "get_database", Name=self.database, table=False)
        except _ClientError as exc:
            if exc.code == "EntityNotFoundException":
                return GlueCatalogError(
                    f"database {self.database} does not exist in {self._where}; create it "
                    f"(aws glue create-database --database-input Name={self.database}, or "
                    "Athena's CREATE DATABASE) or fix metastore_database "
                    "(--metastore-database), and check the region; nothing was committed"
                )
            raise
        keys = ", ".join(f"{k} string" for k in spec.partition_keys)
        return GlueCatalogError(
            f"table {self.name} does not exist in {self._where}; create it partitioned by "
            f"({keys}) (Athena's CREATE EXTERNAL TABLE ... PARTITIONED BY, or aws glue "
            "create-table) or fix metastore_table (--metastore-table); nothing was committed"
        )

    def _existing(
        self, client: Any, values: list[list[str]]
    ) -> dict[tuple[str, ...], dict[str, Any]]:
        found: dict[tuple[str, ...], dict[str, Any]] = {}
        for chunk in _chunks(values, GET_CHUNK):
            pending = [{"Values": v} for v in chunk]
            for attempt in range(ATTEMPTS):
                answer = self._call(
                    client, "batch_get_partition", TableName=self.table, PartitionsToGet=pending
                )
                for partition in answer.get("Partitions") or []:
                    found[tuple(partition["Values"])] = partition
                pending = answer.get("UnprocessedKeys") or []
                if not pending:
                    break
                _sleep(attempt)
            if pending:
                raise GlueCatalogError(
                    f"{self._where} left {len(pending)} partition(s) of {self.name} unread "
                    f"after {ATTEMPTS} attempts (throttled); nothing was committed, and a retry "
                    "is safe"
                )
        return found

    def _create(
        self,
        client: Any,
        partitions: list[tuple[str, dict[str, Any]]],
        existing_ok: bool = False,
    ) -> dict[str, str]:
        """Create in chunks; an entry Glue already has (another writer) is updated instead,
        or, for a done partition (``existing_ok``), kept."""
        failed: dict[str, str] = {}
        raced: list[tuple[str, dict[str, Any]]] = []
        for chunk in _chunks(partitions, WRITE_CHUNK):
            refused = self._batch(
                client,
                "batch_create_partition",
                chunk,
                lambda entries: {"PartitionInputList": [p for _, p in entries]},
                lambda error: error.get("PartitionValues"),
            )
            for path, code, message in refused:
                if code == "AlreadyExistsException":
                    if not existing_ok:
                        raced.append(next(e for e in chunk if e[0] == path))
                else:
                    failed[path] = f"{code}: {message}"
        return failed | self._update(client, raced)

    def _update(self, client: Any, partitions: list[tuple[str, dict[str, Any]]]) -> dict[str, str]:
        failed: dict[str, str] = {}
        for chunk in _chunks(partitions, WRITE_CHUNK):
            refused = self._batch(
                client,
                "batch_update_partition",
                chunk,
                lambda entries: {
                    "Entries": [
                        {"PartitionValueList": p["Values"], "PartitionInput": p} for _, p in entries
                    ]
                },
                lambda error: error.get("PartitionValueList"),
            )
            failed |= {path: f"{code}: {message}" for path, code, message in refused}
        return failed

    def _batch(
        self,
        client: Any,
        operation: str,
        entries: list[tuple[str, dict[str, Any]]],
        request: Callable[[list[tuple[str, dict[str, Any]]]], dict[str, Any]],
        values_of: Callable[[dict[str, Any]], list[str] | None],
    ) -> list[tuple[str, str, str]]:
        """One batch call, its retryable per-entry errors retried with backoff.

        Returns (partition path, error code, message) for every entry Glue refused.
        """
        by_values = {tuple(p["Values"]): (path, p) for path, p in entries}
        pending = entries
        refused: list[tuple[str, str, str]] = []
        for attempt in range(ATTEMPTS):
            answer = self._call(client, operation, TableName=self.table, **request(pending))
            retry = []
            refused = []
            for error in answer.get("Errors") or []:
                path, partition = by_values[tuple(values_of(error) or ())]
                detail = error.get("ErrorDetail") or {}
                code = detail.get("ErrorCode") or "UnknownError"
                refused.append((path, code, detail.get("ErrorMessage") or ""))
                if code in RETRYABLE:
                    retry.append((path, partition))
            if not retry or attempt == ATTEMPTS - 1:
                return refused
            pending = retry
            _sleep(attempt)
        return refused

    def _call(self, client: Any, operation: str, table: bool = True, **kwargs: Any) -> Any:
        """A Glue call with the catalog and database filled in, throttling retried."""
        if self.catalog_id:
            kwargs["CatalogId"] = self.catalog_id
        if table:
            kwargs["DatabaseName"] = self.database
        return _retrying(lambda: self._answer(client, operation, kwargs))

    def _answer(self, client: Any, operation: str, kwargs: dict[str, Any]) -> Any:
        """One call; botocore's refusal (an error answer, or no answer) as Glue's error.

        botocore is imported here, not at the top: the client the factory made is boto3's,
        so botocore is there whenever a call is made."""
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            return getattr(client, operation)(**kwargs)
        except BotoCoreError as exc:  # no answer: the endpoint, the network, the signing
            raise GlueCatalogError(
                f"cannot reach {self._where} for {self.name} ({type(exc).__name__}: {exc}); "
                "check the endpoint and network; nothing was recorded as committed, and a "
                "retry is safe"
            ) from exc
        except ClientError as exc:
            code = _error_code(exc) or "UnknownError"
            if code in _CREDENTIAL_CODES or _status(exc) == 403:
                raise GlueCatalogError(
                    f"{self._where} refused the AWS credentials for {self.name} ({code}); check "
                    "the AWS connection (aws_conn_id) or the credential chain, and that the "
                    "identity may call glue:GetTable, glue:BatchGetPartition, "
                    "glue:BatchCreatePartition, glue:BatchUpdatePartition, glue:UpdateTable "
                    "(and glue:BatchDeletePartition to expire); nothing was committed"
                ) from exc
            raise _ClientError(
                code,
                f"{self._where} answered {operation} for {self.name} with {code} ({exc}); "
                "nothing was recorded, and a retry is safe",
            ) from exc

    def _input(
        self,
        descriptor: dict[str, Any],
        values: list[str],
        context: CommitContext,
        location: str | None = None,
    ) -> dict[str, Any]:
        """A PartitionInput: ``descriptor``'s storage at ``location`` (default: published)."""
        storage = {k: descriptor[k] for k in _DESCRIPTOR_FIELDS if k in descriptor}
        storage["Location"] = location or context.location
        parameters = partition_parameters(context) if location is None else {}
        return {"Values": values, "StorageDescriptor": storage, "Parameters": parameters}


class _ClientError(GlueCatalogError):
    """A Glue error answer, with its code (botocore's ``ClientError`` without botocore)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def _error_code(exc: Exception) -> str | None:
    """The AWS error code of a botocore ``ClientError`` (None: the answer names none)."""
    response = getattr(exc, "response", None)
    if not isinstance(response, dict):
        return None
    return (response.get("Error") or {}).get("Code") or None


def _status(exc: Exception) -> int | None:
    """The HTTP status of an error answer (403: the request's identity was refused)."""
    return (getattr(exc, "response", {}).get("ResponseMetadata") or {}).get("HTTPStatusCode")


def _retrying(call: Callable[[], T]) -> T:
    """``call()``, again with backoff while Glue throttles it (the last answer is raised)."""
    for attempt in range(ATTEMPTS - 1):
        try:
            return call()
        except _ClientError as exc:
            if exc.code not in RETRYABLE:
                raise
            _sleep(attempt)
    return call()


def _sleep(attempt: int) -> None:
    """Exponential backoff with full jitter, as AWS recommends for throttling."""
    time.sleep(random.uniform(0, BACKOFF_S * 2**attempt))


def _chunks(items: Sequence[T], size: int) -> Iterator[list[T]]:
    for start in range(0, len(items), size):
        yield list(items[start : start + size])
