"""Servers the project starts listen on 127.0.0.1 only."""

from __future__ import annotations

import subprocess
import sys

import pytest

from fscommit_dev.listeners import listening_addresses
from fscommit_dev.streams import ROOT


def test_the_local_metastore_listens_on_loopback_only(metastore):
    addresses = listening_addresses(metastore.pid)
    assert f"127.0.0.1:{metastore.port}" in addresses
    assert all(a.startswith("127.0.0.1:") for a in addresses), addresses


@pytest.mark.slow
def test_the_metastore_command_of_the_checkout_starts_and_stops_it(tmp_path):
    """The commands README gives for a laptop's metastore, run from the checkout."""

    state = ["--dir", str(tmp_path / "metastore"), "--port", "0"]

    def server(action: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "fscommit_dev.metastore.server", action, *state],
            cwd=ROOT,  # fscommit_dev is importable from the checkout only
            capture_output=True,
            text=True,
            timeout=300,
        )

    started = server("start")
    try:
        assert started.returncode == 0, started.stdout + started.stderr
        assert "thrift://127.0.0.1:" in started.stdout
    finally:
        stopped = server("stop")
    assert stopped.returncode == 0, stopped.stdout + stopped.stderr
    assert not (tmp_path / "metastore" / "metastore.pid").exists()
