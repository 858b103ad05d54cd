"""show what compact would do (compact --dry-run)

Show the compaction plan of committable partitions; change nothing. Without partition
keys, what is not given is read off the stream (as init does) and said on stderr.
"""

from __future__ import annotations

import argparse

from airflow_provider_fscommit.cli import compact
from airflow_provider_fscommit.cli.compact import run_compact
from airflow_provider_fscommit.cli.compaction import SparkOptions
from airflow_provider_fscommit.core.config.table_spec import TableSpec

EXAMPLES = """\
  fscommit plan --spec specs/events.yaml
  fscommit plan --staging-path staging --checkpoint-path checkpoint --table-path table --json"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``compact``, so a plan is shown for exactly the run it describes."""
    compact.add_arguments(parser)


def run(spec: TableSpec, args: argparse.Namespace) -> int:
    spark = SparkOptions.from_args(args)
    return run_compact(spec, args.partitions or None, spark, dry_run=True, as_json=args.json)
