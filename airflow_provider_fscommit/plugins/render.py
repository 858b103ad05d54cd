"""The commit-status page as server-rendered HTML: one card per table, no JavaScript build.

Everything that comes from a spec file, a path, a partition value or an error message is
user-controlled and goes through :func:`html.escape` (partition values may hold ``<``,
quotes and ``&``: Spark escapes only what a path cannot hold). Kept apart from the FastAPI
app and free of Airflow imports so it can be rendered and checked on its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timezone
from html import escape
from urllib.parse import quote

from airflow_provider_fscommit.core.commit.iceberg_policy import snapshot_of
from airflow_provider_fscommit.core.config.quantities import format_duration, format_size
from airflow_provider_fscommit.core.status.committable import PartitionState
from airflow_provider_fscommit.core.status.completeness import TableCompleteness
from airflow_provider_fscommit.core.status.table_overview import TableEntry
from airflow_provider_fscommit.core.status.table_report import (
    CommitOrigin,
    PartitionReport,
    TableReport,
)

# Partitions shown in the chart: the latest ones with something published.
CHART_PARTITIONS = 24

_STATE_COLOURS = {
    PartitionState.PENDING: "#8a8f98",
    PartitionState.COMMITTABLE: "#1f6feb",
    PartitionState.COMMITTED: "#1a7f37",
    PartitionState.LATE_DATA: "#bf8700",
    PartitionState.RECOMMITTED: "#0a7d74",
    PartitionState.EXPIRED: "#6e7781",
    PartitionState.ERROR: "#cf222e",
}

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 1rem 1.5rem; color: #1f2328; }
h1 { font-size: 1.4rem; margin: 0 0 .25rem; }
.meta { color: #59636e; font-size: .85rem; margin-bottom: 1rem; }
.card { border: 1px solid #d1d9e0; border-radius: 8px; padding: 1rem; margin-bottom: 1.25rem; }
.card h2 { font-size: 1.15rem; margin: 0 0 .5rem; }
.paths { color: #59636e; font-size: .8rem; word-break: break-all; }
.facts { display: flex; flex-wrap: wrap; gap: .5rem 2rem; margin: .75rem 0; }
.fact b { display: block; font-size: .75rem; color: #59636e; font-weight: 500; }
.state { display: inline-block; padding: 0 .45rem; border-radius: 1rem; color: #fff;
         font-size: .8rem; white-space: nowrap; }
.stalled { background: #cf222e; } .moving { background: #1a7f37; }
.error { background: #ffebe9; border: 1px solid #cf222e; border-radius: 6px; padding: .6rem;
         white-space: pre-wrap; word-break: break-word; }
table { border-collapse: collapse; width: 100%; font-size: .85rem; }
th, td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid #eef1f4; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
td.p { font-family: ui-monospace, monospace; white-space: nowrap; }
td.t { white-space: nowrap; }
td.t .snapshot { color: #555; font-size: 0.85em; }
svg text { font-family: system-ui, sans-serif; font-size: 11px; fill: #1f2328; }
"""

# Inside the Airflow UI the page is an iframe that may not navigate the top window; a DAG
# run link instead moves the UI's own router (same origin), else it opens in the frame.
_SCRIPT = """
document.addEventListener("click", function (event) {
  var link = event.target.closest("a[data-airflow-route]");
  if (!link || window.parent === window) return;
  try {
    window.parent.history.pushState(null, "", link.href);
    window.parent.dispatchEvent(new PopStateEvent("popstate"));
    event.preventDefault();
  } catch (error) {}
});
"""


def render_page(cards: Sequence[TableEntry], now_ms: int, config_hint: str) -> str:
    """The whole page: the overview, one line per table, then each table's card;
    ``config_hint`` says how to configure tables when there are none."""
    body = (
        _overview(cards) + "".join(_card(card) for card in cards)
        if cards
        else f'<div class="card"><p>No tables configured. {escape(config_hint)}</p></div>'
    )
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta http-equiv="refresh" content="60">'
        "<title>Partition commit status</title>"
        f"<style>{_STYLE}</style></head><body>"
        "<h1>Partition commit status</h1>"
        f'<div class="meta">As of {_time(now_ms)} (refreshes every minute) · '
        '<a href="api/tables">JSON</a></div>'
        f"{body}<script>{_SCRIPT}</script></body></html>"
    )


