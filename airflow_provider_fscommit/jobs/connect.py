"""Compaction on a running Spark Connect server: no JVM started per run.

A spark-submit pays seconds of JVM and session start on every run; a sweep every ten
minutes pays them 144 times a day. With a Connect server (``--spark-remote sc://…``, or a
``spark_connect`` Airflow connection) the protocol stays where it is safe, in this
process: plan, ledger, commit point, publish and policies run exactly as the
spark-submit application's driver runs them (:func:`~.driver.run_and_record`). Only the
compaction units go to the server, as one ``mapInArrow`` over one row per group of units.

The provider reaches the server's Python workers as a session artifact (the zip that
spark-submit ships with ``--py-files``), so the server needs pyarrow but not this
provider, and always runs the client's own version of the compactor. Everything a unit
needs, S3 settings included, travels inside the job's serialized function over the
Connect channel (use TLS to a remote server), as it travels in memory from a
spark-submit driver to its tasks.

Runs of the same code share one server-side session (:func:`code_session_id`), kept
after each run, so the Python workers that imported pyarrow and the compactor serve the
next run too; each run tags its operations, so cancelling one (``on_kill``, ^C) leaves the
others running. The client reads what it plans from (no input footer: the units read their
own, once each) once, in the launcher's look for work, which the run continues. The first
run of this code in a session then uploads the artifact and, while it plans, a warm-up
job starts those workers and learns the server's parallelism, so planning and worker
start overlap; it notes the parallelism in the session, and later runs find the note in
one round trip instead of uploading the artifact and running the job again
(:func:`_workers`).
"""

from __future__ import annotations

import contextlib
import functools
import pickle
import re
import tempfile
import uuid
import warnings
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING

from airflow_provider_fscommit.core.compaction.compactor import UnitResult, UnitTask
from airflow_provider_fscommit.core.compaction.plan import CompactionPlan
from airflow_provider_fscommit.core.compaction.summary import CompactionSummary, PartitionResult
from airflow_provider_fscommit.core.errors import ConnectError
from airflow_provider_fscommit.core.publish.publisher import CompactionPublisher
from airflow_provider_fscommit.jobs.driver import run_and_record, unit_groups
from airflow_provider_fscommit.jobs.executor import report_partition, run_payload
from airflow_provider_fscommit.jobs.launch import package_digest, package_zip

if TYPE_CHECKING:
    from pyspark.sql.connect.session import SparkSession

REMOTE_ENV = "SPARK_REMOTE"
# Retries of an unanswered call: the first look fails fast (a server that is down); a
# running job tolerates about a minute of silence (backoff 50 ms x4 up to 60 s) before the
# run fails and leaves its plan to the next run's recovery.
PROBE_RETRIES = 2
RUN_RETRIES = 6


class ConnectCompaction:
    """Runs compactions with a Spark Connect server as the executors.

    :param remote: the server, ``sc://host:port`` (pyspark's URL, ``;token=…`` included).
    """

    def __init__(self, remote: str) -> None:
        self.remote = remote
        self._session: SparkSession | None = None
        self._tag = ""

    def run(
        self,
        publisher: CompactionPublisher,
        partitions: Sequence[str] | None,
        run_id: str,
        progress: Callable[[PartitionResult], None] | None = None,
        planned: Callable[[list[CompactionPlan]], None] | None = None,
    ) -> CompactionSummary:
        """Compact and publish with ``publisher`` (its table and codec), as the
        spark-submit application does; returns its summary. The run continues the
        publisher's reads: its look for work (the launcher's) read what the run plans from.

        A server that cannot be reached is a :class:`ConnectError` before anything is
        planned; one that fails mid-run leaves the run's plan open, unpublished, for the
        next run to abandon (the summary's ``error`` says so).
        """
        tag = f"fscommit-{run_id}"
        with (
            tempfile.TemporaryDirectory(prefix="fscommit-") as scratch,
            ThreadPoolExecutor(1, thread_name_prefix="fscommit-warmup") as pool,
        ):
            digest = package_digest()
            warm_up: list[Future[int]] = []

            def start() -> None:
                session = self._connect(code_session_id(digest))
                session.addTag(tag)
                self._session, self._tag = session, tag
                warm_up.append(_workers(session, tag, digest, scratch, pool))

            def run_units(tasks: list[UnitTask]) -> list[UnitResult]:
                assert self._session is not None
                return self._run_units(self._session, warm_up[0], tasks)

            try:
                return run_and_record(
                    publisher, partitions, run_id, run_units, progress, planned, start
                )
            except BaseException:  # ^C, a kill: end this run's work on the server too
                self.interrupt()
                raise
            finally:
                session, self._session = self._session, None
                if session is not None:
                    with _quiet():
                        session.stop()  # the server keeps the session, warm, for the next run

    def interrupt(self) -> None:
        """Cancel this run's work on the server (also from another thread: on_kill).

        Only this run's operations: other runs may share the session.
        """
        session = self._session
        if session is not None:
            with _quiet(), contextlib.suppress(Exception):
                session.interruptTag(self._tag)

    def _connect(self, session_id: str) -> SparkSession:
        # Connect's own session class: pyspark's generic builder would mark the whole
        # process as a Connect client (an environment variable) and refuses to build a
        # remote session beside a classic one; a task or a test may have one.
        with _quiet():  # pyspark warns about the pandas version as it imports
            from pyspark.sql.connect.client.retries import DefaultPolicy
            from pyspark.sql.connect.session import SparkSession

        try:
            with _quiet():
                session = SparkSession.builder.remote(
                    _with_session(self.remote, session_id)
                ).create()
        except Exception as exc:
            raise ConnectError(
                f"{_redacted(self.remote)} is not a Spark Connect URL ({_reason(exc)}); "
                "give sc://host:port"
            ) from exc
        session.client.set_retry_policies([DefaultPolicy(max_retries=PROBE_RETRIES)])
        try:
            with _quiet():
                session.version  # noqa: B018 -- the first call: is anyone there?
        except Exception as exc:
            with _quiet():
                session.stop()
            raise ConnectError(
                f"the Spark Connect server at {_redacted(self.remote)} did not answer "
                f"({_reason(exc)}); nothing was planned or published. Start it "
                "($SPARK_HOME/sbin/start-connect-server.sh) or fix the URL; without a "
                "Connect server, run through spark-submit (no --spark-remote, or an Airflow "
                "connection of type spark)"
            ) from exc
        session.client.set_retry_policies([DefaultPolicy(max_retries=RUN_RETRIES)])
        session.release_session_on_close = False
        return session

    def _run_units(
        self, session: SparkSession, parallelism: Future[int], tasks: list[UnitTask]
    ) -> list[UnitResult]:
        """Run the units on the server, balanced over a few tasks per server core."""
        try:
            groups = unit_groups(tasks, parallelism.result())
            job = functools.partial(run_payload, pickle.dumps(groups))
            with _quiet():
                rows = (
                    session.range(0, len(groups), 1, len(groups))
                    .mapInArrow(job, "results binary")
                    .collect()
                )
        except Exception as exc:
            raise ConnectError(
                f"the Spark Connect server at {_redacted(self.remote)} failed the compaction "
                f"units ({_reason(exc)}); nothing of this run was published, and the next "
                "run abandons its plan"
            ) from exc
        return [result for row in rows for result in pickle.loads(row.results)]


