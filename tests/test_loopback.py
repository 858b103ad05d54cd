"""Servers the project starts listen on 127.0.0.1 only."""

from __future__ import annotations

from tests.support.listeners import listening_addresses


def test_the_local_metastore_listens_on_loopback_only(metastore):
    addresses = listening_addresses(metastore.pid)
    assert f"127.0.0.1:{metastore.port}" in addresses
    assert all(a.startswith("127.0.0.1:") for a in addresses), addresses