def run_link(origin: CommitOrigin) -> str:
    """The Airflow UI's page of a DAG run, relative to this page (``/<prefix>/``)."""
    return f"../dags/{quote(origin.dag_id, safe='')}/runs/{quote(origin.run_id, safe='')}"


_COUNTS = ("pending", "committable", "committed", "errors")
_OVERVIEW_COLUMNS = (
    "table",
    "watermark",
    "lag",
    "pending",
    "committable",
    "committed",
    "errors",
    "oldest not committed",
    "complete through",
    "stream",
)


def _overview(cards: Sequence[TableEntry]) -> str:
    """Every table at a glance (what ``fscommit status --specs`` prints), each row
    linking to the table's card below."""
    head = "".join(
        f'<th class="n">{c}</th>' if c in _COUNTS else f"<th>{c}</th>" for c in _OVERVIEW_COLUMNS
    )
    rows = []
    for card in cards:
        line = card.to_dict()
        link = f'<a href="#table-{quote(card.name, safe="")}">{escape(card.name)}</a>'
        if card.report is None:
            problem = escape(card.error or "unknown error")
            rows.append(
                f'<tr class="overview-row"><td class="p">{link}</td>'
                f'<td colspan="9"><span class="state" style="background:#cf222e">error</span> '
                f"{problem}</td></tr>"
            )
            continue
        stream = (
            '<span class="state stalled">stalled</span>'
            if card.report.stalled
            else '<span class="state moving">moving</span>'
        )
        counts = "".join(f'<td class="n">{line[c]}</td>' for c in _COUNTS)
        rows.append(
            f'<tr class="overview-row"><td class="p">{link}</td>'
            f'<td class="t">{_time(line["watermark_ms"])}</td>'
            f'<td class="t">{_duration(card.report.watermark_lag_ms)}</td>{counts}'
            f'<td class="p">{escape(line["oldest_uncommitted"] or "-")}</td>'
            f'<td class="t">{_time(line["complete_through_ms"])}</td>'
            f"<td>{stream}</td></tr>"
        )
    return (
        '<section class="card overview"><h2>Tables</h2><table>'
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></section>"
    )


def _card(card: TableEntry) -> str:
    title = f'<h2 id="table-{escape(card.name)}">{escape(card.name)}</h2>'
    source = f'<div class="paths">spec {escape(card.spec_file)}</div>'
    if card.report is None:
        message = escape(card.error or "unknown error")
        error = f'<div class="error">{message}</div>'
        return f'<section class="card table-card">{title}{source}{error}</section>'
    report = card.report
    spec = report.spec
    paths = (
        f'<div class="paths">staging {escape(spec.staging_path)} · checkpoint '
        f"{escape(spec.checkpoint_path)}"
        + (f" · table {escape(spec.table_path)}" if spec.table_path else "")
        + "</div>"
    )
    ledger_error = (
        f'<div class="error">{escape(report.ledger_error)}</div>' if report.ledger_error else ""
    )
    return (
        f'<section class="card table-card">{title}{source}{paths}'
        f"{_facts(report, card.completeness)}"
        f"{ledger_error}{_chart(report.partitions)}{_partitions(report)}</section>"
    )


