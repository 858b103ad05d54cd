"""The http-report policy against a real HTTP server: what it sends, and failing safely."""

from __future__ import annotations

from pathlib import Path

import pytest

from airflow_provider_fscommit.core.commit.committer import PartitionCommitter
from airflow_provider_fscommit.core.commit.policy_factory import create_policies
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.errors import ConfigError, HttpReportError
from airflow_provider_fscommit.core.ledger.ledger import CommitLedger
from tests.support.compaction import published_ledger
from tests.support.http_server import HttpServer

HOUR = "dt=2026-11-20/hour=03"


@pytest.fixture
def server(tmp_path):
    running = HttpServer(tmp_path / "http-server")
    yield running
    running.stop()


def spec_for(tmp_path: Path, url: str, **extra) -> TableSpec:
    return TableSpec.from_options(
        {
            "staging_path": str(tmp_path / "staging"),
            "checkpoint_path": str(tmp_path / "checkpoint"),
            "partition_keys": "dt,hour",
            "table_path": str(tmp_path / "table"),
            "metastore_database": "sales",
            "metastore_table": "clicks",
            "partition.mark-done-action": "success-file,http-report",
            "partition.mark-done-action.http.url": url,
            "partition.mark-done-action.http.params": '{"team": "ads", "tier": 1}',
        }
        | extra
    )


def committer(spec: TableSpec) -> PartitionCommitter:
    return PartitionCommitter(spec, create_policies(spec))


def test_each_committed_partition_is_posted_once_as_json(server, tmp_path):
    spec = spec_for(tmp_path, f"{server.url}/partitions/done")
    published_ledger(spec, HOUR, rows=3)
    origin = {"dag_id": "hourly", "run_id": "scheduled__2026-11-20T04", "task_id": "commit"}
    (outcome,) = committer(spec).commit([HOUR], origin=origin)
    assert outcome.state == "committed"
    (request,) = server.requests()
    assert request["path"] == "/partitions/done"
    assert request["headers"]["Content-Type"] == "application/json"
    body = request["body"]
    assert body["table"] == "sales.clicks" and body["partition"] == HOUR
    assert body["path"] == body["table_path"] == spec.table_path
    assert body["values"] == {"dt": "2026-11-20", "hour": "03"}
    assert body["location"] == f"{spec.table_path}/{HOUR}"
    assert (body["rows"], body["files"], body["bytes"]) == (3, 1, 50)
    assert body["watermark_ms"] == 4 and body["watermark"] == "1970-01-01T00:00:00.004+00:00"
    assert body["committed_at"].startswith("20") and body["compaction_seq"] == 0
    assert (body["run_id"], body["dag_id"]) == ("scheduled__2026-11-20T04", "hourly")
    assert body["params"] == '{"team": "ads", "tier": 1}'  # as written, as Paimon sends it
    assert body["params_object"] == {"team": "ads", "tier": 1}
    assert [o.state for o in committer(spec).commit([HOUR])] == ["up-to-date"]
    assert len(server.requests()) == 1  # a rerun reports nothing again


def test_a_failing_endpoint_fails_the_commit_and_the_next_run_reports_it(server, tmp_path):
    spec = spec_for(tmp_path, f"{server.url}/done")
    published_ledger(spec, HOUR, rows=3)
    server.answer(503)
    with pytest.raises(HttpReportError) as error:
        committer(spec).commit([HOUR])
    message = str(error.value)
    assert f"http-report of {HOUR} to {server.url}/done failed: HTTP 503" in message
    assert "the catalog is down for maintenance" in message and "reports it again" in message
    assert CommitLedger(spec.table_path).read(HOUR).policy_commits == {}
    assert Path(spec.table_path, HOUR, "_SUCCESS").exists()  # the policy before it ran
    server.answer(200)
    assert [o.state for o in committer(spec).commit([HOUR])] == ["committed"]
    assert [r["answered"] for r in server.requests()] == [503, 200]
    assert len(CommitLedger(spec.table_path).read(HOUR).policy_commits) == 1


def test_a_receiver_written_for_paimon_gets_paimons_four_fields(server, tmp_path):
    """Paimon's HttpReportMarkDoneAction posts params (the option's text), table
    (database.table), path (the table's location) and partition (its path)."""
    spec = spec_for(
        tmp_path, server.url, **{"partition.mark-done-action.http.params": "team=acceptance"}
    )
    published_ledger(spec, HOUR, rows=3)
    assert [o.state for o in committer(spec).commit([HOUR])] == ["committed"]
    (request,) = server.requests()
    paimon = {key: request["body"][key] for key in ("params", "table", "path", "partition")}
    assert paimon == {
        "params": "team=acceptance",
        "table": "sales.clicks",
        "path": spec.table_path,
        "partition": HOUR,
    }
    assert request["body"]["params_object"] is None


