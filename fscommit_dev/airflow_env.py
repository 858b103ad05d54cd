"""A throwaway Airflow installation for end-to-end DAG runs.

Its metadata database is a SQLite file in the Airflow home (enough for ``airflow dags
test``, one process at a time) unless a PostgreSQL database is given, as the tests of the
real services (scheduler, api-server, triggerer, dag-processor) do. The SQLite file is a
copy of one ``airflow db migrate`` made once per installation and kept (a migration takes
seconds of a core; what it writes depends on the installation only).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import sqlalchemy

AIRFLOW = str(Path(sys.executable).parent / "airflow")


@dataclass
class AirflowEnv:
    home: Path
    extra_env: dict[str, str]
    database: str | None = None  # SQLAlchemy URL; None: a SQLite file in the home
    # The environment's scripts (``airflow``): this one's, or a compatibility suite's venv.
    bin: Path = Path(sys.executable).parent

    @property
    def database_url(self) -> str:
        # SQLite: several processes may share the file; on a busy 2-core machine a writer
        # can wait longer than SQLite's default 5 s for the lock, so wait up to a minute.
        return self.database or f"sqlite:///{self.home / 'airflow.db'}?timeout=60"

    @property
    def dags_folder(self) -> Path:
        return self.home / "dags"

    def env(self) -> dict[str, str]:
        # No AWS identity of the test process: a task reaches S3 only as extra_env says.
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        env.update(
            AIRFLOW_HOME=str(self.home),
            AIRFLOW__DATABASE__SQL_ALCHEMY_CONN=self.database_url,
            AIRFLOW__CORE__DAGS_FOLDER=str(self.dags_folder),
            AIRFLOW__CORE__LOAD_EXAMPLES="False",
            AIRFLOW__CORE__PARALLELISM="2",
            SPARK_LOCAL_IP="127.0.0.1",
            PATH=f"{self.bin}:{env.get('PATH', '')}",
        )
        env.update(self.extra_env)
        return env

    def run(self, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(self.bin / "airflow"), *args],
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def setup(self) -> AirflowEnv:
        """The home's DAG folder, and a migrated SQLite database when none is given (a
        given database is migrated already, or :meth:`migrate` it)."""
        self.dags_folder.mkdir(parents=True, exist_ok=True)
        if self.database is None:
            shutil.copyfile(_migrated_sqlite(self.bin), self.home / "airflow.db")
        return self

    def migrate(self) -> None:
        result = self.run("db", "migrate")
        assert result.returncode == 0, result.stderr[-3000:]

    @cached_property
    def _engine(self) -> sqlalchemy.Engine:
        return sqlalchemy.create_engine(self.database_url, poolclass=sqlalchemy.pool.NullPool)

    def query(self, sql: str) -> list[tuple]:
        """Rows of ``sql`` read from the metadata database (the tests' view of a run)."""
        with self._engine.connect() as connection:
            return [tuple(row) for row in connection.execute(sqlalchemy.text(sql))]

    def task_states(self, dag_id: str, run_id_like: str = "%") -> dict[str, str]:
        """Each task's state in the runs of ``dag_id`` matching ``run_id_like``."""
        rows = self.query(
            "SELECT task_id, map_index, state FROM task_instance "
            f"WHERE dag_id = '{dag_id}' AND run_id LIKE '{run_id_like}'"
        )
        return {f"{t}[{i}]" if i >= 0 else t: s for t, i, s in rows}


def _migrated_sqlite(bin: Path) -> Path:
    """A SQLite metadata database ``airflow db migrate`` of ``bin``'s Airflow made.

    What a migration writes depends on the installation only: the file is kept in the
    user's cache under the installation's packages (its ``*.dist-info`` names, which carry
    every version), not its path, so the copies of one venv share it, every test worker
    and run of a machine migrates each installation once, and one migrates while the
    others wait on its lock.
    """
    site = next((bin.parent / "lib").glob("python*/site-packages"))
    packages = sorted(p.name for p in site.glob("*.dist-info"))
    key = hashlib.sha256(json.dumps([site.parent.name, packages]).encode()).hexdigest()[:16]
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    folder = Path(base) / "airflow-provider-fscommit" / "airflow-db" / key
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / "airflow.db").exists():
            home = Path(tempfile.mkdtemp(dir=folder))
            AirflowEnv(home, {}, bin=bin).migrate()
            (home / "airflow.db").rename(folder / "airflow.db")  # whole, or not at all
            shutil.rmtree(home, ignore_errors=True)
    return folder / "airflow.db"
