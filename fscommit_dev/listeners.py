"""Loopback ports for the servers tests start, and proof that they bind nothing else."""

from __future__ import annotations

import re
import socket
import subprocess


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now, for a server to bind."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def listening_addresses(pgid: int) -> set[str]:
    """``host:port`` of every TCP listener owned by a process of group ``pgid``."""
    groups = subprocess.run(
        ["ps", "-eo", "pid=,pgid="], capture_output=True, text=True, check=True
    ).stdout.split("\n")
    pids = {int(p) for p, g in (line.split() for line in groups if line.strip()) if int(g) == pgid}
    sockets = subprocess.run(
        ["ss", "-ltnpH"], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    found = set()
    for line in sockets:
        owners = {int(pid) for pid in re.findall(r"pid=(\d+)", line)}
        if owners & pids:
            # A Java socket bound to 127.0.0.1 shows as IPv4-mapped IPv6.
            found.add(line.split()[3].replace("[::ffff:127.0.0.1]", "127.0.0.1"))
    return found
