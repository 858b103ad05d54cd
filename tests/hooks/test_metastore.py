"""``MetastoreHook``: metastore clients of an Airflow connection or of a ``thrift://`` URI,
made only when asked (what they then do against a real metastore: tests/core/commit)."""

from __future__ import annotations

import re
import socket
from collections.abc import Iterator

import pytest

from airflow_provider_fscommit.core.errors import ConfigError, MissingExtraError
from airflow_provider_fscommit.hooks.metastore import (
    MetastoreHook,
    connection_metastore_client,
    uri_metastore_client,
)
from tests.support.extras import without_extra

HIVE = "needs the 'hive' extra, which is not installed (no module 'airflow.providers.apache.hive"


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    """A TCP port on 127.0.0.1 that accepts connections (the Hive hook probes its host)."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        server.settimeout(10)
        yield server


def reached(listener: socket.socket) -> bool:
    """Whether something connected to ``listener``."""
    try:
        connection, _ = listener.accept()
    except TimeoutError:
        return False
    connection.close()
    return True


@pytest.fixture
def no_connections(monkeypatch, tmp_path) -> None:
    """An Airflow home of its own and no connection in the environment."""
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path / "airflow-home"))
    monkeypatch.delenv("AIRFLOW_CONN_METASTORE_DEFAULT", raising=False)


def test_a_connection_is_looked_up_only_when_a_client_is_asked_for(
    listener, monkeypatch, no_connections
):
    hook = MetastoreHook()  # nothing defined yet: a commit without the metastore never asks
    assert hook.metastore_conn_id == "metastore_default"
    monkeypatch.setenv(
        "AIRFLOW_CONN_METASTORE_DEFAULT",
        f"hive-metastore://127.0.0.1:{listener.getsockname()[1]}",
    )
    client = hook.get_conn()
    assert reached(listener)
    assert hasattr(client, "__enter__")  # opened by the policy, one batch at a time
    connection_metastore_client("metastore_default")()  # the shorthand's factory: the same
    assert reached(listener)


def test_a_thrift_uri_needs_no_airflow_connection(listener, no_connections):
    uri = f"thrift://127.0.0.1:{listener.getsockname()[1]}"
    client = MetastoreHook.from_uri(uri).get_conn()
    assert reached(listener) and hasattr(client, "__enter__")
    uri_metastore_client(uri)()  # the CLI's name for the same
    assert reached(listener)


@pytest.mark.parametrize("uri", ["http://127.0.0.1:9083", "thrift://127.0.0.1", "127.0.0.1:9083"])
def test_an_address_that_is_not_thrift_host_port_is_refused_before_anything(uri):
    with pytest.raises(ConfigError, match=r"--metastore-uri .* is not thrift://HOST:PORT"):
        MetastoreHook.from_uri(uri)
    with pytest.raises(ConfigError, match=r"is not thrift://HOST:PORT"):
        uri_metastore_client(uri)


def test_without_the_hive_extra_a_client_or_a_table_read_names_the_extra(
    monkeypatch, no_connections
):
    """The hook and its table import without the Hive provider (the ``hive`` extra); asking
    for a client, or reading a table's parameters (the completeness sensor's way), fails
    with the one message that names the extra, not as an unreachable metastore."""
    without_extra(monkeypatch, "hive")
    hook = MetastoreHook.from_uri("thrift://127.0.0.1:9")
    for ask in (hook.get_conn, lambda: hook.get_table_parameters("fscommit", "events")):
        with pytest.raises(MissingExtraError, match=re.escape(HIVE)):
            ask()