def _facts(report: TableReport, completeness: TableCompleteness | None) -> str:
    cp = report.status.checkpoint
    lag = report.watermark_lag_ms
    last_batch = report.last_batch_ms
    if report.stalled:
        progress = (
            f'<span class="state stalled">stalled</span> no progress since '
            f"{_time(report.progress_since_ms)}"
        )
    else:
        progress = '<span class="state moving">moving</span>'
    counts = " ".join(
        f'<span class="state" style="background:{_STATE_COLOURS[PartitionState(s)]}">'
        f"{n} {escape(s)}</span>"
        for s, n in report.counts().items()
    )
    facts = [
        (
            "Safe watermark",
            "not advanced yet"
            if report.status.watermark_pending
            else _time(cp.watermark_ms)
            if cp.watermark_ms
            else "none yet",
        ),
        ("Watermark lag", _duration(lag)),
        ("Complete through", _completeness(completeness)),
        (
            "Last batch",
            f"{cp.latest_committed_batch} at {_time(last_batch)}"
            + (f" ({_duration(report.now_ms - last_batch)} ago)" if last_batch else "")
            if cp.latest_committed_batch is not None
            else "no batch committed yet",
        ),
        (f"Stream (stall timeout {escape(format_duration(report.stall_timeout))})", progress),
        ("Trigger", escape(report.spec.trigger_summary)),
        ("Expiration", escape(report.spec.expiration_summary or "never")),
        ("Format", _format(report)),
        ("Partitions", counts or "none"),
    ]
    if report.status.orphan_files:
        facts.append(("Orphan files", str(len(report.status.orphan_files))))
    return (
        '<div class="facts">'
        + "".join(f'<div class="fact"><b>{label}</b>{value}</div>' for label, value in facts)
        + "</div>"
    )


def _completeness(completeness: TableCompleteness | None) -> str:
    """The published partition time, and what the state gives now where it differs (the
    current watermark is a fact of its own)."""
    if completeness is None:
        return "-"
    published, current = completeness.published, completeness.current
    if published is None:
        shown = escape(completeness.published_error or "nothing published yet")
    else:
        shown = (
            f'<span class="published">{_time(published.complete_through_ms)}</span>'
            f" (published {_time(published.committed_at_ms)}, watermark "
            f"{_time(published.watermark_ms)})"
        )
    if published is None or current.complete_through_ms != published.complete_through_ms:
        shown += f'<br><span class="now">now {_time(current.complete_through_ms)}</span>'
    if current.reason:
        shown += f'<br><span class="why">{escape(current.reason)}</span>'
    return shown


def _format(report: TableReport) -> str:
    file_format, problem = report.status.file_format
    if problem:
        return f'<span class="error">{escape(problem)}</span>'
    return escape(file_format or "nothing staged yet")


def _partitions(report: TableReport) -> str:
    head = (
        "<tr><th>Partition</th><th>State</th><th class=n>Staged files</th>"
        "<th class=n>Staged bytes</th><th class=n>Published files</th>"
        "<th class=n>Published bytes</th><th class=n>Rows</th><th>Committable after</th>"
        "<th>Last commit</th><th>Committed by</th></tr>"
    )
    rows = []
    for p in reversed(report.partitions):  # newest first
        colour = _STATE_COLOURS[p.state]
        note = f'<div class="error">{escape(p.error)}</div>' if p.error else ""
        if p.state == PartitionState.EXPIRED:
            late = f" {_time(p.expired_ms)}" + (
                f" ({p.unpublished_files} late, not published)" if p.unpublished_files else ""
            )
        else:
            late = f" ({p.unpublished_files} new)" if p.unpublished_files and p.commits else ""
        rows.append(
            f'<tr class="partition" data-state="{escape(p.state.value)}" '
            f'data-partition="{escape(p.partition)}" data-work="{",".join(p.work.names)}">'
            f'<td class="p">{escape(p.partition)}{note}</td>'
            f'<td><span class="state" style="background:{colour}"{_work(p)}>'
            f"{escape(p.state.value)}"
            f"</span>{late}</td>"
            f"<td class=n>{p.staged_files}</td><td class=n>{format_size(p.staged_bytes)}</td>"
            f"<td class=n>{p.published_files}{_fragmented(p, report)}</td>"
            f"<td class=n>{format_size(p.published_bytes)}</td>"
            f"<td class=n>{p.published_rows}</td>"
            f"<td class=t>{_time(p.commit_time_ms, '')}</td>"
            f"<td class=t>{_time(p.last_commit_ms, '')}"
            + (f" ({p.commits} commits)" if p.commits > 1 else "")
            + (
                f'<div class="snapshot">Iceberg snapshot {snapshot}</div>'
                if (snapshot := snapshot_of(p.receipts)) is not None
                else ""
            )
            + f"</td><td>{_origin(p.last_origin)}</td></tr>"
        )
    return f"<table>{head}{''.join(rows)}</table>"


