"""Errors a user can hit, each naming the thing that is wrong and the way to fix it.

Every error class of the project is here, grouped by what it is about, so a caller (the
command line, a task, a test) finds what it can catch in one place.
"""

from __future__ import annotations

import importlib
from types import ModuleType


class FsCommitError(Exception):
    """Base class: a problem with the user's table, configuration or input, not a bug.

    The command line prints these as one line and exits with status 1; the Airflow tasks
    let them fail the task with the same message.
    """


# Configuration and partitions.


class ConfigError(FsCommitError):
    """An option or table spec value is invalid."""


class MissingExtraError(ConfigError):
    """A policy, catalog or store is used whose dependencies are an extra (``hive``,
    ``glue``, ``iceberg``, ``s3``) this installation lacks; the message says what to install."""

    def __init__(self, extra: str, what: str, missing: str) -> None:
        super().__init__(
            f"{what} needs the {extra!r} extra, which is not installed (no module {missing!r}): "
            f"pip install 'airflow-provider-fscommit[{extra}]'"
        )
        self.extra = extra


def import_extra(module: str, extra: str, what: str) -> ModuleType:
    """``module``, one of the ``extra`` extra's dependencies, imported where ``what`` is
    used (never at the package's import); without it, the one :class:`MissingExtraError`."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        raise MissingExtraError(extra, what, exc.name or module) from None


class SpecInferenceError(ConfigError):
    """The stream does not tell a table option for sure: two readings fit, or nothing does."""


class PartitionPathError(FsCommitError):
    """A partition path or value does not fit the table's partition keys."""


class PartitionTimeError(FsCommitError):
    """A partition's time cannot be extracted from its values."""


# What Spark wrote.


class CheckpointError(FsCommitError):
    """The streaming query's checkpoint is missing, corrupt or has no usable watermark."""


class SinkLogError(FsCommitError):
    """The file sink log (``_spark_metadata``) is missing, corrupt or inconsistent."""


# Stores and files.


class StoreError(FsCommitError):
    """A store refused or could not be reached: credentials, bucket, permission, network."""


class FormatMismatchError(FsCommitError):
    """The spec's format and the staged files disagree, or a partition mixes formats."""


class SchemaMismatchError(FsCommitError):
    """Files of one partition have schemas that cannot be merged."""


class CsvHeaderError(FsCommitError):
    """CSV files that evidently begin with a header, and no csv.header to say so."""


class LineFileError(FsCommitError):
    """A line-oriented file cannot be merged: its name, its content or its header."""


class UnreadableLineFileError(LineFileError):
    """An input does not decode with its codec; ``uri`` names it for the caller's message."""

    def __init__(self, uri: str, codec: str, reason: str) -> None:
        super().__init__(f"{uri} is not a readable {codec} file: {reason}")
        self.uri = uri


class HeaderMismatchError(LineFileError):
    """A CSV file's header differs from the first file's: merging would mix columns."""

    def __init__(self, first_uri: str, first: bytes, uri: str, header: bytes) -> None:
        super().__init__(
            f"CSV header of {uri} ({shown(header.decode(errors='replace'))}) differs from "
            f"the header of {first_uri} ({shown(first.decode(errors='replace'))}); files "
            "written with different columns cannot be merged into one"
        )


class OrcTailError(FsCommitError):
    """An ORC file's PostScript or Footer does not parse."""


class OrcUserMetadataError(OrcTailError):
    """The ORC tail cannot be rewritten: it is not in the held window or the new one would
    not fit (a tail that does not parse is an ``OrcTailError``)."""


class ColumnStatisticsError(FsCommitError):
    """A published file's footer could not be read for its statistics."""


# The ledger and the table lock.


class LedgerError(FsCommitError):
    """The ledger is unreadable or contradicts the published files."""


class LockTimeout(FsCommitError):
    """Another live run kept the table for longer than we wait."""


class ExpirationError(FsCommitError):
    """Some partitions could not be judged for expiration; the others were handled."""


# Where partitions are committed and compacted.


class MetastoreError(FsCommitError):
    """The metastore refused the commit or could not be reached; retrying is safe."""


class GlueCatalogError(FsCommitError):
    """The AWS Glue Data Catalog refused the commit or could not be reached; retrying is safe."""


class IcebergError(FsCommitError):
    """The Iceberg table cannot take the commit (its schema, its partitioning, a refused or
    conflicting commit), or its catalog could not be reached; nothing was recorded."""


class HttpReportError(FsCommitError):
    """The ``http-report`` endpoint did not accept a report; the next run sends it again."""


class ConnectError(FsCommitError):
    """The Spark Connect server could not be reached or failed the run's units."""


def shown(value: object, limit: int = 80) -> str:
    """``repr(value)`` for a message, cut to ``limit`` characters: input can be huge."""
    text = repr(value)
    if len(text) <= limit:
        return text
    return f"{text[: limit - 1]}… ({len(text)} characters)"
