"""What a Hive-style catalog (a Hive metastore, the AWS Glue Data Catalog) holds of a partition.

Every such catalog gets the same facts, decided here once: the partition's values as a
catalog holds them (a null value is the default partition name), its parameters (Hive's
statistics and our commit facts), whether a partition already says what a commit would
write, the format check that keeps ORC files out of a Parquet table, and Paimon's *done
partition*.

A done partition (Paimon's ``done-partition`` mark-done action) is a second partition
whose last value carries a ``.done`` suffix (``dt=2026-11-20/hour=03.done``): an ordinary
string partition that schedulers wait for. Its location is an empty directory under the
ledger's hidden ``_fscommit/done/``, not the partition's own directory: a query without a
partition filter reads every partition's location, and pointing the done partition at the
data would read every committed row twice. Nothing is ever written there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.errors import FsCommitError
from airflow_provider_fscommit.core.formats.file_format import FileFormat
from airflow_provider_fscommit.core.ledger.ledger import LEDGER_DIR
from airflow_provider_fscommit.core.publish.published import CommitContext

DONE_SUFFIX = ".done"
#: The committed-at time changes with every commit: equal otherwise, a partition is current.
COMMITTED_AT = "fscommit.committed-at"


def catalog_values(spec: TableSpec, values: Sequence[str | None]) -> list[str]:
    """A partition's values as a catalog holds them (null: the default partition name)."""
    return [v if v is not None else spec.partition_default_name for v in values]


def done_values(values: Sequence[str]) -> list[str]:
    """The done partition's values: the last one suffixed ``.done``, as Paimon does."""
    return [*values[:-1], values[-1] + DONE_SUFFIX]


def done_location(context: CommitContext) -> str:
    """Where a done partition points: an empty hidden directory (see the module's doc)."""
    table = context.spec.require_table_path().rstrip("/")
    *parents, last = context.path.split("/")
    return "/".join([table, LEDGER_DIR, "done", *parents, last + DONE_SUFFIX])


def partition_parameters(context: CommitContext) -> dict[str, str]:
    """Hive's statistics and our commit facts (an empty partition has no watermark yet)."""
    summary = context.summary
    facts = {
        "numFiles": summary.files,
        "totalSize": summary.bytes,
        "numRows": summary.rows,
        "fscommit.watermark": summary.watermark_ms,
        "fscommit.max-batch-id": summary.max_batch_id,
        COMMITTED_AT: summary.committed_at_ms,
    }
    return {key: str(value) for key, value in facts.items() if value is not None}


def unchanged(location: str, parameters: Mapping[str, str], context: CommitContext) -> bool:
    """Whether a catalog's partition already says what this commit would write.

    True after a run that committed to the catalog and stopped before the ledger recorded
    it: the rerun then writes nothing there (only the commit time would differ).
    """
    wanted = partition_parameters(context)
    held = {k: v for k, v in parameters.items() if k in wanted and k != COMMITTED_AT}
    return location == context.location and held == {
        k: v for k, v in wanted.items() if k != COMMITTED_AT
    }


# How a catalog's table declares its storage: Spark's own tables name their provider, Glue
# crawlers and Athena a classification; Hive tables their serde (the input format alone
# cannot tell JSON from CSV from text).
_DECLARING_PARAMETERS = ("spark.sql.sources.provider", "classification")
_SERDE_FORMATS = {
    "orc": {"orc"},
    "parquet": {"parquet"},
    "jsonserde": {"json"},
    "opencsvserde": {"csv"},
    "lazysimpleserde": {"csv", "text"},
}


def check_format(
    name: str,
    parameters: Mapping[str, Any] | None,
    serde: str | None,
    input_format: str | None,
    contexts: Sequence[CommitContext],
    error: type[FsCommitError],
) -> None:
    """Refuse partitions whose files the table's declared format cannot read.

    A partition inherits the table's storage descriptor, so ORC files added to a Parquet
    table would be committed and then fail every query. A format the table does not name
    in a way known here is not checked.
    """
    declared = next(
        (str(v).lower() for k in _DECLARING_PARAMETERS if (v := (parameters or {}).get(k))), ""
    )
    serde_name = (serde or "").lower()
    readable = (
        {declared}
        if declared in set(FileFormat)
        else next((f for key, f in _SERDE_FORMATS.items() if key in serde_name), None)
    )
    for context in contexts:
        staged = context.summary.format or context.spec.format
        if readable is not None and staged is not None and staged not in readable:
            shown = declared or input_format or serde_name
            raise error(
                f"table {name} is declared as {shown} ({'/'.join(sorted(readable))}), but "
                f"the staged files of {context.path} are {staged}; nothing was committed. "
                f"Create the table STORED AS / USING {str(staged).upper()}, or point the "
                "spec at the table that holds this stream"
            )