def code_session_id(digest: str) -> str:
    """The server-side session of this exact code (:func:`~.launch.package_digest`).

    Runs of the same provider version share one session on the server, so its Python
    workers, which have pyarrow and the compactor imported, serve the next run (about 2 s
    saved per run); a session cannot replace an artifact, so other code gets its own.
    """
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"fscommit:{digest}"))


def _workers(
    session: SparkSession, tag: str, digest: str, scratch: str, pool: ThreadPoolExecutor
) -> Future[int]:
    """The server's parallelism, once its Python workers can run this code's units.

    The first run of this code in a server-side session uploads it and starts the workers
    with a warm-up job, beside planning; the job then notes the parallelism in the session.
    A later run finds that note in one round trip and does neither: the session keeps its
    artifacts, and Spark keeps its Python workers for reuse (were they ended since, the
    units' job starts them itself). The note names the code, since a user's own
    ``session_id`` may hold another version's.
    """
    note = warm_note(digest)
    known = session.conf.get(note, None)
    if known is not None:
        found: Future[int] = Future()
        found.set_result(int(known))
        return found
    session.addArtifacts(package_zip(scratch), pyfile=True)
    return pool.submit(_warm_up, session, tag, note)


def warm_note(digest: str) -> str:
    """The session conf in which a run of this code notes that it started the server's
    workers (their parallelism)."""
    return f"fscommit.connect.warm.{digest[:16]}"


def _with_session(remote: str, session_id: str) -> str:
    """``remote`` with ``;session_id=…``, unless the URL already names one."""
    if ";session_id=" in remote:
        return remote
    if "/" not in remote.split("://", 1)[-1]:  # sc://host:port: parameters follow a "/"
        remote += "/"
    return f"{remote};session_id={session_id}"


def _warm_up(session: SparkSession, tag: str, note: str) -> int:
    """Start the server's Python workers with the compactor imported; its parallelism,
    noted in the session as ``note``.

    ``range`` without a partition count has the server's default parallelism: one row per
    partition comes back. Tags are per thread: this one's operation carries the run's too.
    """
    session.addTag(tag)
    rows = session.range(1 << 16).mapInArrow(report_partition, "partition int").collect()
    session.conf.set(note, str(len(rows)))
    return len(rows)


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Without pyspark's warnings that our own error message replaces or that do not
    concern us (its pandas version check; "retries exceeded")."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=FutureWarning, module="pyspark")
        warnings.filterwarnings("ignore", message=r"\[RETRIES_EXCEEDED\]")
        yield


def _reason(exc: BaseException) -> str:
    """The gRPC status detail (or the first line) of a Connect client error."""
    text = str(exc)
    match = re.search(r'details = "([^"]*)"', text)
    return match.group(1) if match else text.strip().splitlines()[0] if text.strip() else repr(exc)


def _redacted(remote: str) -> str:
    """The URL without its ``token=`` parameter, for messages and logs."""
    return re.sub(r"(;token=)[^;]*", r"\1***", remote)
