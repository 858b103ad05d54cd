"""delete staged files whose rows are published, once older than an age

Delete staged files that the ledger records as published and that are older than
--older-than; never the sink log, the checkpoint, orphans or files not yet published.
"""

from __future__ import annotations

import argparse
import json

from airflow_provider_fscommit.cli.arguments import duration_type
from airflow_provider_fscommit.core.config.quantities import (
    format_duration,
    format_size,
    parse_duration,
)
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.maintenance.retention import CleanupReport, clean_staging

EXAMPLES = """\
  fscommit clean-staging --spec specs/events.yaml --older-than '7 d' --dry-run
  fscommit clean-staging --spec specs/events.yaml --older-than '36 h'"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The age is required, so no run deletes recent files by default."""
    parser.add_argument(
        "--older-than",
        required=True,
        type=duration_type("--older-than"),
        metavar="AGE",
        help="e.g. 7d, 36 h",
    )
    parser.add_argument("--dry-run", action="store_true", help="list what would be deleted")


def run(spec: TableSpec, args: argparse.Namespace) -> int:
    report = clean_staging(spec, parse_duration(args.older_than, "--older-than"), args.dry_run)
    print(json.dumps(report.to_dict(), indent=2) if args.json else render_cleanup(report))
    return 0


def render_cleanup(report: CleanupReport) -> str:
    verb = "would delete" if report.dry_run else "deleted"
    lines = [f"{f['path']}  {format_size(f['size'])}" for f in report.files]
    total = sum(f["size"] for f in report.files)
    lines.append(
        f"{verb} {len(report.files)} published staged file(s), {format_size(total)}, older than "
        f"{format_duration(report.older_than)}"
    )
    return "\n".join(lines)
