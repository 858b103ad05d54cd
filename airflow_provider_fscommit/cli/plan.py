"""show what compact would do (compact --dry-run)

Show the compaction plan of committable partitions; change nothing. Without partition
keys, the keys and time pattern are read off the stream (as for status) and said first
(on stderr with --json, whose object stays the plan).
"""

from __future__ import annotations

import argparse
import sys

from airflow_provider_fscommit.cli import compact
from airflow_provider_fscommit.cli.compact import run_compact
from airflow_provider_fscommit.cli.compaction import SparkOptions
from airflow_provider_fscommit.core.config.table_spec import TableSpec


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``compact``, so a plan is shown for exactly the run it describes."""
    compact.add_arguments(parser)


def run(spec: TableSpec, args: argparse.Namespace) -> int:
    spark = SparkOptions.from_args(args)
    if args.inference:
        line = f"Inferred   {args.inference.partitioning.summary}"
        print(line, file=sys.stderr if args.json else sys.stdout)
    return run_compact(spec, args.partitions or None, spark, dry_run=True, as_json=args.json)
