"""drop published partitions older than --expiration-time (dry run by default)

List the published partitions past partition.expiration-time; with --apply, drop them
from the metastore, delete their published files and record them as expired (late data
for them is never published again). Staged files are never touched.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys

from airflow_provider_fscommit.cli.arguments import (
    add_metastore_uri,
    glue_client_factory,
    iceberg_catalog_factory,
    metastore_client_factory,
)
from airflow_provider_fscommit.core.commit.policy_factory import catalog_policies
from airflow_provider_fscommit.core.config.quantities import format_duration, format_size, iso_ms
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.maintenance.expiration import (
    ExpirationReport,
    expire_partitions,
)

EXAMPLES = """\
  fscommit expire --spec specs/events.yaml                   # list what would expire
  fscommit expire --spec specs/events.yaml --apply --metastore-uri thrift://metastore:9083"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Lists by default, since expiring drops partitions and deletes files."""
    parser.add_argument("--apply", action="store_true", help="expire them (default: list)")
    parser.add_argument(
        "--force",
        action="store_true",
        help="check even if partition.expiration-check-interval has not passed",
    )
    add_metastore_uri(parser)


def run(spec: TableSpec, args: argparse.Namespace) -> int:
    catalogs = catalog_policies(
        spec,
        metastore_client_factory(args.metastore_uri),
        glue_client_factory(),
        iceberg_catalog=iceberg_catalog_factory(spec, args.metastore_uri),
    )
    # Airflow's hooks log to stdout; keep stdout for the report (and for --json).
    with contextlib.redirect_stdout(sys.stderr):
        expired = expire_partitions(
            spec, dry_run=not args.apply, catalogs=catalogs, force=args.force
        )
    print(json.dumps(expired.to_dict(), indent=2) if args.json else render_expiry(expired))
    return 1 if expired.errors else 0


def render_expiry(report: ExpirationReport) -> str:
    limit = f"{format_duration(report.expiration_time)} ({report.strategy})"
    if report.skipped_until_ms is not None:
        return (
            f"partitions were checked for expiration less than "
            f"partition.expiration-check-interval ago; next check after "
            f"{iso_ms(report.skipped_until_ms)} (--force to check now)"
        )
    lines = [
        f"{p['partition']}  since {p['age_from']}  {p['files']} file(s), {format_size(p['bytes'])}"
        for p in report.partitions
    ]
    lines += [f"{e['partition']}  error: {e['error']}" for e in report.errors]
    verb = "would expire" if report.dry_run else "expired"
    total = sum(p["bytes"] for p in report.partitions)
    lines.append(
        f"{verb} {len(report.partitions)} partition(s) older than {limit}, "
        f"{sum(p['files'] for p in report.partitions)} published file(s), {format_size(total)}"
        + ("; --apply to expire them" if report.dry_run and report.partitions else "")
    )
    return "\n".join(lines)
