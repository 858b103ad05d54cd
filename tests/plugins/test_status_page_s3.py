"""The status page reads tables on S3 with the AWS connection ``[fscommit] aws_conn_id``."""

from __future__ import annotations

import json
import time

from airflow_provider_fscommit.plugins.status_page import PageSettings, read_cards
from fscommit_dev.s3_server import aws_connection_env
from fscommit_dev.s3_tables import place_on_s3


def test_cards_of_s3_tables_are_read_through_the_configured_connection(
    hourly_stream, s3_server, tmp_path, monkeypatch
):
    bucket = s3_server.create_bucket("status-page")
    table = place_on_s3(hourly_stream, s3_server, bucket, "events")
    spec = tmp_path / "events.json"
    spec.write_text(json.dumps(table.spec()))
    for key, value in aws_connection_env(s3_server, "aws_page").items():
        monkeypatch.setenv(key, value)
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_ENDPOINT_URL"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AIRFLOW__FSCOMMIT__TABLE_SPECS", str(spec))
    now_ms = int(time.time() * 1000)

    # Without the connection the api-server has no identity for the store: the card says so.
    (card,) = read_cards(PageSettings.from_airflow_config(), now_ms)
    assert card.error and "no AWS credentials found for s3://status-page" in card.error

    monkeypatch.setenv("AIRFLOW__FSCOMMIT__AWS_CONN_ID", "aws_page")
    (card,) = read_cards(PageSettings.from_airflow_config(), now_ms)
    assert card.error is None
    states = {p.partition: p.state.value for p in card.report.partitions}
    assert states["dt=2026-11-20/hour=00"] == "committable"
