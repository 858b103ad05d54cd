"""``fscommit``: look at and operate a Spark streaming table's partition commit.

A thin shell over :mod:`airflow_provider_fscommit.core`: it builds a :class:`TableSpec`
from flags (Flink option keys accepted through ``--option``), calls the core and prints
a readable table or, with ``--json``, one JSON object.

Exit codes: 0 done, 1 error (the message names the thing and the fix), 2 usage,
3 nothing committable yet (``compact``, ``commit`` and ``plan`` without partitions;
``status PARTITION`` while the partition waits).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from airflow_provider_fscommit.cli.commit import metastore_client_factory, run_commit
from airflow_provider_fscommit.cli.compact import NOTHING_COMMITTABLE, SparkOptions, run_compact
from airflow_provider_fscommit.console import messages_to_stderr
from airflow_provider_fscommit.core.commit.policy_factory import metastore_table_policy
from airflow_provider_fscommit.core.config import options as o
from airflow_provider_fscommit.core.config.quantities import (
    format_duration,
    format_size,
    iso_ms,
    parse_duration,
)
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.errors import FsCommitError
from airflow_provider_fscommit.core.maintenance.expiration import (
    ExpirationReport,
    expire_partitions,
)
from airflow_provider_fscommit.core.maintenance.quarantine import QuarantinedFile, quarantine
from airflow_provider_fscommit.core.maintenance.retention import CleanupReport, clean_staging
from airflow_provider_fscommit.core.status.partition_wait import PartitionCheck, check_partition
from airflow_provider_fscommit.core.status.table_report import (
    DEFAULT_STALL_TIMEOUT,
    TableReport,
    read_table_report,
)
from airflow_provider_fscommit.jobs.connect import REMOTE_ENV

# Flags that set a table option directly: (flag, option). Public: tests build flags from it.
TABLE_FLAGS: tuple[tuple[str, o.ConfigOption], ...] = (
    ("--staging", o.STAGING_PATH),
    ("--checkpoint", o.CHECKPOINT_PATH),
    ("--partition-keys", o.PARTITION_KEYS),
    ("--table", o.TABLE_PATH),
    ("--target-file-size", o.COMPACTION_FILE_SIZE),
    ("--trigger", o.SINK_PARTITION_COMMIT_TRIGGER),
    ("--delay", o.SINK_PARTITION_COMMIT_DELAY),
    ("--time-zone", o.SINK_PARTITION_COMMIT_WATERMARK_TIME_ZONE),
    ("--policy", o.SINK_PARTITION_COMMIT_POLICY_KIND),
    ("--database", o.METASTORE_DATABASE),
    ("--table-name", o.METASTORE_TABLE),
    ("--http-report-url", o.HTTP_REPORT_URL),
    ("--http-report-params", o.HTTP_REPORT_PARAMS),
    ("--http-report-timeout", o.HTTP_REPORT_TIMEOUT),
    ("--expiration-time", o.PARTITION_EXPIRATION_TIME),
    ("--expiration-strategy", o.PARTITION_EXPIRATION_STRATEGY),
    ("--timestamp-pattern", o.PARTITION_TIME_EXTRACTOR_TIMESTAMP_PATTERN),
    ("--timestamp-formatter", o.PARTITION_TIME_EXTRACTOR_TIMESTAMP_FORMATTER),
    ("--format", o.FORMAT),
    ("--csv-header", o.CSV_HEADER),
)


def build_parser() -> argparse.ArgumentParser:
    """The ``fscommit`` parser: one subcommand per operation, in the order help lists them."""
    parser = argparse.ArgumentParser(
        prog="fscommit",
        description="Flink-style partition commit for Spark Structured Streaming tables.",
        epilog="Exit codes: 0 done, 1 error, 2 usage, 3 nothing committable yet.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_status_command(commands)
    _add_compaction_commands(commands)
    _add_clean_staging_command(commands)
    _add_expire_command(commands)
    _add_quarantine_command(commands)
    return parser


_Commands = argparse._SubParsersAction  # what add_subparsers returns (argparse names it so)


def _add_status_command(commands: _Commands) -> None:
    """``status``: read-only, so it takes the table and how to judge a stall."""
    status = commands.add_parser(
        "status",
        help="watermark, partitions and their commit state, orphan files",
        description="Show the latest committed batch, the safe watermark, every partition "
        "with its committed files and state, and orphan files of failed batches.",
    )
    _add_table_arguments(status)
    status.add_argument(
        "partition",
        nargs="?",
        metavar="PARTITION",
        help="judge this one partition as the sensor does (e.g. dt=2026-11-20/hour=03): "
        "exit 0 when committable, 3 while it waits; reads the checkpoint, not the whole "
        "sink log, under partition-time",
    )
    status.add_argument(
        "--stall-timeout",
        default=format_duration(DEFAULT_STALL_TIMEOUT),
        metavar="DURATION",
        help="report the stream as stalled when its watermark has not moved for this long "
        f"(default: {format_duration(DEFAULT_STALL_TIMEOUT)})",
    )
    _add_json_flag(status)


def _add_compaction_commands(commands: _Commands) -> None:
    """``compact``, ``commit`` and ``plan``: one compaction, so the same Spark flags.

    ``commit`` then runs the policies, which is what ``--metastore-uri`` is for.
    """
    compact = commands.add_parser(
        "compact",
        help="compact and publish committable partitions (spark-submit or Spark Connect)",
        description="Compact the committed files of committable partitions into the "
        "published table, exactly once (default: every committable partition).",
    )
    commit = commands.add_parser(
        "commit",
        help="compact, then run the commit policies (metastore, success file, custom)",
        description="Compact committable partitions like 'compact', then make them visible "
        "with the policies of --policy, in that order.",
    )
    plan = commands.add_parser(
        "plan",
        help="show what compact would do (compact --dry-run)",
        description="Show the compaction plan of committable partitions; change nothing.",
    )
    for command in (compact, commit, plan):
        _add_table_arguments(command)
        command.add_argument(
            "partitions", nargs="*", metavar="PARTITION", help="e.g. dt=2026-11-20/hour=03"
        )
        _add_spark_arguments(command)
        command.add_argument("--dry-run", action="store_true", help="print the plan only")
        _add_json_flag(command)
    _add_metastore_uri(commit)


def _add_spark_arguments(parser: argparse.ArgumentParser) -> None:
    """Where the compaction units run (spark-submit or Spark Connect) and how they write."""
    parser.add_argument("--spark-master", default="local[*]", help="default: local[*]")
    parser.add_argument(
        "--spark-home",
        metavar="DIR",
        help="the Spark installation the cluster runs, e.g. /opt/spark-3.5.9 (default: "
        "$SPARK_HOME, else the pyspark installed here when it has Spark's jars); name the "
        "cluster's Python with --conf spark.pyspark.python=...",
    )
    parser.add_argument(
        "--spark-submit",
        help="spark-submit to use (default: the Spark home's, else PATH's)",
    )
    parser.add_argument(
        "--spark-remote",
        default=os.environ.get(REMOTE_ENV) or None,
        metavar="URL",
        help="run the compaction units on this running Spark Connect server "
        f"(sc://host:port; default: ${REMOTE_ENV}) instead of a spark-submit per run",
    )
    parser.add_argument(
        "--conf", action="append", default=[], metavar="KEY=VALUE", help="Spark conf"
    )
    parser.add_argument(
        "--codec",
        default="snappy",
        help="Parquet outputs' codec (default: snappy); ORC keeps its inputs' compression, "
        "JSON/CSV/text their codec",
    )


def _add_clean_staging_command(commands: _Commands) -> None:
    """``clean-staging``: the age is required, so no run deletes recent files by default."""
    clean = commands.add_parser(
        "clean-staging",
        help="delete staged files whose rows are published, once older than an age",
        description="Delete staged files that the ledger records as published and that are "
        "older than --older-than; never the sink log, the checkpoint, orphans or files not "
        "yet published.",
    )
    _add_table_arguments(clean)
    clean.add_argument("--older-than", required=True, metavar="AGE", help="e.g. 7d, 36 h")
    clean.add_argument("--dry-run", action="store_true", help="list what would be deleted")
    _add_json_flag(clean)


def _add_expire_command(commands: _Commands) -> None:
    """``expire``: lists by default, since expiring drops partitions and deletes files."""
    expire = commands.add_parser(
        "expire",
        help="drop published partitions older than --expiration-time (dry run by default)",
        description="List the published partitions past partition.expiration-time; with "
        "--apply, drop them from the metastore, delete their published files and record "
        "them as expired (late data for them is never published again). Staged files are "
        "never touched.",
    )
    _add_table_arguments(expire)
    expire.add_argument("--apply", action="store_true", help="expire them (default: list)")
    expire.add_argument(
        "--force",
        action="store_true",
        help="check even if partition.expiration-check-interval has not passed",
    )
    _add_metastore_uri(expire)
    _add_json_flag(expire)


def _add_quarantine_command(commands: _Commands) -> None:
    """``quarantine``: a reason is required, since the ledger keeps why rows were lost."""
    quarantine_files = commands.add_parser(
        "quarantine",
        help="give up unreadable staged files so the rest of their partition is published",
        description="Record in the ledger that the given staged files (as an error names "
        "them) are never to be published: their rows are lost, the other files of their "
        "partitions are published by the next compaction. For files that cannot be restored.",
    )
    _add_table_arguments(quarantine_files)
    quarantine_files.add_argument("files", nargs="+", metavar="FILE", help="staged file URI")
    quarantine_files.add_argument(
        "--reason", required=True, help="why the rows are given up (kept in the ledger)"
    )
    _add_json_flag(quarantine_files)


def _add_metastore_uri(parser: argparse.ArgumentParser) -> None:
    """The metastore of the commands that change it (``commit``, ``expire``)."""
    parser.add_argument(
        "--metastore-uri", metavar="THRIFT_URI", help="e.g. thrift://127.0.0.1:9083"
    )


def _add_json_flag(parser: argparse.ArgumentParser) -> None:
    """Every command prints one JSON object on request, for scripts."""
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def _add_table_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("table")
    for flag, option in TABLE_FLAGS:
        default = option.default if option.default not in (None, ()) else None
        shown = format_duration(default) if isinstance(default, timedelta) else default
        group.add_argument(
            flag,
            dest=option.name,
            metavar=flag[2:].upper().replace("-", "_"),
            help=option.description + (f" (default: {shown})" if shown is not None else ""),
        )
    group.add_argument(
        "--spec",
        metavar="FILE",
        help="a table spec file (YAML or JSON options, as the DAGs read); flags override it",
    )
    group.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="any table option by its Flink key or Python name, e.g. "
        "'sink.partition-commit.delay=1 h' (repeatable)",
    )


def spec_from_args(args: argparse.Namespace) -> TableSpec:
    """The table spec of ``--spec``, overridden by ``--option`` pairs, then by flags."""
    values: dict[str, Any] = TableSpec.options_from_file(args.spec) if args.spec else {}
    overrides = _pairs(args.option, "--option")
    for _, option in TABLE_FLAGS:
        value = getattr(args, option.name)
        if value is not None:
            overrides[option.name] = value
    for name, value in overrides.items():
        option = o.lookup(name)
        # An option given under another name (Flink key vs Python name) is replaced.
        values = {k: v for k, v in values.items() if o.lookup(k) is not option}
        values[name] = value
    return TableSpec.from_options(values)


def missing_table_flags(args: argparse.Namespace) -> list[str]:
    """Required table flags absent with no ``--spec`` to supply them (a usage error)."""
    if args.spec:
        return []
    given = {o.lookup(k).name for k in _pairs(args.option, "--option")}
    return [
        flag
        for flag, option in TABLE_FLAGS
        if option.required and getattr(args, option.name) is None and option.name not in given
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        missing = missing_table_flags(args)
    except FsCommitError as exc:
        parser.error(str(exc))
    if missing:
        parser.error(f"the following arguments are required: {', '.join(missing)} (or --spec)")
    try:
        with messages_to_stderr():
            return _run(args)
    except BrokenPipeError:
        # Output piped into `head` and cut: not an error. Silence the flush at exit too.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _run(args: argparse.Namespace) -> int:
    try:
        spec = spec_from_args(args)
        if args.command in ("compact", "commit", "plan"):
            spark = SparkOptions(
                master=args.spark_master,
                spark_submit=args.spark_submit,
                spark_home=args.spark_home,
                conf=_pairs(args.conf, "--conf"),
                codec=args.codec,
                remote=args.spark_remote,
            )
            partitions = args.partitions or None
            if args.command == "commit":
                return run_commit(
                    spec,
                    partitions,
                    metastore_uri=args.metastore_uri,
                    spark=spark,
                    dry_run=args.dry_run,
                    as_json=args.json,
                )
            dry_run = args.dry_run or args.command == "plan"
            return run_compact(spec, partitions, spark, dry_run=dry_run, as_json=args.json)
        if args.command == "clean-staging":
            report = clean_staging(
                spec, parse_duration(args.older_than, "--older-than"), args.dry_run
            )
            print(json.dumps(report.to_dict(), indent=2) if args.json else render_cleanup(report))
            return 0
        if args.command == "expire":
            metastore = metastore_table_policy(spec, metastore_client_factory(args.metastore_uri))
            # Airflow's hooks log to stdout; keep stdout for the report (and for --json).
            with contextlib.redirect_stdout(sys.stderr):
                expired = expire_partitions(
                    spec, dry_run=not args.apply, metastore=metastore, force=args.force
                )
            print(json.dumps(expired.to_dict(), indent=2) if args.json else render_expiry(expired))
            return 1 if expired.errors else 0
        if args.command == "quarantine":
            files = quarantine(spec, args.files, args.reason)
            if args.json:
                print(json.dumps({"files": [f.to_dict() for f in files]}, indent=2))
            else:
                print(render_quarantine(files))
            return 0
        stall_timeout = parse_duration(args.stall_timeout, "--stall-timeout")
        if args.partition:
            check = check_partition(spec, args.partition, stall_timeout)
            print(json.dumps(check.to_dict(), indent=2) if args.json else render_check(check))
            return 0 if check.committable else NOTHING_COMMITTABLE
        report = read_table_report(spec, stall_timeout)
    except FsCommitError as exc:
        print(f"fscommit: error: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        print(render_status(report))
    return 0


def _pairs(items: list[str], flag: str) -> dict[str, str]:
    pairs = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise FsCommitError(f"{flag} {item!r} is not KEY=VALUE")
        pairs[key.strip()] = value.strip()
    return pairs


def render_check(check: PartitionCheck) -> str:
    """One partition's verdict, labelled like the table status's header."""
    verdict = "committable" if check.committable else "stalled" if check.stalled else "waiting"
    batch = "no batch committed yet" if check.batch_id is None else str(check.batch_id)
    return "\n".join(
        [
            f"Partition  {check.partition}",
            f"Verdict    {verdict}",
            f"Commit at  {iso_ms(check.commit_time_ms) or '-'}",
            f"Watermark  {iso_ms(check.watermark_ms) or '-'}",
            f"Batch      {batch}",
            f"Why        {check.reason}",
        ]
    )


def render_status(report: TableReport) -> str:
    """The report as a readable table: the same states as the status page."""
    return "\n".join([*_status_header(report), "", *_partition_table(report), *_file_lists(report)])


def _status_header(report: TableReport) -> list[str]:
    """The table-wide facts, one labelled line each: where the stream is and how it commits."""
    status = report.status
    spec, cp = status.spec, status.checkpoint
    lines = [
        f"Table      {spec.staging_path}" + (f" -> {spec.table_path}" if spec.table_path else ""),
        f"Checkpoint {spec.checkpoint_path}",
    ]
    if cp.latest_committed_batch is None:
        lines.append("Batch      no batch committed yet")
    else:
        age = (status.now_ms - (cp.last_commit_time_ms or status.now_ms)) / 1000
        lines.append(
            f"Batch      {cp.latest_committed_batch} committed {_age(age)} ago "
            f"(sink log at batch {status.sink_latest_batch})"
        )
    lag = report.watermark_lag_ms
    safe = "not advanced yet" if status.watermark_pending else iso_ms(cp.watermark_ms) or "-"
    lines.append(
        f"Watermark  {safe} (safe"
        + (f", {_age(lag / 1000)} behind the clock" if lag is not None else "")
        + f"; next batch runs with {iso_ms(cp.next_batch_watermark_ms) or '-'})"
    )
    if report.stalled:
        lines.append(
            f"Stalled    no progress since {iso_ms(report.progress_since_ms)} (more than "
            f"{format_duration(report.stall_timeout)}): is the query running and fed?"
        )
    lines.append(f"Trigger    {spec.trigger_summary}")
    if spec.expiration_summary:
        lines.append(f"Expiration {spec.expiration_summary}")
    file_format, format_error = status.file_format
    lines.append(f"Format     {format_error or file_format or 'unknown (nothing staged yet)'}")
    if report.ledger_error:
        lines.append(f"Ledger     {report.ledger_error}")
    return lines


_PARTITION_COLUMNS = (
    "PARTITION",
    "STATE",
    "STAGED",
    "PUBLISHED",
    "ROWS",
    "COMMIT TIME (UTC)",
    "LAST COMMIT",
    "COMMITTED BY",
)
_RIGHT_ALIGNED = {2, 3, 4}  # the sizes and counts


def _partition_table(report: TableReport) -> list[str]:
    """One aligned row per partition, then the count of each state."""
    rows = [_PARTITION_COLUMNS]
    for p in report.partitions:
        rows.append(
            (
                p.partition,
                p.state.value,
                f"{p.staged_files} / {format_size(p.staged_bytes)}",
                f"{p.published_files} / {format_size(p.published_bytes)}"
                if p.published_files
                else "-",
                str(p.published_rows) if p.published_files else "-",
                p.error or iso_ms(p.commit_time_ms) or "",
                "" if p.error else (iso_ms(p.last_commit_ms) or ""),
                f"{p.last_origin.dag_id} {p.last_origin.run_id}" if p.last_origin else "",
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(_PARTITION_COLUMNS))]
    lines = [
        "  ".join(
            f"{cell:>{widths[i]}}" if i in _RIGHT_ALIGNED else f"{cell:<{widths[i]}}"
            for i, cell in enumerate(row)
        ).rstrip()
        for row in rows
    ]
    counts = ", ".join(f"{n} {state}" for state, n in report.counts().items())
    lines.append(f"{len(report.partitions)} partition(s): {counts or 'none'}")
    return lines


def _file_lists(report: TableReport) -> list[str]:
    """The staged files that need a look (orphans, missing, in flight), each list titled."""
    status = report.status
    lines = []
    for title, paths in (
        ("Orphan files (not in the sink log; never published)", status.orphan_files),
        ("Missing files (in the sink log but not on disk)", status.missing_files),
        (
            "Files of a batch not committed yet (running, or failed and not redone)",
            status.in_flight_files,
        ),
    ):
        if paths:
            lines.append(f"{title}: {len(paths)}")
            lines.extend(f"  {path}" for path in paths)
    return lines


def render_cleanup(report: CleanupReport) -> str:
    verb = "would delete" if report.dry_run else "deleted"
    lines = [f"{f['path']}  {format_size(f['size'])}" for f in report.files]
    total = sum(f["size"] for f in report.files)
    lines.append(
        f"{verb} {len(report.files)} published staged file(s), {format_size(total)}, older than "
        f"{format_duration(report.older_than)}"
    )
    return "\n".join(lines)


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


def _age(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.1f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


if __name__ == "__main__":
    sys.exit(main())
