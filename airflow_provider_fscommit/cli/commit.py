"""compact, then run the commit policies (metastore, success file, custom)

Compact committable partitions like 'compact', then make them visible with the policies
of --policy, in that order.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Sequence

from airflow_provider_fscommit.cli import compact
from airflow_provider_fscommit.cli.arguments import (
    add_metastore_uri,
    glue_client_factory,
    iceberg_catalog_factory,
    metastore_client_factory,
)
from airflow_provider_fscommit.cli.compact import run_compact
from airflow_provider_fscommit.cli.compaction import (
    SparkOptions,
    nothing_committable,
    render_summary,
    run_compaction,
)
from airflow_provider_fscommit.cli.exit_codes import ExitCode
from airflow_provider_fscommit.core.commit.committer import PartitionCommitter
from airflow_provider_fscommit.core.commit.policy_factory import create_policies
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.errors import FsCommitError

EXAMPLES = """\
  fscommit commit --spec specs/events.yaml --metastore-uri thrift://metastore:9083
  fscommit commit --spec specs/events.yaml dt=2026-11-20/hour=03 --dry-run"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """A compaction's flags, and the metastore its policies may need."""
    compact.add_arguments(parser)
    add_metastore_uri(parser)


def run(spec: TableSpec, args: argparse.Namespace) -> int:
    return run_commit(
        spec,
        args.partitions or None,
        metastore_uri=args.metastore_uri,
        spark=SparkOptions.from_args(args),
        dry_run=args.dry_run,
        as_json=args.json,
    )


def run_commit(
    spec: TableSpec,
    partitions: Sequence[str] | None,
    *,
    metastore_uri: str | None,
    spark: SparkOptions,
    dry_run: bool,
    as_json: bool,
) -> int:
    committer = PartitionCommitter(
        spec,
        create_policies(
            spec,
            metastore_client_factory(metastore_uri),
            glue_client=glue_client_factory(),
            iceberg_catalog=iceberg_catalog_factory(spec, metastore_uri),
        ),
    )
    if dry_run:
        return run_compact(spec, partitions, spark, dry_run=True, as_json=as_json)
    summary = run_compaction(spec, partitions, spark, show_progress=not as_json)
    if summary.error is not None:
        raise FsCommitError(summary.error)
    if nothing_committable(partitions, summary.selected):
        return ExitCode.NOTHING_COMMITTABLE
    ready = [o.partition for o in summary.outcomes if not o.failed]
    # Airflow's hooks log to stdout; keep stdout for the report (and for --json).
    with contextlib.redirect_stdout(sys.stderr):
        outcomes = [o.to_dict() for o in committer.commit(ready)]
    if as_json:
        print(json.dumps({"compaction": summary.to_dict(), "commits": outcomes}, indent=2))
    else:
        print(render_summary(summary))
        for outcome in outcomes:
            print(f"{outcome['partition']}: {outcome['state']} ({', '.join(spec.policy_kind)})")
    if summary.failed:
        print("fscommit: error: some partitions failed to compact; see above", file=sys.stderr)
    return ExitCode.ERROR if summary.failed else ExitCode.OK
