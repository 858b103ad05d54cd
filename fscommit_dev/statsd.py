"""A StatsD server for the tests and the soak: a real UDP socket on 127.0.0.1 that keeps
every datagram.

Airflow's ``Stats`` sends through the ``statsd`` client to ``[metrics] statsd_host`` and
``statsd_port``; pointing them here shows exactly what a deployment's StatsD would get.
With ``statsd_influxdb_enabled`` Airflow writes a metric's tags into its name
(``name,table=orders:1|c``), which :class:`Metric` reads back.
"""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass

#: The ``[metrics] statsd_prefix`` :meth:`StatsdListener.env` gives Airflow.
PREFIX = "airflow"


@dataclass(frozen=True)
class Metric:
    """One StatsD line: ``prefix.name[,tag=value...]:value|type``."""

    name: str
    value: float
    type: str  # c (counter), g (gauge), ms (timer)
    tags: dict[str, str]

    @classmethod
    def parse(cls, line: str) -> Metric:
        head, _, rest = line.partition(":")
        value, _, kind = rest.partition("|")
        name, *tags = head.split(",")
        return cls(
            name,
            float(value),
            kind.split("|")[0],
            dict(tag.split("=", 1) for tag in tags),
        )


class StatsdListener:
    """Collects the metrics sent to its port until :meth:`close`."""

    def __init__(self) -> None:
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._socket.bind(("127.0.0.1", 0))
        self._socket.settimeout(0.2)
        self.port: int = self._socket.getsockname()[1]
        self._lines: list[str] = []
        self._lock = threading.Lock()
        self._open = True
        self._thread = threading.Thread(target=self._receive, daemon=True)
        self._thread.start()

    def env(self, *, on: bool = True) -> dict[str, str]:
        """Airflow's settings that send its metrics here (tags in the names), or none."""
        return {
            "AIRFLOW__METRICS__STATSD_ON": str(on),
            "AIRFLOW__METRICS__STATSD_HOST": "127.0.0.1",
            "AIRFLOW__METRICS__STATSD_PORT": str(self.port),
            "AIRFLOW__METRICS__STATSD_PREFIX": PREFIX,
            "AIRFLOW__METRICS__STATSD_INFLUXDB_ENABLED": "True",
        }

    def _receive(self) -> None:
        while self._open:
            try:
                data = self._socket.recv(65535)
            except (TimeoutError, OSError):
                continue
            with self._lock:  # the client batches lines into one datagram
                self._lines.extend(line for line in data.decode().splitlines() if line)

    def metrics(self, prefix: str = f"{PREFIX}.fscommit.") -> list[Metric]:
        """Every metric received so far whose name starts with ``prefix``."""
        with self._lock:
            lines = list(self._lines)
        return [m for m in map(Metric.parse, lines) if m.name.startswith(prefix)]

    def wait_for(self, name: str, timeout: float = 10.0) -> list[Metric]:
        """The metrics named ``name``, once at least one has arrived (UDP is asynchronous)."""
        deadline = time.monotonic() + timeout
        while True:
            found = [m for m in self.metrics("") if m.name == name]
            if found or time.monotonic() > deadline:
                return found
            time.sleep(0.05)

    def close(self) -> None:
        self._open = False
        self._thread.join()
        self._socket.close()
