"""``HttpReportHook``: the ``http-report`` target an Airflow HTTP connection gives: URL,
headers and auth."""

from __future__ import annotations

import base64
import json
from datetime import timedelta

import pytest
from airflow.exceptions import AirflowProviderDeprecationWarning

from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.errors import ConfigError
from airflow_provider_fscommit.hooks.http_report import HttpReportHook, connection_http_target


@pytest.fixture
def connection(monkeypatch, tmp_path):
    """Sets the Airflow connection ``report`` (as Airflow reads it from the environment)."""
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path / "airflow-home"))

    def set_connection(**fields: object) -> None:
        monkeypatch.setenv("AIRFLOW_CONN_REPORT", json.dumps({"conn_type": "http", **fields}))

    return set_connection


def spec(tmp_path, **options: str) -> TableSpec:
    return TableSpec.from_options(
        {
            "staging_path": str(tmp_path / "staging"),
            "checkpoint_path": str(tmp_path / "checkpoint"),
            "partition_keys": "dt,hour",
            "partition.mark-done-action": "http-report",
            "partition.mark-done-action.http.timeout": "3 s",
        }
        | options
    )


def test_the_host_schema_and_port_are_the_base_and_the_spec_url_its_path(connection, tmp_path):
    connection(host="catalog.internal", schema="https", port=8443, extra={"X-Team": "ads"})
    table = spec(tmp_path, **{"partition.mark-done-action.http.url": "/partitions/done"})
    target = HttpReportHook("report").get_target(table)
    assert target.url == "https://catalog.internal:8443/partitions/done"
    assert target.headers == {"X-Team": "ads"}
    assert target.timeout == timedelta(seconds=3)  # the rest is the spec's


def test_login_and_password_become_basic_auth_and_the_host_alone_is_the_url(connection, tmp_path):
    connection(host="http://127.0.0.1:9/", login="fscommit", password="pa:ss")
    target = HttpReportHook("report").get_target(spec(tmp_path))
    assert target.url == "http://127.0.0.1:9"
    token = base64.b64encode(b"fscommit:pa:ss").decode()
    assert target.headers == {"Authorization": f"Basic {token}"}


@pytest.mark.parametrize(
    ("fields", "options", "message"),
    [
        ({}, {}, "the HTTP connection 'report' has no host; set it to the report endpoint's"),
        (
            {"host": "catalog.internal"},
            {"partition.mark-done-action.http.url": "https://elsewhere/done"},
            "is a full URL, but the HTTP connection 'report' gives the base URL too",
        ),
    ],
)
def test_a_connection_and_spec_that_disagree_are_refused(
    connection, tmp_path, fields, options, message
):
    connection(**fields)
    with pytest.raises(ConfigError, match=message):
        HttpReportHook("report").get_target(spec(tmp_path, **options))


def test_the_function_it_replaces_still_gives_the_target_and_warns(connection, tmp_path):
    connection(host="catalog.internal", extra={"X-Team": "ads"})
    with pytest.warns(AirflowProviderDeprecationWarning, match=r"HttpReportHook\(http_conn_id\)"):
        target = connection_http_target(spec(tmp_path), "report")
    assert target == HttpReportHook("report").get_target(spec(tmp_path))
