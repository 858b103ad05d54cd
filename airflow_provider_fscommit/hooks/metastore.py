"""The metastore client of an Airflow connection, as the metastore policies use it.

The Hive provider's ``HiveMetastoreHook`` reads the connection (host, port, Kerberos) and
gives an ``hmsclient`` client that opens as a context manager. The core takes a factory,
not a client: a commit that needs no metastore never connects, and each batch of calls
opens and closes its own connection.
"""

from __future__ import annotations

from typing import Any

from airflow_provider_fscommit.core.metastore_policy import ClientFactory


def connection_metastore_client(metastore_conn_id: str) -> ClientFactory:
    """A factory of clients to the metastore of ``metastore_conn_id``."""

    def client() -> Any:
        from airflow.providers.apache.hive.hooks.hive import HiveMetastoreHook

        return HiveMetastoreHook(metastore_conn_id=metastore_conn_id).metastore

    return client
