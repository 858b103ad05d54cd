"""``fscommit quarantine``: give up unreadable staged files, keeping why in the ledger."""

from __future__ import annotations

import argparse
import json

from airflow_provider_fscommit.cli.arguments import Commands, add_json_flag, add_table_arguments
from airflow_provider_fscommit.core.config.quantities import format_size
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.ledger.quarantine import QuarantinedFile, quarantine

NAME = "quarantine"


def add_parser(commands: Commands) -> None:
    """``quarantine``: a reason is required, since the ledger keeps why rows were lost."""
    quarantine_files = commands.add_parser(
        NAME,
        help="give up unreadable staged files so the rest of their partition is published",
        description="Record in the ledger that the given staged files (as an error names "
        "them) are never to be published: their rows are lost, the other files of their "
        "partitions are published by the next compaction. For files that cannot be restored.",
    )
    add_table_arguments(quarantine_files)
    quarantine_files.add_argument("files", nargs="+", metavar="FILE", help="staged file URI")
    quarantine_files.add_argument(
        "--reason", required=True, help="why the rows are given up (kept in the ledger)"
    )
    add_json_flag(quarantine_files)


def run(spec: TableSpec, args: argparse.Namespace) -> int:
    files = quarantine(spec, args.files, args.reason)
    if args.json:
        print(json.dumps({"files": [f.to_dict() for f in files]}, indent=2))
    else:
        print(render_quarantine(files))
    return 0


def render_quarantine(files: list[QuarantinedFile]) -> str:
    lines = [
        f"{f.partition}  {f.uri}  {format_size(f.size)}"
        + ("" if f.new else "  (quarantined already)")
        for f in files
    ]
    lines.append(
        f"quarantined {sum(f.new for f in files)} staged file(s); the next compaction "
        "publishes the rest of their partitions"
    )
    return "\n".join(lines)
