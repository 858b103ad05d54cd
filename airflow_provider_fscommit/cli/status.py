"""watermark, completeness, partitions and their commit state, orphan files

Show the latest committed batch, the safe watermark, the partition time the table is
complete through (as published by the last commit run, and as the state gives it now),
the partitions with something left to do or to look at, with their committed files and
state (the settled ones are counted; --all and --json list them too), and orphan files of
failed batches.
Without --partition-keys, the keys and the time pattern are read off the staged
directories (as init does) and the header says so; anything given explicitly wins.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from datetime import timedelta

from airflow_provider_fscommit.cli.arguments import duration_type
from airflow_provider_fscommit.cli.exit_codes import ExitCode
from airflow_provider_fscommit.core.commit.iceberg_policy import snapshot_of
from airflow_provider_fscommit.core.config.quantities import (
    format_duration,
    format_size,
    iso_ms,
    parse_duration,
)
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.status.completeness import (
    TableCompleteness,
    read_completeness,
)
from airflow_provider_fscommit.core.status.partition_wait import PartitionCheck, check_partition
from airflow_provider_fscommit.core.status.spec_inference import never_staged
from airflow_provider_fscommit.core.status.table_overview import TableEntry, read_tables
from airflow_provider_fscommit.core.status.table_report import (
    DEFAULT_STALL_TIMEOUT,
    OrphanSearch,
    PartitionReport,
    TableReport,
    read_table_report,
)

EXAMPLES = """\
  fscommit status --spec specs/events.yaml       # exit 4: stalled, errors, orphans, policies
  fscommit status --specs 'specs/*.yaml' --json  # every table, for monitoring"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Read-only, so the table and how to judge a stall."""
    parser.add_argument(
        "partition",
        nargs="?",
        metavar="PARTITION",
        help="judge this one partition as the sensor does (e.g. dt=2026-11-20/hour=03): "
        "exit 0 when committable, 3 while it waits, 4 when the stream is stalled, 5 when "
        "the stream never staged it",
    )
    parser.add_argument(
        "--specs",
        nargs="+",
        metavar="PATTERN",
        help="every table at a glance: one line per table spec file these name (globs "
        "allowed, e.g. 'specs/*.yaml'); exit 1 when a spec cannot be read, 4 when any "
        "table needs attention; no other table flag is needed",
    )
    parser.add_argument(
        "--all",
        action="store_true",
        help="list every partition, the settled ones too: committed (or expired) with "
        "nothing staged since and nothing left for a run to do (default: they are counted, "
        "so a year-old table shows what changed, at the cost of a day-old one; --json "
        "always lists every partition)",
    )
    parser.add_argument(
        "--orphans",
        action="store_true",
        help="look for orphan files in the whole staging directory, committed partitions "
        "included (default: only in the partitions not committed yet, which costs the same "
        "on a year-old table; the whole directory costs a request per 1,000 files on S3)",
    )
    parser.add_argument(
        "--stall-timeout",
        default=format_duration(DEFAULT_STALL_TIMEOUT),
        type=duration_type("--stall-timeout"),
        metavar="DURATION",
        help="report the stream as stalled when its watermark has not moved for this long "
        f"(default: {format_duration(DEFAULT_STALL_TIMEOUT)})",
    )


def run(spec: TableSpec, args: argparse.Namespace) -> int:
    stall_timeout = parse_duration(args.stall_timeout, "--stall-timeout")
    if args.partition:
        return run_check(spec, args.partition, stall_timeout, as_json=args.json)
    orphans = OrphanSearch.ALL if args.orphans else OrphanSearch.UNCOMMITTED
    # A script reading the JSON looks partitions up: it lists every one, as it always did.
    listed = args.all or args.json
    report = read_table_report(spec, stall_timeout, orphans=orphans, list_settled=listed)
    inferred = args.inference.summary if args.inference else None
    completeness = read_completeness(report)
    if args.json:
        document = report.to_dict() | {"completeness": completeness.to_dict()}
        if args.inference:
            document["inferred"] = args.inference.to_dict()
        print(json.dumps(document, indent=2))
    else:
        print(render_status(report, completeness, inferred))
    return ExitCode.ATTENTION if report.attention else ExitCode.OK


