"""The compaction hook: submits the compaction application with the Spark provider.

Everything about talking to Spark (connection ``spark_default``, master, deploy mode,
spark-submit command line, secret masking, driver tracking, kill) is the Spark provider's
``SparkSubmitHook``; this hook only adds what is ours: the application, its arguments,
the package shipped with ``--py-files``, and reading the run summary from the ledger.
"""

from __future__ import annotations

import tempfile
import uuid
from collections.abc import Sequence
from typing import Any

from airflow.providers.apache.spark.hooks.spark_submit import SparkSubmitHook
from airflow.sdk import BaseHook

from airflow_provider_fscommit.core.errors import FsCommitError
from airflow_provider_fscommit.core.ledger import CommitLedger
from airflow_provider_fscommit.core.table_spec import TableSpec
from airflow_provider_fscommit.jobs.launch import (
    APPLICATION,
    default_conf,
    default_spark_submit,
    job_arguments,
    package_zip,
    run_here_if_idle,
    submit_env,
)


class CompactionHook(BaseHook):
    """Runs one compaction application for a table and returns its summary.

    :param conn_id: Spark connection (its host is the master, e.g. ``local[*]``).
    :param spark_binary: spark-submit to run; default: pyspark's, next to this Python.
    :param conf: Spark conf; ``spark.pyspark.python`` defaults to this Python.
    :param submit_kwargs: further ``SparkSubmitHook`` arguments (executor settings...).
    """

    def __init__(
        self,
        conn_id: str = "spark_default",
        spark_binary: str | None = None,
        conf: dict[str, Any] | None = None,
        codec: str = "snappy",
        **submit_kwargs: Any,
    ) -> None:
        super().__init__()
        self.conn_id = conn_id
        self.spark_binary = spark_binary or default_spark_submit()
        self.conf = default_conf() | (conf or {})
        self.codec = codec
        self.submit_kwargs = submit_kwargs
        self._submit_hook: SparkSubmitHook | None = None

    def compact(self, spec: TableSpec, partitions: Sequence[str] | None) -> dict[str, Any]:
        """Compact and publish; raises with the job's message when a partition failed."""
        idle = run_here_if_idle(spec, partitions, self.codec)
        if idle is not None:
            self.log.info("nothing to compact: no Spark application submitted")
            return idle
        ledger = CommitLedger(spec.require_table_path())
        run_id = uuid.uuid4().hex
        env = {k: v for k, v in submit_env().items() if k in ("SPARK_HOME", "SPARK_LOCAL_IP")}
        submit_kwargs = dict(self.submit_kwargs)
        env.update(submit_kwargs.pop("env_vars", None) or {})
        with tempfile.TemporaryDirectory(prefix="fscommit-") as scratch:
            self._submit_hook = SparkSubmitHook(
                conn_id=self.conn_id,
                spark_binary=self.spark_binary,
                conf=self.conf,
                py_files=package_zip(scratch),
                name="fscommit-compact",
                application_args=job_arguments(spec, partitions, run_id, self.codec),
                env_vars=env,
                **submit_kwargs,
            )
            try:
                self._submit_hook.submit(APPLICATION)
            except Exception as exc:
                result = ledger.read_run(run_id)
                failed = [p for p in (result or {}).get("partitions", []) if p["error"]]
                if failed:
                    raise FsCommitError(
                        f"compaction failed for {len(failed)} partition(s), first "
                        f"{failed[0]['partition']}: {failed[0]['error']}"
                    ) from exc
                raise
        result = ledger.read_run(run_id)
        if result is None:
            raise FsCommitError(
                "the compaction application finished but left no run summary in the ledger; "
                "see the spark-submit log above"
            )
        return result

    def on_kill(self) -> None:
        if self._submit_hook is not None:
            self._submit_hook.on_kill()
