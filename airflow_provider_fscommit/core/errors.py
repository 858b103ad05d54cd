"""Errors a user can hit, each naming the thing that is wrong and the way to fix it."""


class FsCommitError(Exception):
    """Base class: a problem with the user's table, configuration or input, not a bug.

    The command line prints these as one line and exits with status 1; the Airflow tasks
    let them fail the task with the same message.
    """


class ConfigError(FsCommitError):
    """An option or table spec value is invalid."""


class PartitionPathError(FsCommitError):
    """A partition path or value does not fit the table's partition keys."""


class PartitionTimeError(FsCommitError):
    """A partition's time cannot be extracted from its values."""


class CheckpointError(FsCommitError):
    """The streaming query's checkpoint is missing, corrupt or has no usable watermark."""


class SinkLogError(FsCommitError):
    """The file sink log (``_spark_metadata``) is missing, corrupt or inconsistent."""


class ExpirationError(FsCommitError):
    """Some partitions could not be judged for expiration; the others were handled."""


class HttpReportError(FsCommitError):
    """The ``http-report`` endpoint did not accept a report; the next run sends it again."""


def shown(value: object, limit: int = 80) -> str:
    """``repr(value)`` for a message, cut to ``limit`` characters: input can be huge."""
    text = repr(value)
    if len(text) <= limit:
        return text
    return f"{text[: limit - 1]}… ({len(text)} characters)"