def run_check(spec: TableSpec, partition: str, stall_timeout: timedelta, *, as_json: bool) -> int:
    """One partition as the sensor judges it; committable only if the stream staged it
    (a partition past its commit time that the sink log never listed is "not staged")."""
    check = check_partition(spec, partition, stall_timeout)
    unstaged = never_staged(spec.staging_path, partition) if check.committable else None
    if unstaged:
        check = dataclasses.replace(check, committable=False, reason=unstaged)
    document = check.to_dict() | {"staged": unstaged is None}
    print(json.dumps(document, indent=2) if as_json else render_check(check, unstaged is None))
    if check.committable:
        return ExitCode.OK
    if check.stalled:
        return ExitCode.ATTENTION
    return ExitCode.NOT_STAGED if unstaged else ExitCode.NOTHING_COMMITTABLE


def render_check(check: PartitionCheck, staged: bool = True) -> str:
    """One partition's verdict, labelled like the table status's header."""
    verdict = (
        "committable"
        if check.committable
        else "stalled"
        if check.stalled
        else "waiting"
        if staged
        else "not staged"
    )
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


def render_status(
    report: TableReport, completeness: TableCompleteness, inferred: str | None = None
) -> str:
    """The report as a readable table: the same states as the status page; ``inferred``
    says what of the table was read off the stream rather than given."""
    return "\n".join(
        [
            *_status_header(report, completeness, inferred),
            "",
            *_partition_table(report),
            *_file_lists(report),
        ]
    )


def _status_header(
    report: TableReport, completeness: TableCompleteness, inferred: str | None = None
) -> list[str]:
    """The table-wide facts, one labelled line each: where the stream is and how it commits."""
    status = report.status
    spec, cp = status.spec, status.checkpoint
    lines = [
        f"Table      {spec.staging_path}" + (f" -> {spec.table_path}" if spec.table_path else ""),
        f"Checkpoint {spec.checkpoint_path}",
    ]
    if inferred:
        lines.append(f"Inferred   {inferred}")
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
    lines.extend(_completeness(completeness))
    if report.stalled:
        lines.append(
            f"Stalled    no progress since {iso_ms(report.progress_since_ms)} (more than "
            f"{format_duration(report.stall_timeout)}): is the query running and fed?"
        )
    lines.extend(f"Attention  {reason}" for reason in report.attention)
    lines.append(f"Trigger    {spec.trigger_summary}")
    if spec.expiration_summary:
        lines.append(f"Expiration {spec.expiration_summary}")
    file_format, format_error = status.file_format
    lines.append(f"Format     {format_error or file_format or 'unknown (nothing staged yet)'}")
    if report.ledger_error:
        lines.append(f"Ledger     {report.ledger_error}")
    return lines


def _completeness(completeness: TableCompleteness) -> list[str]:
    """What the last commit run published, and what the state gives now where it differs
    (the current watermark has its own line)."""
    published, current = completeness.published, completeness.current
    if published is None:
        unpublished = (
            completeness.published_error or "nothing published yet (a commit run publishes it)"
        )
        lines = [f"Complete   {unpublished}"]
    else:
        lines = [
            f"Complete   through {iso_ms(published.complete_through_ms) or '-'} (published "
            f"{iso_ms(published.committed_at_ms) or '-'}; watermark "
            f"{iso_ms(published.watermark_ms) or '-'})"
        ]
    if published is None or current.complete_through_ms != published.complete_through_ms:
        lines.append(f"Now        through {iso_ms(current.complete_through_ms) or '-'}")
    if current.reason:
        lines.append(f"Why        {current.reason}")
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


def _snapshot(partition: PartitionReport) -> str:
    """Where an Iceberg table holds the partition's latest commit."""
    snapshot = snapshot_of(partition.receipts)
    return "" if snapshot is None else f" (snapshot {snapshot})"