@pytest.mark.parametrize(
    ("body", "why"),
    [
        ('{"result": "FAIL"}', 'its "result" is "FAIL"'),
        ('{"status": "ok"}', 'its "result" is null'),
        ("", "the answer was empty"),
        ("ok", "the answer is not JSON ('ok')"),
    ],
)
def test_a_2xx_answer_without_paimons_success_fails_and_the_next_run_reports_again(
    server, tmp_path, body, why
):
    spec = spec_for(tmp_path, f"{server.url}/done")
    published_ledger(spec, HOUR, rows=3)
    server.answer(200, body)
    with pytest.raises(HttpReportError) as error:
        committer(spec).commit([HOUR])
    assert f"http-report of {HOUR} to {server.url}/done failed: HTTP 200 but {why}" in str(
        error.value
    )
    assert '"result": "SUCCESS"' in str(error.value) and "reports it again" in str(error.value)
    assert CommitLedger(spec.table_path).read(HOUR).policy_commits == {}
    server.answer(200, '{"result": "success", "id": 7}')  # any case, other fields ignored
    assert [o.state for o in committer(spec).commit([HOUR])] == ["committed"]
    assert len(server.requests()) == 2
    assert len(CommitLedger(spec.table_path).read(HOUR).policy_commits) == 1


def test_a_redirect_is_not_followed_and_fails(server, tmp_path):
    """urllib would re-send a redirected POST as a GET without the document."""
    spec = spec_for(tmp_path, f"{server.url}/old")
    published_ledger(spec, HOUR, rows=3)
    server.answer(302, location=f"{server.url}/new")
    with pytest.raises(HttpReportError, match="HTTP 302"):
        committer(spec).commit([HOUR])
    assert [r["path"] for r in server.requests()] == ["/old"]


def test_no_answer_within_the_timeout_fails(server, tmp_path):
    spec = spec_for(tmp_path, server.url, **{"partition.mark-done-action.http.timeout": "300 ms"})
    published_ledger(spec, HOUR, rows=3)
    server.answer(200, delay_s=3)
    with pytest.raises(HttpReportError, match=r"no answer within 0\.3 s .*http\.timeout"):
        committer(spec).commit([HOUR])
    assert CommitLedger(spec.table_path).read(HOUR).policy_commits == {}


def test_an_unreachable_endpoint_is_named_without_its_query(server, tmp_path):
    url = f"http://127.0.0.1:{server.port}/done?token=s3cr3t"
    server.stop()
    spec = spec_for(tmp_path, url)
    published_ledger(spec, HOUR, rows=3)
    with pytest.raises(HttpReportError) as error:
        committer(spec).commit([HOUR])
    assert f"to http://127.0.0.1:{server.port}/done failed" in str(error.value)
    assert "s3cr3t" not in str(error.value) and "refused" in str(error.value)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"partition.mark-done-action.http.url": "ftp://host/x"}, "not an http:// or https://"),
        ({"partition.mark-done-action.http.url": None}, "needs an endpoint"),
        ({"partition.mark-done-action.http.params": ["ads"]}, "expected text .* or a JSON"),
        ({"partition.mark-done-action.http.timeout": "-5 s"}, "expected a positive duration"),
        ({"partition.mark-done-action": "done-partition"}, "put metastore or glue before it"),
        ({"partition.mark-done-action": "http-report,metastore"}, "http-report before metastore"),
    ],
)
def test_bad_report_settings_are_one_clear_error(tmp_path, options, message):
    with pytest.raises(ConfigError, match=message):
        spec = spec_for(tmp_path, "http://127.0.0.1:1/done", **options)
        create_policies(spec, metastore_client=lambda: None)
    assert not Path(tmp_path, "table").exists()


def test_params_round_trip_through_the_spec_as_written(tmp_path):
    spec = spec_for(tmp_path, "http://127.0.0.1:1/done")
    again = TableSpec.from_options(spec.to_dict())
    assert again.http_report_params == '{"team": "ads", "tier": 1}'
    mapping = spec_for(tmp_path, "x://", **{"partition.mark-done-action.http.params": {"b": 1}})
    assert mapping.http_report_params == '{"b":1}'  # a YAML mapping is sent as its JSON text
