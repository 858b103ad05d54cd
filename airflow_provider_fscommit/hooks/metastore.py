"""The metastore client the metastore policies use: of an Airflow connection, or of a URI.

The Hive provider's ``HiveMetastoreHook`` reads the connection (host, port, Kerberos) and
gives an ``hmsclient`` client that opens as a context manager. The operators name an
Airflow connection; the command line takes ``--metastore-uri thrift://HOST:PORT`` and
goes through the same hook, given that address as a connection of its own (nothing is
added to the environment or Airflow's connections). The core takes a factory, not a
client: a commit that needs no metastore never connects, and each batch of calls opens and
closes its own connection.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from airflow_provider_fscommit.core.commit.metastore_policy import ClientFactory
from airflow_provider_fscommit.core.errors import ConfigError


def connection_metastore_client(metastore_conn_id: str) -> ClientFactory:
    """A factory of clients to the metastore of ``metastore_conn_id``."""

    def client() -> Any:
        from airflow.providers.apache.hive.hooks.hive import HiveMetastoreHook

        return HiveMetastoreHook(metastore_conn_id=metastore_conn_id).metastore

    return client


def uri_metastore_client(uri: str) -> ClientFactory:
    """A factory of clients to the metastore at ``thrift://HOST:PORT``."""
    parts = urlsplit(uri)
    if parts.scheme != "thrift" or not parts.hostname or not parts.port:
        raise ConfigError(f"--metastore-uri {uri!r} is not thrift://HOST:PORT")
    host, port = parts.hostname, parts.port

    def client() -> Any:
        from airflow.providers.apache.hive.hooks.hive import HiveMetastoreHook
        from airflow.sdk import Connection

        class UriMetastoreHook(HiveMetastoreHook):
            """The hook, its connection given rather than looked up."""

            @classmethod
            def get_connection(cls, conn_id: str) -> Connection:
                return Connection(conn_id=conn_id, conn_type="hive_metastore", host=host, port=port)

        return UriMetastoreHook(metastore_conn_id="fscommit_metastore_uri").metastore

    return client
