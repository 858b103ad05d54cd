"""The page's HTML: user-controlled text is escaped, errors stay on their table's card."""

from __future__ import annotations

from datetime import datetime, timezone
from html.parser import HTMLParser

from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.status.table_overview import TableEntry
from airflow_provider_fscommit.core.status.table_report import (
    DEFAULT_STALL_TIMEOUT,
    read_table_report,
)
from airflow_provider_fscommit.plugins.render import render_page
from airflow_provider_fscommit.plugins.status_page import PageSettings, read_cards
from fscommit_dev.streams import StreamingTable, row
from tests.support.compaction import publish_and_commit, table_options

HOSTILE = "<img src=x onerror=alert(1)>&amp;"


class Elements(HTMLParser):
    """The start tags of a document and its text, as a browser's parser sees them."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parse(html: str) -> Elements:
    parser = Elements()
    parser.feed(html)
    return parser


def test_partition_values_and_errors_are_text_not_markup(spark, tmp_path):
    # Spark leaves <, > and & unescaped in partition directory names.
    stream = StreamingTable(tmp_path / "stream", partition_by=("dt", "k"))
    stream.add_batches([row(1, "2026-11-20T01:00:00Z", k=HOSTILE)])
    stream.run(spark)
    spec = TableSpec.from_options(
        {
            "staging_path": stream.staging,
            "checkpoint_path": stream.checkpoint,
            "partition_keys": "dt,k",
            "partition.time-extractor.timestamp-pattern": "$dt 00:00:00",
            "table_path": str(tmp_path / "table"),
        }
    )
    report = read_table_report(spec)
    (partition,) = report.partitions
    assert partition.values["k"] == HOSTILE and "<img src%3Dx" in partition.partition
    cards = [
        TableEntry("events", "/specs/events.yaml", report=report),
        TableEntry("<u>broken</u>", "/specs/<u>.yaml", error=f"cannot read {HOSTILE}"),
    ]
    page = parse(render_page(cards, report.now_ms, "configure <it>"))
    assert not [tag for tag, _ in page.tags if tag in ("img", "u", "it")]
    text = "".join(page.text)
    assert partition.partition in text
    assert f"cannot read {HOSTILE}" in text and "<u>broken</u>" in text
    cards = [a for tag, a in page.tags if tag == "section" and "table-card" in a["class"]]
    assert len(cards) == 2
    # The overview on top: one row per table, linking to the card's anchor.
    rows = [a for tag, a in page.tags if tag == "tr" and a.get("class") == "overview-row"]
    links = [a["href"] for tag, a in page.tags if tag == "a" and a["href"].startswith("#")]
    ids = {a["id"] for tag, a in page.tags if tag == "h2" and "id" in a}
    assert len(rows) == 2 and links == ["#table-events", "#table-%3Cu%3Ebroken%3C%2Fu%3E"]
    assert "table-events" in ids and "table-<u>broken</u>" in ids


def test_a_stream_that_has_just_started_shows_its_watermark_as_not_advanced_yet(
    first_batches_stream,
):
    spec = TableSpec.from_options(
        {
            "staging_path": first_batches_stream.staging,
            "checkpoint_path": first_batches_stream.checkpoint,
            "partition_keys": "dt,hour",
            "partition.time-extractor.timestamp-pattern": "$dt $hour:00:00",
            "sink.partition-commit.delay": "1 h",
        }
    )
    report = read_table_report(spec)
    page = parse(render_page([TableEntry("events", "/specs/events.yaml", report=report)], 0, ""))
    text = "".join(page.text)
    assert "Safe watermarknot advanced yet" in text and "1 pending" in text
    assert "Formatparquet" in text  # detected from the staged files' names


def test_a_tables_card_shows_its_published_completeness_and_what_holds_it(
    compacted_stream, tmp_path
):
    options = table_options(compacted_stream, str(tmp_path / "table"))
    spec = TableSpec.from_options(options | {"sink.partition-commit.policy.kind": "success-file"})
    hours = ["dt=2026-11-20/hour=00", "dt=2026-11-20/hour=01", "dt=2026-11-20/hour=03"]
    committer = publish_and_commit(spec, hours)
    assert committer.completeness is not None and committer.completeness.published is not None
    published_at = committer.completeness.published.committed_at_ms
    # The same table with a longer delay since: 01's commit time is past the watermark.
    (tmp_path / "events.json").write_text(spec.to_json())
    (tmp_path / "later.json").write_text(
        TableSpec.from_options(options | {"sink.partition-commit.delay": "330 min"}).to_json()
    )
    settings = PageSettings(
        [str(tmp_path / "events.json"), str(tmp_path / "later.json")], DEFAULT_STALL_TIMEOUT
    )
    events, later = read_cards(settings, 0)

    assert events.completeness == committer.completeness
    text = "".join(parse(render_page([events], 0, "")).text)
    assert (
        "Complete through2026-11-20 01:00:00 UTC (published "
        f"{datetime.fromtimestamp(published_at / 1000, timezone.utc):%Y-%m-%d %H:%M:%S} UTC, "
        "watermark 2026-11-20 06:10:00 UTC)"
        "dt=2026-11-20/hour=02 is committable, not committed"
    ) in text
    assert "now " not in text  # the state gives what was published

    assert (
        later.completeness is not None
        and later.completeness.published == events.completeness.published
    )
    text = "".join(parse(render_page([later], 0, "")).text)
    assert "Complete through2026-11-20 01:00:00 UTC (published" in text
    assert (
        "now 2026-11-20 00:00:00 UTCdt=2026-11-20/hour=01 is committed, but the watermark" in text
    )