def _partition_table(report: TableReport) -> list[str]:
    """One aligned row per listed partition, then the count of each state (the settled
    partitions' too)."""
    rows = [_PARTITION_COLUMNS]
    for p in report.partitions:
        rows.append(
            (
                p.partition,
                p.state.value,
                f"{p.staged_files} / {format_size(p.staged_bytes)}",
                f"{p.published_files} / {format_size(p.published_bytes)}"
                + (f" (fragmented: {p.one_compaction_files})" if p.fragmented else "")
                if p.published_files
                else "-",
                str(p.published_rows) if p.published_files else "-",
                p.error or iso_ms(p.commit_time_ms) or "",
                "" if p.error else (iso_ms(p.last_commit_ms) or "") + _snapshot(p),
                f"{p.last_origin.dag_id} {p.last_origin.run_id}" if p.last_origin else "",
            )
        )
    lines = _aligned(rows, _RIGHT_ALIGNED) if report.partitions else []
    counts = ", ".join(f"{n} {state}" for state, n in report.counts().items())
    lines.append(f"{report.partition_count} partition(s): {counts or 'none'}")
    if report.settled.states:
        lines.append(
            f"{len(report.settled.states)} of them settled, not listed: nothing staged or "
            "left to do since their commit or expiry (--all lists them)"
        )
    fragmented = sum(p.fragmented for p in report.partitions)  # never settled
    if fragmented:
        lines.append(
            f"{fragmented} fragmented: late data left them files of several compactions, more "
            "than one compaction of their rows makes (in brackets) or not sorted across; "
            f"{report.fragmented_outlook}."
        )
    return lines


def _aligned(rows: list[tuple[str, ...]], right: set[int]) -> list[str]:
    """Rows as text columns, each as wide as its widest cell; ``right`` aligned right."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return [
        "  ".join(
            f"{cell:>{widths[i]}}" if i in right else f"{cell:<{widths[i]}}"
            for i, cell in enumerate(row)
        ).rstrip()
        for row in rows
    ]


_OVERVIEW_COLUMNS = (
    "TABLE",
    "WATERMARK (UTC)",
    "LAG",
    "PENDING",
    "COMMITTABLE",
    "COMMITTED",
    "ERRORS",
    "OLDEST NOT COMMITTED",
    "COMPLETE THROUGH (UTC)",
    "STREAM",
)


def run_overview(args: argparse.Namespace) -> int:
    """``--specs``: one line per table; exit 1 when a spec cannot be read, else 4 when
    any table needs attention (stalled, partitions in error...: for a monitoring
    script), else 0."""
    stall_timeout = parse_duration(args.stall_timeout, "--stall-timeout")
    entries = read_tables(args.specs, stall_timeout, list_settled=False)
    if args.json:
        print(json.dumps({"tables": [e.to_dict() for e in entries]}, indent=2))
    else:
        print("\n".join(render_overview(entries)))
    if any(e.report is None for e in entries):
        return ExitCode.ERROR
    if any(e.report is not None and e.report.attention for e in entries):
        return ExitCode.ATTENTION
    return ExitCode.OK


def render_overview(entries: list[TableEntry]) -> list[str]:
    """Every table at a glance, then each unreadable table's error in full and what each
    table needs attention for."""
    rows = [_OVERVIEW_COLUMNS]
    for entry in entries:
        line = entry.to_dict()
        if entry.report is None:
            rows.append((entry.name, "-", "-", "-", "-", "-", "1", "-", "-", "unreadable"))
            continue
        lag = entry.report.watermark_lag_ms
        rows.append(
            (
                entry.name,
                iso_ms(line["watermark_ms"]) or "-",
                "-" if lag is None else _age(lag / 1000),
                *(str(line[key]) for key in ("pending", "committable", "committed", "errors")),
                line["oldest_uncommitted"] or "-",
                line["complete_through"] or "-",
                "stalled" if entry.report.stalled else "moving",
            )
        )
    problems = [f"{e.name} ({e.spec_file}): {e.error}" for e in entries if e.error]
    problems += [
        f"{e.name}: attention: {reason}"
        for e in entries
        if e.report
        for reason in e.report.attention
    ]
    return _aligned(rows, {3, 4, 5, 6}) + [""] * bool(problems) + problems


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


def _age(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.1f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"
