"""compact and publish committable partitions (spark-submit or Spark Connect)

Compact the committed files of committable partitions into the published table, exactly
once (default: every committable partition).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import Any

from airflow_provider_fscommit.cli.compaction import (
    SparkOptions,
    add_spark_arguments,
    nothing_committable,
    render_summary,
    run_compaction,
)
from airflow_provider_fscommit.cli.exit_codes import ExitCode
from airflow_provider_fscommit.core.compaction.summary import unchanged_text
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.errors import FsCommitError
from airflow_provider_fscommit.core.publish.publisher import CompactionPublisher

EXAMPLES = """\
  fscommit compact --spec specs/events.yaml                            # every committable partition
  fscommit compact --spec specs/events.yaml dt=2026-11-20/hour=03 --spark-remote sc://spark:15002"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """What ``compact``, ``plan`` and ``commit`` share: one compaction, the same flags."""
    parser.add_argument(
        "partitions", nargs="*", metavar="PARTITION", help="e.g. dt=2026-11-20/hour=03"
    )
    add_spark_arguments(parser)
    parser.add_argument("--dry-run", action="store_true", help="print the plan only")


def run(spec: TableSpec, args: argparse.Namespace) -> int:
    spark = SparkOptions.from_args(args)
    partitions = args.partitions or None
    return run_compact(spec, partitions, spark, dry_run=args.dry_run, as_json=args.json)


def run_compact(
    spec: TableSpec,
    partitions: Sequence[str] | None,
    spark: SparkOptions,
    *,
    dry_run: bool,
    as_json: bool,
) -> int:
    """Plan (dry run) or run the compaction; prints progress, then a summary."""
    if dry_run:
        preview = CompactionPublisher(spec, spark.codec).preview(partitions)
        document = preview.to_dict()
        print(json.dumps(document, indent=2) if as_json else render_plans(document))
        nothing = nothing_committable(partitions, preview.selected)
        return ExitCode.NOTHING_COMMITTABLE if nothing else 0
    summary = run_compaction(spec, partitions, spark, show_progress=not as_json)
    if summary.error is not None:
        raise FsCommitError(summary.error)
    print(json.dumps(summary.to_dict(), indent=2) if as_json else render_summary(summary))
    if nothing_committable(partitions, summary.selected):
        return ExitCode.NOTHING_COMMITTABLE
    return ExitCode.ERROR if summary.failed else ExitCode.OK


def render_plans(document: dict[str, Any]) -> str:
    lines = []
    for plan in document["plans"]:
        inputs = sum(len(u["inputs"]) for u in plan["units"])
        size = sum(f["size"] for u in plan["units"] for f in u["inputs"])
        again = (
            f" in {plan['directory']}/, compacted again: {len(plan['replaces'])} of the "
            "inputs are its published files, replaced once the catalog reads the new ones"
            if plan.get("replaces")
            else ""
        )
        lines.append(
            f"{plan['partition']}: {inputs} file(s), {size} bytes -> {len(plan['units'])} "
            f"output file(s){again}"
        )
    lines += [f"{p}: up to date" for p in document["up_to_date"]]
    if document["unchanged"]:
        lines.append(unchanged_text(document["unchanged"]))
    return "\n".join(lines) or "nothing committable to compact"
