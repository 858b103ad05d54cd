"""A PostgreSQL server for Airflow's metadata database, as production Airflow runs it.

The server comes from Debian's packages (``scripts/bootstrap.sh`` installs them). A test
run starts one with its own data directory, listening on 127.0.0.1 only (no Unix socket),
and stops it by PID at the end (``tests/support/run_shared.py``; the soak's bench run,
``bench/soak.py``, starts its own); each Airflow installation gets a database of its own,
a copy of a template ``airflow db migrate`` made once per Airflow installation and server.
It is a throwaway server: trust authentication on loopback, and no fsync.

PostgreSQL refuses to run as root, so as root (CI) the server runs as Debian's
``postgres`` user, which owns the data directory.
"""

from __future__ import annotations

import fcntl
import glob
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

from fscommit_dev.listeners import free_port

USER = "airflow"  # the database role Airflow connects as


def _binary(name: str) -> str | None:
    """``initdb`` or ``postgres`` of Debian's packages (not on PATH there), else PATH's."""
    return (sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}")) or [shutil.which(name)])[-1]


def server_programs_found() -> bool:
    """Whether Debian's (or PATH's) ``initdb`` and ``postgres`` are installed: the tests
    skip without them (``tests/support/run_shared.py``), the soak names them."""
    return bool(_binary("initdb") and _binary("postgres"))


def _run_as() -> dict[str, object]:
    """Popen arguments that drop root to the ``postgres`` user; none when not root."""
    if os.geteuid() != 0:
        return {}
    account = pwd.getpwnam("postgres")
    return {"user": account.pw_uid, "group": account.pw_gid, "extra_groups": []}


@dataclass
class PostgresServer:
    """One running server; :meth:`create_database` gives each Airflow its own database."""

    directory: Path
    port: int
    pid: int  # the postmaster's

    @classmethod
    def start(cls) -> PostgresServer:
        """A new server, its data in a new folder of the system's temp (which the
        ``postgres`` user reaches, unlike root's pytest folders)."""
        if not server_programs_found():
            raise RuntimeError(
                "PostgreSQL's server programs are not installed: apt-get install -y "
                "postgresql (scripts/bootstrap.sh does it when run as root)"
            )
        directory = Path(tempfile.mkdtemp(prefix="fscommit-postgres-"))
        run_as = _run_as()
        if run_as:
            os.chown(directory, run_as["user"], run_as["group"])
        data = directory / "data"
        options = ["-U", USER, "--auth=trust", "-E", "UTF8", "--no-locale", "--no-sync"]
        initdb = subprocess.run(
            [_binary("initdb"), "-D", str(data), *options],
            capture_output=True,
            text=True,
            cwd=directory,
            **run_as,
        )
        if initdb.returncode != 0:
            raise RuntimeError(f"initdb failed:\n{initdb.stdout}\n{initdb.stderr}")
        port = free_port()
        settings = {
            "listen_addresses": "127.0.0.1",
            "unix_socket_directories": "",
            "max_connections": "200",
            "fsync": "off",
            "synchronous_commit": "off",
            "full_page_writes": "off",
        }
        command = [_binary("postgres"), "-D", str(data), "-p", str(port)]
        for key, value in settings.items():
            command += ["-c", f"{key}={value}"]
        with open(directory / "postgres.log", "ab") as log:
            process = subprocess.Popen(
                command,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=directory,
                start_new_session=True,
                **run_as,
            )
        server = cls(directory, port, process.pid)
        server._wait_until_ready()
        return server

    def url(self, database: str) -> str:
        """SQLAlchemy URL of ``database`` for Airflow (psycopg2; asyncpg for async)."""
        return f"postgresql+psycopg2://{USER}@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        """A new empty database; its SQLAlchemy URL."""
        self.execute("postgres", f'CREATE DATABASE "{name}"')
        return self.url(name)

    def migrated_database(self, name: str, migrate: Callable[[str], None], key: str) -> str:
        """A new database that is a copy of one ``migrate`` (given its URL) made once per
        ``key`` on this server (the Airflow installation): a migration costs a core half a
        minute, a copy of its database a second. Its SQLAlchemy URL."""
        template = f"migrated_{key}"
        with (self.directory / f"{template}.lock").open("a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            done = f"SELECT 1 FROM pg_database WHERE datname = '{template}' AND datistemplate"
            if not self.execute("postgres", done):
                self.execute("postgres", f'DROP DATABASE IF EXISTS "{template}"')
                migrate(self.create_database(template))
                self.execute("postgres", f'ALTER DATABASE "{template}" IS_TEMPLATE true')
            self.execute("postgres", f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
        return self.url(name)

    def execute(self, database: str, sql: str) -> list[tuple]:
        """Run ``sql`` in ``database`` (autocommit); the rows it returns, if any."""
        import psycopg2

        connection = psycopg2.connect(host="127.0.0.1", port=self.port, user=USER, dbname=database)
        try:
            connection.autocommit = True
            with connection.cursor() as cursor:
                cursor.execute(sql)
                return cursor.fetchall() if cursor.description else []
        finally:
            connection.close()

    def _wait_until_ready(self, timeout: float = 60) -> None:
        import psycopg2

        deadline = time.monotonic() + timeout
        while True:
            try:
                self.execute("postgres", "SELECT 1")
                return
            except psycopg2.OperationalError:  # not accepting connections yet
                if not self._running() or time.monotonic() > deadline:
                    log = (self.directory / "postgres.log").read_text(errors="replace")
                    self.stop()
                    raise RuntimeError(f"PostgreSQL did not start:\n{log[-3000:]}") from None
                time.sleep(0.2)

    def _running(self) -> bool:
        """The postmaster is alive (reaped first when this process started it)."""
        with suppress(ChildProcessError):
            if os.waitpid(self.pid, os.WNOHANG)[0] == self.pid:
                return False
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        return True

    def stop(self, grace: float = 30) -> None:
        """Fast shutdown (SIGINT to the postmaster's PID), then remove the data directory."""
        with suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGINT)
            deadline = time.monotonic() + grace
            while self._running() and time.monotonic() < deadline:
                time.sleep(0.1)
            if self._running():
                os.killpg(self.pid, signal.SIGKILL)
        shutil.rmtree(self.directory, ignore_errors=True)
