"""The completeness trigger only waits, serializes to plain kwargs and fires once."""

from __future__ import annotations

import asyncio
import importlib

import pytest
from structlog.testing import capture_logs

from airflow_provider_fscommit.core.commit.metastore_policy import MetastoreCommitPolicy
from airflow_provider_fscommit.core.config.quantities import epoch_ms
from airflow_provider_fscommit.hooks.metastore import uri_metastore_client
from airflow_provider_fscommit.triggers.completeness import TableCompletenessTrigger
from fscommit_dev.metastore.client import create_table
from tests.support.completeness import publish_completeness

THROUGH = epoch_ms("2026-11-20T03:00:00+00:00")


def metastore_table(name: str) -> dict[str, str]:
    return {"catalog": "metastore", "database": "fscommit", "table_name": name}


def test_serializes_to_an_importable_path_and_plain_kwargs():
    table = {"catalog": "glue", "database": "analytics", "table_name": "events", "aws_conn_id": "x"}
    trigger = TableCompletenessTrigger(table, THROUGH, 30.0)
    path, kwargs = trigger.serialize()
    module, _, name = path.rpartition(".")
    rebuilt = getattr(importlib.import_module(module), name)(**kwargs)
    assert rebuilt.serialize() == (path, kwargs)


def test_a_trigger_stored_by_the_previous_release_reads_the_same_and_stores_plain_names():
    """The previous release stored the catalog as its name; it still names a catalog
    policy's catalog, and what is stored again is the same plain string."""
    stored = {"catalog": "metastore", "database": "fscommit", "table_name": "events"}
    _, kwargs = TableCompletenessTrigger(stored, THROUGH, 30.0).serialize()
    assert kwargs["table"]["catalog"] == "metastore"
    assert type(kwargs["table"]["catalog"]) is str
    with pytest.raises(ValueError, match="name the catalog, 'metastore', 'glue' or 'iceberg'"):
        TableCompletenessTrigger(stored | {"catalog": "hive"}, THROUGH, 30.0)


def test_fires_once_the_table_is_complete_through_its_time_or_refused(
    metastore, monkeypatch, tmp_path
):
    """Many polls below the time, one line each time what it sees changes, then one event;
    a missing table is one error event naming it."""
    monkeypatch.setenv(
        "AIRFLOW_CONN_METASTORE_DEFAULT", f"hive-metastore://127.0.0.1:{metastore.port}"
    )
    create_table(metastore, "triggered", tmp_path / "table")
    policy = MetastoreCommitPolicy(
        uri_metastore_client(f"thrift://127.0.0.1:{metastore.port}"), "fscommit", "triggered"
    )
    publish_completeness(policy, tmp_path, 1)

    async def wait(trigger: TableCompletenessTrigger) -> dict:
        events = trigger.run()
        first = asyncio.ensure_future(anext(events))
        await asyncio.sleep(2)  # a few polls at 01:00
        assert not first.done()
        await asyncio.to_thread(publish_completeness, policy, tmp_path, 3)
        return (await asyncio.wait_for(first, 60)).payload

    with capture_logs() as logs:
        event = asyncio.run(
            wait(TableCompletenessTrigger(metastore_table("triggered"), THROUGH, 0.2))
        )
    assert event == {
        "complete": True,
        "message": "fscommit.triggered is complete through 2026-11-20T03:00:00.000+00:00, "
        "at or after 2026-11-20T03:00:00.000+00:00",
    }
    said = [entry["event"] for entry in logs if "complete through" in str(entry.get("event"))]
    assert said == [
        "fscommit.triggered is complete through 2026-11-20T01:00:00.000+00:00; waiting for "
        "2026-11-20T03:00:00.000+00:00"
    ]

    async def first(trigger: TableCompletenessTrigger) -> dict:
        async for fired in trigger.run():
            return fired.payload

    refused = asyncio.run(first(TableCompletenessTrigger(metastore_table("nope"), THROUGH, 0.2)))
    assert not refused["complete"]
    assert "table fscommit.nope does not exist in the metastore" in refused["message"]
