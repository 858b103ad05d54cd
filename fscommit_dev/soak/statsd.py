"""The soak's StatsD: a UDP socket on 127.0.0.1 that keeps every datagram Airflow sends.

The deployment's ``[metrics]`` point Airflow's ``Stats`` here with the tags written into
the names (``statsd_influxdb_enabled``: ``name,table=t:1|c``), as a platform team's StatsD
would receive them; the soak then compares the provider's ``fscommit.*`` metrics with
what it measured itself (:mod:`.metrics_check`). A copy of the tests' listener
(``tests/support/statsd.py``), which ``fscommit_dev`` may not import.
"""

from __future__ import annotations

import socket
import threading
from dataclasses import dataclass

PREFIX = "airflow"


@dataclass(frozen=True)
class Metric:
    """One StatsD line: ``prefix.name[,tag=value...]:value|type``, and when it came."""

    name: str
    value: float
    type: str  # c (counter), g (gauge), ms (timer)
    tags: dict[str, str]

    @classmethod
    def parse(cls, line: str) -> Metric:
        head, _, rest = line.partition(":")
        value, _, kind = rest.partition("|")
        name, *tags = head.split(",")
        return cls(name, float(value), kind.split("|")[0], dict(t.split("=", 1) for t in tags))


class StatsdCollector:
    """Collects every line sent to its port until :meth:`close`."""

    def __init__(self) -> None:
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._socket.bind(("127.0.0.1", 0))
        self._socket.settimeout(0.2)
        self.port: int = self._socket.getsockname()[1]
        self._lines: list[str] = []
        self._lock = threading.Lock()
        self._open = True
        self._thread = threading.Thread(target=self._receive, name="soak-statsd", daemon=True)
        self._thread.start()

    def airflow_env(self) -> dict[str, str]:
        """Airflow's settings that send its metrics here, with the tags in the names."""
        return {
            "AIRFLOW__METRICS__STATSD_ON": "True",
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

    def datagram_lines(self) -> int:
        with self._lock:
            return len(self._lines)

    def close(self) -> None:
        self._open = False
        self._thread.join()
        self._socket.close()
