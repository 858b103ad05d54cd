"""Real Airflow services for end-to-end tests and the soak: scheduler, api-server,
triggerer and dag-processor.

Each runs in its own process group with its log under the Airflow home and is stopped by
PID (SIGTERM, then SIGKILL) when the context exits, whatever happened in the test. Every
listener binds 127.0.0.1: the api-server by ``--host``, the scheduler's and triggerer's
log servers are not started (``--skip-serve-logs``; they would bind every interface).
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

import requests

from fscommit_dev.airflow_env import AIRFLOW, AirflowEnv
from fscommit_dev.listeners import free_port
from fscommit_dev.postgres import PostgresServer

TERMINAL = ("success", "failed")
COMMANDS = {
    "api-server": lambda port: ["api-server", "--host", "127.0.0.1", "--port", str(port)],
    "scheduler": lambda port: ["scheduler", "--skip-serve-logs"],
    "triggerer": lambda port: ["triggerer", "--skip-serve-logs"],
    "dag-processor": lambda port: ["dag-processor"],
}


def services_env(port: int) -> dict[str, str]:
    """Settings that let tasks reach the execution API and tests call the REST API."""
    return {
        "AIRFLOW__CORE__EXECUTOR": "LocalExecutor",
        "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"http://127.0.0.1:{port}/execution/",
        "AIRFLOW__API__BASE_URL": f"http://127.0.0.1:{port}",
        "AIRFLOW__API_AUTH__JWT_SECRET": "fscommit-tests-only",
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS": "True",
        "AIRFLOW__SCHEDULER__SCHEDULER_HEARTBEAT_SEC": "1",
        "AIRFLOW__SCHEDULER__TASK_QUEUED_TIMEOUT": "600",
        # A task's supervisor waits this long for the api-server (Airflow 3.1.1 and later;
        # default 5 s, retried for ~30 s): on a loaded 2-core CI host the api-server was
        # seen answering nothing for 40 s, and a task that never started failed its run.
        "AIRFLOW__WORKERS__EXECUTION_API_TIMEOUT": "120",
        # And retries a refused connection for minutes, not seconds (Airflow's 5 tries wait
        # a random 1-2, 1-4, 1-8, 1-16 s between them): the services start together, and
        # under load 5 tasks the scheduler started 12 s before the api-server listened
        # failed (the soak that ran them recovered, but a test could not).
        "AIRFLOW__WORKERS__EXECUTION_API_RETRIES": "10",
        "AIRFLOW__TRIGGERER__JOB_HEARTBEAT_SEC": "1",
        "AIRFLOW__DAG_PROCESSOR__REFRESH_INTERVAL": "5",
    }


def login_required_env(passwords_file: Path, username: str, password: str) -> dict[str, str]:
    """Settings of a simple auth manager that asks for a login: one admin user.

    :func:`services_env` makes everyone an admin without logging in; use this on top of it
    where anonymous access must be refused (pass the credentials to :func:`running_services`).
    """
    passwords_file.write_text(json.dumps({username: password}))
    return {
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS": "False",
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": f"{username}:admin",
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE": str(passwords_file),
    }


@dataclass
class Services:
    """The running services of one Airflow installation, and a REST client for it."""

    airflow: AirflowEnv
    port: int
    processes: dict[str, subprocess.Popen] = field(default_factory=dict)
    credentials: tuple[str, str] | None = None
    _token: str | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def log_tail(self, chars: int = 3000) -> str:
        tails = []
        for name in self.processes:
            text = (self.airflow.home / f"{name}.log").read_text(errors="replace")
            tails.append(f"--- {name} ---\n{text[-chars:]}")
        return "\n".join(tails)

    def _headers(self) -> dict[str, str]:
        if self._token is None:
            if self.credentials is None:  # every user is an admin: no password
                response = requests.get(f"{self.url}/auth/token", timeout=30)
            else:
                username, password = self.credentials
                response = requests.post(
                    f"{self.url}/auth/token",
                    json={"username": username, "password": password},
                    timeout=30,
                )
            response.raise_for_status()
            self._token = response.json()["access_token"]
        return {"Authorization": f"Bearer {self._token}"}

    def rest(self, method: str, path: str, **kwargs) -> requests.Response:
        """A REST API v2 call as a logged-in (admin) user of the UI makes it."""
        return requests.request(
            method, f"{self.url}/api/v2{path}", headers=self._headers(), timeout=60, **kwargs
        )

    def trigger(self, dag_id: str, conf: dict) -> requests.Response:
        """Trigger a run with ``conf`` as the UI's *Trigger DAG* form does."""
        return self.rest(
            "POST", f"/dags/{dag_id}/dagRuns", json={"logical_date": None, "conf": conf}
        )

    def wait_for_runs(
        self, dag_id: str, count: int, timeout: float = 600, where: str = "1 = 1"
    ) -> dict[str, str]:
        """Wait until ``count`` runs of ``dag_id`` (matching ``where``) are finished."""
        deadline = time.monotonic() + timeout
        while True:
            runs = dict(
                self.airflow.query(
                    f"SELECT run_id, state FROM dag_run WHERE dag_id = '{dag_id}' AND {where}"
                )
            )
            done = {r: s for r, s in runs.items() if s in TERMINAL}
            if len(done) >= count:
                return done
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"{dag_id}: runs {runs} not finished after {timeout} s\n{self.log_tail()}"
                )
            time.sleep(1)

    def backfill(self, dag_id: str, *args: str) -> int:
        """``airflow backfill create`` for ``dag_id`` while the services run; its id."""
        created = self.airflow.run("backfill", "create", "--dag-id", dag_id, *args)
        assert created.returncode == 0, created.stderr[-3000:]
        ((backfill_id,),) = self.airflow.query("SELECT MAX(id) FROM backfill")
        return backfill_id

    def backfill_run_states(self, backfill_id: int) -> list[str]:
        """The states of the runs a backfill created."""
        return [
            state
            for (state,) in self.airflow.query(
                f"SELECT state FROM dag_run WHERE backfill_id = {backfill_id}"
            )
        ]

    def wait_for_backfill(self, backfill_id: int, timeout: float = 600) -> None:
        """Wait until the scheduler marks a backfill complete (all its runs finished)."""
        self.wait_until(
            f"backfill {backfill_id}",
            lambda: self.airflow.query(
                f"SELECT 1 FROM backfill WHERE id = {backfill_id} AND completed_at IS NOT NULL"
            ),
            timeout,
        )

    def rerun_cleared(self, dag_id: str, key: str) -> dict[str, str]:
        """Clear the (latest) backfill run of partition ``key`` as the UI's *Clear* does,
        wait until it has run again, and return its tasks' states.

        A backfill's run, not a catch-up one: catch-up fills the DAG's ``max_active_runs``
        with runs of hours still to come, waiting for the stream, and a cleared scheduled
        run would queue behind them; a backfill's runs have their own limit.
        """
        ((run_id,),) = self.airflow.query(
            f"SELECT run_id FROM dag_run WHERE dag_id = '{dag_id}' AND partition_key = '{key}' "
            "AND run_type = 'backfill' ORDER BY id DESC LIMIT 1"
        )
        cleared = self.rest(
            "POST", f"/dags/{dag_id}/dagRuns/{run_id}/clear", json={"dry_run": False}
        )
        assert cleared.ok, cleared.text
        self.wait_for_state(
            f"SELECT 1 FROM dag_run WHERE run_id = '{run_id}' AND clear_number = 1 "
            "AND state = 'success'"
        )
        return self.airflow.task_states(dag_id, run_id)

    def wait_for_state(self, sql: str, timeout: float = 300) -> None:
        """Wait until ``sql`` returns a row (e.g. a task instance reaching a state)."""
        self.wait_until(sql, lambda: self.airflow.query(sql), timeout)

    def wait_until(self, what: str, done, timeout: float = 300) -> None:
        """Wait until ``done()`` is true; fail naming ``what``, with the services' logs."""
        deadline = time.monotonic() + timeout
        while not done():
            if time.monotonic() > deadline:
                raise AssertionError(f"{what}: not done after {timeout} s\n{self.log_tail()}")
            time.sleep(1)

    def start(self) -> None:
        """Start every service (appending to its log) and wait until the API answers."""
        for name in COMMANDS:
            self.start_service(name)
        self._wait_until_up()

    def start_service(self, name: str) -> subprocess.Popen:
        """Start one service (again, as a supervisor restarts it), its log appended to."""
        with open(self.airflow.home / f"{name}.log", "ab") as log:
            self.processes[name] = subprocess.Popen(
                [str(self.airflow.bin / "airflow"), *COMMANDS[name](self.port)],
                env=self.airflow.env(),
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        return self.processes[name]

    def kill_service(self, name: str) -> None:
        """SIGKILL one service's process group (the scheduler's: its executor's workers and
        their tasks too), as a lost machine or an OOM kill ends it; wait until it is gone."""
        process = self.processes[name]
        _signal(process, signal.SIGKILL)
        process.wait(timeout=60)

    def stop(self) -> None:
        """The api-server's clients first, all at once, then the api-server: a task still
        running finishes against it (with the API gone it retries until it is killed)."""
        _stop([p for name, p in self.processes.items() if name != "api-server"])
        _stop([p for name, p in self.processes.items() if name == "api-server"])

    def _wait_until_up(self, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.processes["api-server"].poll() is not None:
                break
            try:
                if requests.get(f"{self.url}/api/v2/version", timeout=2).status_code < 500:
                    return
            except (requests.ConnectionError, requests.Timeout):  # not listening or still starting
                pass
            time.sleep(0.5)
        raise AssertionError(f"the api-server did not come up\n{self.log_tail()}")


@contextmanager
def running_services(
    airflow: AirflowEnv, credentials: tuple[str, str] | None = None
) -> Iterator[Services]:
    """Start api-server, scheduler and triggerer for ``airflow``; stop them at exit.

    ``airflow`` must have been created with :func:`services_env` settings for ``port``
    (use :func:`services_airflow_env`); ``credentials`` (user, password) when it requires
    a login (:func:`login_required_env`).
    """
    port = int(airflow.extra_env["AIRFLOW__API__BASE_URL"].rsplit(":", 1)[1])
    services = Services(airflow, port, credentials=credentials)
    try:
        services.start()
        yield services
    finally:
        services.stop()


def services_airflow_env(
    home: Path, extra_env: dict[str, str], postgres: PostgresServer, bin: Path | None = None
) -> AirflowEnv:
    """An :class:`AirflowEnv` (migrated) set up to run :func:`running_services`.

    Its metadata database is a new database on ``postgres``, migrated (a copy of the
    installation's migrated template): the services write to it concurrently, as in
    production (SQLite lets one process write at a time). ``bin``: the
    scripts of another Airflow installation (a compatibility line's), default this one's.
    """
    bin = bin or Path(AIRFLOW).parent

    def migrate(url: str) -> None:
        AirflowEnv(home / "migrating", {}, url, bin=bin).migrate()

    key = hashlib.sha256(str(bin.resolve()).encode()).hexdigest()[:12]
    database = postgres.migrated_database(f"airflow_{uuid.uuid4().hex[:12]}", migrate, key)
    return AirflowEnv(home, services_env(free_port()) | extra_env, database, bin=bin).setup()


def _stop(processes: list[subprocess.Popen], grace: float = 20) -> None:
    """SIGTERM each process group, and SIGKILL those still running ``grace`` s later."""
    running = [p for p in processes if p.poll() is None]
    for process in running:
        _signal(process, signal.SIGTERM)
    deadline = time.monotonic() + grace
    for process in running:
        try:
            process.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            _signal(process, signal.SIGKILL)
            process.wait(timeout=grace)


def _signal(process: subprocess.Popen, signum: int) -> None:
    with suppress(ProcessLookupError):  # the group is gone already
        os.killpg(process.pid, signum)
