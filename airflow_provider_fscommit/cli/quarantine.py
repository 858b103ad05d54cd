"""give up unreadable staged files so the rest of their partition is published

Record in the ledger that the given staged files (as an error names them) are never to
be published: their rows are lost, the other files of their partitions are published by
the next compaction. For files that cannot be restored.
"""

from __future__ import annotations

import argparse
import json

from airflow_provider_fscommit.core.config.quantities import format_size
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.maintenance.quarantine import QuarantinedFile, quarantine

EXAMPLES = """\
  fscommit quarantine --spec specs/events.yaml --reason 'disk lost' \\
      s3a://lake/events/staging/dt=2026-11-20/hour=03/part-00000-….parquet"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """A reason is required, since the ledger keeps why rows were lost."""
    parser.add_argument("files", nargs="+", metavar="FILE", help="staged file URI")
    parser.add_argument(
        "--reason", required=True, help="why the rows are given up (kept in the ledger)"
    )


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
