"""write this host's Java class archive for the compaction's spark-submit drivers now

A compaction's spark-submit driver started here (client mode) starts seconds sooner from
the host's class archive. A run writes it on its own where the cache outlives runs (the
second run in a cache); this command writes it now, with a small application of the
Spark that --spark-home or --spark-submit names (default: the one `fscommit compact`
uses). Use it where the cache starts empty every time: in an image build, or into a
volume the workers share, with FSCOMMIT_CLASS_ARCHIVE_DIR pointing at it for both. An
archive already there is kept (exit 0, nothing run).
"""

from __future__ import annotations

import argparse
import json

from airflow_provider_fscommit.jobs.class_archive import write_archive
from airflow_provider_fscommit.jobs.launch import SparkInstallation

#: This command works on the host's Spark, not on a table.
TAKES_TABLE = False
EXAMPLES = (
    "  fscommit class-archive --json\n"
    "  fscommit class-archive --spark-home /opt/spark   # the Spark the compactions submit to"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--spark-home", help="the Spark to write it for (default: SPARK_HOME)")
    parser.add_argument("--spark-submit", help="that Spark's spark-submit (default: its home's)")


def run(args: argparse.Namespace) -> int:
    spark = SparkInstallation.locate(args.spark_home, args.spark_submit)
    path, written = write_archive(spark)
    if args.json:
        print(json.dumps({"archive": str(path), "written": written}))
    else:
        print(f"{'Wrote' if written else 'Kept'} {path}")
    return 0