def _work(partition: PartitionReport) -> str:
    """What a run would do for the partition, as its state's tooltip (nothing: no title)."""
    steps = ", ".join(partition.work.names)
    return f' title="a run would: {steps}"' if steps else ""


def _fragmented(partition: PartitionReport, report: TableReport) -> str:
    """A fragmented partition's mark: the files one compaction makes, and what happens."""
    if not partition.fragmented:
        return ""
    why = (
        f"late data left files of several compactions; one compaction of their rows makes "
        f"{partition.one_compaction_files}: {report.fragmented_outlook}"
    )
    return (
        f' <span class="fragmented" title="{escape(why)}">'
        f"(fragmented: {partition.one_compaction_files})</span>"
    )


def _origin(origin: CommitOrigin | None) -> str:
    if origin is None:
        return ""
    return (
        f'<a class="run-link" data-airflow-route href="{escape(run_link(origin))}">'
        f"{escape(origin.dag_id)} / {escape(origin.run_id)}</a>"
    )


def _chart(partitions: Sequence[PartitionReport]) -> str:
    """Files per partition before (staged) and after (published) compaction, as SVG bars."""
    shown = [p for p in partitions if p.published_files][-CHART_PARTITIONS:]
    if not shown:
        return ""
    peak = max(max(p.published_inputs, p.published_files) for p in shown) or 1
    label_width, bar_height, row_height, width = 190, 8, 24, 560
    scale = (width - label_width - 40) / peak
    parts = []
    for i, p in enumerate(shown):
        y = 20 + i * row_height
        label = escape(p.partition[-30:])
        parts.append(
            f'<text x="{label_width - 6}" y="{y + bar_height + 3}" text-anchor="end">'
            f"<title>{escape(p.partition)}</title>{label}</text>"
        )
        for j, (count, colour, what) in enumerate(
            ((p.published_inputs, "#8a8f98", "staged"), (p.published_files, "#1a7f37", "published"))
        ):
            top = y + j * (bar_height + 1)
            length = max(1.0, count * scale)
            parts.append(
                f'<rect x="{label_width}" y="{top}" width="{length:.1f}" height="{bar_height}" '
                f'fill="{colour}"><title>{escape(p.partition)}: {count} {what} file(s)</title>'
                f'</rect><text x="{label_width + length + 4:.1f}" y="{top + bar_height}">'
                f"{count}</text>"
            )
    height = 30 + len(shown) * row_height
    legend = (
        '<rect x="0" y="2" width="10" height="10" fill="#8a8f98"/>'
        '<text x="14" y="11">staged files (before compaction)</text>'
        '<rect x="220" y="2" width="10" height="10" fill="#1a7f37"/>'
        '<text x="234" y="11">published files (after)</text>'
    )
    return (
        f'<svg class="chart" role="img" aria-label="files per partition before and after '
        f'compaction" width="{width}" height="{height}" viewBox="0 0 {width} {height}">'
        f"{legend}{''.join(parts)}</svg>"
    )


def _time(epoch_ms: int | None, missing: str = "-") -> str:
    """A moment as UTC wall clock to the second, the way the Airflow UI shows times."""
    if epoch_ms is None:
        return missing
    return datetime.fromtimestamp(epoch_ms / 1000, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def _duration(ms: int | None) -> str:
    if ms is None:
        return "-"
    seconds = ms / 1000
    if abs(seconds) < 120:
        return f"{seconds:.0f} s"
    if abs(seconds) < 7200:
        return f"{seconds / 60:.0f} min"
    if abs(seconds) < 172800:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} d"
