"""``fscommit plan``: what ``fscommit compact`` would do now (``compact --dry-run``)."""

from __future__ import annotations

import argparse

from airflow_provider_fscommit.cli.arguments import Commands
from airflow_provider_fscommit.cli.compact import add_compaction_arguments, run_compact
from airflow_provider_fscommit.cli.compaction import SparkOptions
from airflow_provider_fscommit.core.config.table_spec import TableSpec

NAME = "plan"


def add_parser(commands: Commands) -> None:
    add_compaction_arguments(
        commands.add_parser(
            NAME,
            help="show what compact would do (compact --dry-run)",
            description="Show the compaction plan of committable partitions; change nothing.",
        )
    )


def run(spec: TableSpec, args: argparse.Namespace) -> int:
    spark = SparkOptions.from_args(args)
    return run_compact(spec, args.partitions or None, spark, dry_run=True, as_json=args.json)
