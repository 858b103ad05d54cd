"""Helpers for the commit policies' tests against a real metastore: contexts and a call spy."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import ClassVar

from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.partition.partition_spec import PartitionSpec
from airflow_provider_fscommit.core.publish.published import CommitContext, CommitSummary
from fscommit_dev.metastore.client import thrift_client


def context(spec: TableSpec, dt: str, hour: str, rows: int = 10) -> CommitContext:
    path = PartitionSpec(("dt", "hour"), (dt, hour)).path()
    Path(spec.table_path, path).mkdir(parents=True, exist_ok=True)
    return CommitContext(
        spec,
        PartitionSpec(("dt", "hour"), (dt, hour)),
        path,
        f"{spec.table_path}/{path}",
        CommitSummary(
            files=1,
            bytes=100,
            rows=rows,
            watermark_ms=5,
            max_batch_id=7,
            compaction_seq=None,
            committed_at_ms=9,
            format=None,
        ),
    )


class CountingClient:
    """Counts the Thrift calls made through a real client (a spy, not a fake)."""

    calls: ClassVar[list[str]] = []

    def __init__(self, client):
        self._client = client

    def __getattr__(self, name):
        CountingClient.calls.append(name)
        return getattr(self._client, name)


def counting_factory(server):
    @contextmanager
    def factory():
        with thrift_client(server) as client:
            yield CountingClient(client)

    return factory
