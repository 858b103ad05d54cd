"""``MetastoreHook``: the metastore clients the metastore policies use.

The Hive provider's ``HiveMetastoreHook`` reads the connection (host, port, Kerberos) and
gives an ``hmsclient`` client that opens as a context manager. This hook owns when that
happens: the core takes a factory, not a client (``get_conn`` is that factory), so a commit
that needs no metastore never looks the connection up nor connects, and each batch of calls
opens and closes its own connection. The operators name an Airflow connection; the command
line takes ``--metastore-uri thrift://HOST:PORT`` (:meth:`MetastoreHook.from_uri`) and goes
through the same Hive hook, given that address as a connection of its own (nothing is added
to the environment or Airflow's connections). The Hive provider is the ``hive`` extra's:
this module imports without it, and a client asked for without it says to install it.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from airflow_provider_fscommit.core.catalogs.metastore_table import (
    USED_BY,
    ClientFactory,
    MetastoreTable,
)
from airflow_provider_fscommit.core.errors import ConfigError, import_extra
from airflow_provider_fscommit.version_compat import BaseHook

#: The connection id the Hive hook is given for a ``--metastore-uri`` (never looked up).
URI_CONN_ID = "fscommit_metastore_uri"


class MetastoreHook(BaseHook):
    """Clients to a Hive metastore, one per batch of calls, made only when a policy asks.

    Uses the Hive provider's ``hive_metastore`` connection type (it defines it).

    :param metastore_conn_id: Airflow connection of the Hive metastore.
    """

    conn_name_attr = "metastore_conn_id"
    default_conn_name = "metastore_default"
    conn_type = "hive_metastore"
    hook_name = "Hive Metastore Thrift (partition commit)"

    def __init__(self, metastore_conn_id: str = default_conn_name) -> None:
        super().__init__()
        self.metastore_conn_id = metastore_conn_id
        self._address: tuple[str, int] | None = None

    @classmethod
    def from_uri(cls, uri: str) -> MetastoreHook:
        """The hook of the metastore at ``thrift://HOST:PORT``, with no Airflow connection."""
        parts = urlsplit(uri)
        if parts.scheme != "thrift" or not parts.hostname or not parts.port:
            raise ConfigError(f"--metastore-uri {uri!r} is not thrift://HOST:PORT")
        hook = cls(metastore_conn_id=URI_CONN_ID)
        hook._address = (parts.hostname, parts.port)
        return hook

    def get_conn(self) -> Any:
        """A new client, not yet open: ``with client: ...`` connects and disconnects.

        The Hive provider is the ``hive`` extra's, imported here: without it, the one error
        that names the extra."""
        hive = import_extra("airflow.providers.apache.hive.hooks.hive", "hive", USED_BY)
        HiveMetastoreHook = hive.HiveMetastoreHook

        if self._address is None:
            return HiveMetastoreHook(metastore_conn_id=self.metastore_conn_id).metastore
        host, port = self._address
        from airflow.sdk import Connection

        class UriMetastoreHook(HiveMetastoreHook):
            """The Hive hook, its connection given rather than looked up."""

            @classmethod
            def get_connection(cls, conn_id: str) -> Connection:
                return Connection(conn_id=conn_id, conn_type="hive_metastore", host=host, port=port)

        return UriMetastoreHook(metastore_conn_id=self.metastore_conn_id).metastore

    def get_table(self, database: str, table: str) -> MetastoreTable:
        """``database.table`` of this metastore; it connects only when asked something."""
        return MetastoreTable(self.get_conn, database, table)

    def get_table_parameters(self, database: str, table: str) -> dict[str, str]:
        """``database.table``'s parameters (one connection, closed again), e.g. the
        completeness a commit run published; one error naming the table if it is missing."""
        return self.get_table(database, table).read_table_parameters()


def connection_metastore_client(metastore_conn_id: str) -> ClientFactory:
    """A factory of clients to the metastore of ``metastore_conn_id``: the hook's ``get_conn``."""
    return MetastoreHook(metastore_conn_id).get_conn


def uri_metastore_client(uri: str) -> ClientFactory:
    """A factory of clients to the metastore at ``thrift://HOST:PORT`` (the CLI's)."""
    return MetastoreHook.from_uri(uri).get_conn
