"""A throwaway Airflow installation (SQLite metadata DB) for end-to-end DAG runs."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

AIRFLOW = str(Path(sys.executable).parent / "airflow")


@dataclass
class AirflowEnv:
    home: Path
    extra_env: dict[str, str]

    @property
    def dags_folder(self) -> Path:
        return self.home / "dags"

    def env(self) -> dict[str, str]:
        # No AWS identity of the test process: a task reaches S3 only as extra_env says.
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        env.update(
            AIRFLOW_HOME=str(self.home),
            # The scheduler, api-server, triggerer, dag-processor and CLI share one SQLite
            # file; on a busy 2-core machine a writer can wait longer than SQLite's default
            # 5 s for the lock, so wait up to a minute instead. (A transaction that read
            # before another one wrote still fails at once: see Services.backfill.)
            AIRFLOW__DATABASE__SQL_ALCHEMY_CONN=f"sqlite:///{self.home / 'airflow.db'}?timeout=60",
            AIRFLOW__CORE__DAGS_FOLDER=str(self.dags_folder),
            AIRFLOW__CORE__LOAD_EXAMPLES="False",
            AIRFLOW__CORE__PARALLELISM="2",
            SPARK_LOCAL_IP="127.0.0.1",
            PATH=f"{Path(sys.executable).parent}:{env.get('PATH', '')}",
        )
        env.update(self.extra_env)
        return env

    def run(self, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
        return subprocess.run(
            [AIRFLOW, *args], env=self.env(), capture_output=True, text=True, timeout=timeout
        )

    def setup(self) -> AirflowEnv:
        self.dags_folder.mkdir(parents=True, exist_ok=True)
        result = self.run("db", "migrate")
        assert result.returncode == 0, result.stderr[-3000:]
        return self

    def query(self, sql: str) -> list[tuple]:
        with sqlite3.connect(self.home / "airflow.db", timeout=60) as db:
            return db.execute(sql).fetchall()
