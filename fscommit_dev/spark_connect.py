"""A Spark Connect server on 127.0.0.1, started with pyspark's own script, stopped by PID.

Its Python workers run a Python that has pyarrow and pyspark but not this provider (a
venv that sees this one's site-packages without its editable install, started outside the
repository): the compactor can only reach them as the client's session artifact, as on a
server that someone else runs.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import sysconfig
import time
from dataclasses import dataclass, field
from pathlib import Path

import pyspark

from fscommit_dev.listeners import free_port

SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"


def worker_python(base: Path) -> str:
    """A Python with this environment's libraries, but without the provider installed.

    A ``.pth`` line naming a directory adds it to ``sys.path`` without running the
    ``.pth`` files inside it, so the editable install of the provider is not seen.
    """
    venv = base / "worker-venv"
    if not (venv / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
        site = next((venv / "lib").glob("python*/site-packages"))
        (site / "outer.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return str(venv / "bin" / "python")


def _launcher(home: Path) -> list[str]:
    """pyspark's ``sbin/start-connect-server.sh``, or where a wheel lacks it (4.0's), the
    daemon submission that script runs."""
    script = home / "sbin" / "start-connect-server.sh"
    if script.exists():
        return [str(script)]
    daemon = home / "sbin" / "spark-daemon.sh"
    return [str(daemon), "submit", SERVER_CLASS, "1", "--name", "Spark Connect server"]


@dataclass
class ConnectServer:
    base: Path
    port: int = 0
    env: dict[str, str] = field(default_factory=dict)  # for its workers, e.g. a fault
    # Another Spark line's home and the Python of its workers (default: this pyspark's,
    # and a Python with this environment's libraries but not the provider).
    spark_home: Path | None = None
    worker: str | None = None

    @property
    def url(self) -> str:
        return f"sc://127.0.0.1:{self.port}"

    @property
    def pid_file(self) -> Path:
        return self.base / "pids" / f"spark-fscommit-test-{SERVER_CLASS}-1.pid"

    def start(self) -> ConnectServer:
        """Start (or restart, on the same port) and wait until it accepts connections."""
        self.port = self.port or free_port()
        home = self.spark_home or Path(pyspark.__file__).parent
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SPARK_REMOTE")}
        env.update(
            SPARK_HOME=str(home),
            SPARK_PID_DIR=str(self.base / "pids"),
            SPARK_LOG_DIR=str(self.base / "logs"),
            SPARK_LOCAL_IP="127.0.0.1",
            SPARK_IDENT_STRING="fscommit-test",
            PYSPARK_PYTHON=self.worker or worker_python(self.base),
        )
        env.update(self.env)
        self.pid_file.unlink(missing_ok=True)
        subprocess.run(
            [
                "bash",
                *_launcher(home),
                "--master",
                "local[2]",
                "--conf",
                "spark.connect.grpc.binding.address=127.0.0.1",
                "--conf",
                f"spark.connect.grpc.binding.port={self.port}",
                "--conf",
                "spark.driver.bindAddress=127.0.0.1",
                "--conf",
                "spark.driver.host=127.0.0.1",
                "--conf",
                "spark.ui.enabled=false",
            ],
            env=env,
            cwd=self.base,
            check=True,
            capture_output=True,
            timeout=60,
        )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port)):
                return self
            time.sleep(0.5)
        raise RuntimeError(f"the Spark Connect server did not start; see {self.base / 'logs'}")

    def pid(self) -> int:
        return int(self.pid_file.read_text().strip())

    def is_running(self) -> bool:
        """Its JVM is alive and its port accepts connections."""
        try:
            os.kill(self.pid(), 0)
        except (OSError, ValueError):
            return False
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port)):
            return True
        return False

    def kill(self) -> None:
        """SIGKILL the server's JVM, as a lost machine ends it."""
        self._signal(signal.SIGKILL)

    def stop(self) -> None:
        self._signal(signal.SIGTERM)

    def _signal(self, sig: int) -> None:
        if not self.pid_file.exists():
            return
        pid = self.pid()
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.2)
        self.pid_file.unlink(missing_ok=True)
