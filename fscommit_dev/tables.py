"""The tests' hourly table, as options and as ``fscommit`` command-line flags.

One description of the table: the specs, the operators and the CLI runs of a test are all
built from the same options, and :func:`table_flags` turns options into the flags the
CLI reads back into those options (its own flag table), so what a test hands the CLI
cannot drift from the spec it checks against.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from airflow_provider_fscommit.cli.arguments import TABLE_FLAGS
from airflow_provider_fscommit.core.config import options as o
from airflow_provider_fscommit.core.config.table_spec import TableSpec

# The flag of each table option that has one.
_FLAG_OF = {option.name: flag for flag, option, _ in TABLE_FLAGS}


def hourly_table(staging: str, checkpoint: str, **options: Any) -> dict[str, Any]:
    """Options of the tests' hourly table: ``dt=…/hour=…``, committable 1 h after the hour.

    Flink keys, as users copy them from a Flink table; ``options`` add to them or replace
    them, by Python name or Flink key alike.
    """
    return with_options(
        {
            "staging_path": staging,
            "checkpoint_path": checkpoint,
            "partition_keys": "dt,hour",
            "partition.time-extractor.timestamp-pattern": "$dt $hour:00:00",
            "sink.partition-commit.delay": "1 h",
        },
        **options,
    )


def status_args(stream, *extra: str) -> list[str]:
    """The arguments of ``fscommit status`` for the hourly table of ``stream``."""
    return ["status", *table_flags(hourly_table(stream.staging, stream.checkpoint)), *extra]


def with_options(options: Mapping[str, Any], **changes: Any) -> dict[str, Any]:
    """``options`` with ``changes``, each replacing the option it names under any name.

    Keeping both a Flink key and its Python name would make the spec refuse the option as
    given twice.
    """
    changed = {o.lookup(name).name for name in changes}
    kept = {name: value for name, value in options.items() if o.lookup(name).name not in changed}
    return kept | changes


def table_flags(table: Mapping[str, Any] | TableSpec) -> list[str]:
    """The ``fscommit`` flags of a table: its options, or what a spec sets off the defaults.

    Each option becomes its own flag (``--staging-path``, ``--delay``…); lists are joined with
    commas, as the options parse them.
    """
    flags: list[str] = []
    for name, value in _options(table).items():
        text = ",".join(map(str, value)) if isinstance(value, list | tuple) else str(value)
        flags += [_FLAG_OF[o.lookup(name).name], text]
    return flags


def _options(table: Mapping[str, Any] | TableSpec) -> Mapping[str, Any]:
    if not isinstance(table, TableSpec):
        return table
    plain = table.to_dict()
    return {name: plain[name] for name in plain if getattr(table, name) != o.lookup(name).default}
