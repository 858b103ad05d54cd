"""A Spark standalone master and worker on 127.0.0.1, started with pyspark's own scripts.

Started and stopped by PID, with ports chosen free, logs and PID files under a temporary
directory, so a test run never touches a cluster it did not start.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pyspark

from fscommit_dev.listeners import free_port


@dataclass
class StandaloneCluster:
    base: Path
    master_url: str = ""

    def _env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(
            SPARK_HOME=str(Path(pyspark.__file__).parent),
            SPARK_PID_DIR=str(self.base / "pids"),
            SPARK_LOG_DIR=str(self.base / "logs"),
            SPARK_LOCAL_IP="127.0.0.1",
            SPARK_IDENT_STRING="fscommit-test",
            SPARK_WORKER_DIR=str(self.base / "work"),
        )
        return env

    def _daemon(self, *args: str) -> None:
        script = Path(pyspark.__file__).parent / "sbin" / "spark-daemon.sh"
        subprocess.run(
            ["bash", str(script), *args],
            env=self._env(),
            check=True,
            capture_output=True,
            timeout=60,
        )

    def start(self) -> StandaloneCluster:
        port = free_port()
        self.master_url = f"spark://127.0.0.1:{port}"
        self._daemon(
            "start",
            "org.apache.spark.deploy.master.Master",
            "1",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--webui-port",
            str(free_port()),
        )
        self._daemon(
            "start",
            "org.apache.spark.deploy.worker.Worker",
            "1",
            "--host",
            "127.0.0.1",
            "--webui-port",
            str(free_port()),
            "--cores",
            "2",
            "--memory",
            "2g",
            self.master_url,
        )
        self._wait_for("*Worker*.out", "Successfully registered with master")
        return self

    def _wait_for(self, pattern: str, text: str, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(
                text in p.read_text(errors="replace") for p in (self.base / "logs").glob(pattern)
            ):
                return
            time.sleep(0.5)
        raise RuntimeError(f"standalone cluster did not start; see {self.base / 'logs'}")

    def stop(self) -> None:
        for pid_file in (self.base / "pids").glob("*.pid"):
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid_file.read_text().strip()), signal.SIGTERM)
