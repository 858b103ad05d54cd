"""The compaction hook: submits the compaction application with the Spark provider.

Everything about talking to Spark (connection ``spark_default``, master, deploy mode,
spark-submit command line, secret masking, driver tracking, kill) is the Spark provider's
``SparkSubmitHook``; this hook only adds what is ours: the application, its arguments,
the package shipped with ``--py-files``, and the S3 identity of an ``aws_conn_id``. When
to submit at all, and what the run's summary is, is the
:class:`~airflow_provider_fscommit.jobs.runner.CompactionRunner`'s, as for the CLI: this
hook is its :class:`~airflow_provider_fscommit.jobs.runner.Launcher`. With a
``spark_connect`` connection nothing is submitted: the Spark provider's
``SparkConnectHook`` gives the server's URL and the units run there.

That identity reaches the application through spark-submit's process environment (the
standard ``AWS_*`` variables), never its command line: with a local or standalone master
in client mode the driver inherits it and hands it to its tasks in memory. With YARN or
Kubernetes the Spark provider would copy environment variables onto the command line, so
there the application uses the cluster's own identity (instance profile, IRSA,
``spark-defaults``) and only the endpoint and region are passed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from airflow.providers.apache.spark.hooks.spark_connect import SparkConnectHook
from airflow.providers.apache.spark.hooks.spark_submit import SparkSubmitHook
from airflow.sdk import Connection

from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.errors import FsCommitError
from airflow_provider_fscommit.core.publish.publisher import (
    CompactionPreview,
    CompactionPublisher,
)
from airflow_provider_fscommit.core.storage.object_store import S3Settings
from airflow_provider_fscommit.hooks.aws import AwsStorageHook
from airflow_provider_fscommit.jobs.launch import CompactionSubmission, SparkInstallation
from airflow_provider_fscommit.jobs.runner import CompactionRunner, Launch
from airflow_provider_fscommit.version_compat import BaseHook


class CompactionHook(BaseHook):
    """Runs one compaction application for a table and returns its summary.

    :param conn_id: Spark connection (its host is the master, e.g. ``local[*]``), or a
        Spark Connect connection (type ``spark_connect``): then the units run on that server.
    :param spark_binary: spark-submit to run; default: the connection's ``spark-binary``,
        else ``$SPARK_HOME/bin/spark-submit``, else the ``spark`` extra's pyspark, else PATH's.
    :param conf: Spark conf; ``spark.pyspark.python`` (the cluster's Python, which runs the
        driver too unless ``spark.pyspark.driver.python`` says otherwise) defaults to
        ``$PYSPARK_PYTHON``, else this Python.
    :param aws_conn_id: AWS connection for S3 tables (None: the standard AWS chain).
    :param submit_kwargs: further ``SparkSubmitHook`` arguments (executor settings...).

    Its connection is the Spark provider's ``spark`` type (or ``spark_connect``).
    """

    conn_name_attr = "conn_id"
    default_conn_name = "spark_default"
    conn_type = "spark"
    hook_name = "Spark (partition compaction)"

    def __init__(
        self,
        conn_id: str = default_conn_name,
        spark_binary: str | None = None,
        conf: dict[str, Any] | None = None,
        codec: str = "snappy",
        aws_conn_id: str | None = None,
        **submit_kwargs: Any,
    ) -> None:
        super().__init__()
        self.conn_id = conn_id
        self.aws_conn_id = aws_conn_id
        self.spark_binary = spark_binary
        self.conf = dict(conf or {})
        self.codec = codec
        self.submit_kwargs = submit_kwargs
        self._submit_hook: SparkSubmitHook | None = None
        self._runner: CompactionRunner | None = None
        self._s3: S3Settings | None = None  # of aws_conn_id, while a run goes
        self._spark: SparkInstallation | None = None

    def compact(self, spec: TableSpec, partitions: Sequence[str] | None) -> dict[str, Any]:
        """Compact and publish; raises with the job's message when a partition failed."""
        remote = None
        if self._conn_type() == SparkConnectHook.conn_type:
            remote = SparkConnectHook(self.conn_id).get_connection_url()
        self._runner = CompactionRunner(
            spec, partitions, codec=self.codec, conf=self.conf, remote=remote
        )
        try:
            with AwsStorageHook(self.aws_conn_id).storage() as self._s3:
                summary = self._runner.run(self)
        finally:
            self._runner = None
        failure = summary.failure()
        if failure is not None:
            raise FsCommitError(failure)
        return summary.to_dict()

    def preview(self, spec: TableSpec, partitions: Sequence[str] | None) -> CompactionPreview:
        """What :meth:`compact` would do now (the operator's dry run); writes nothing."""
        with AwsStorageHook(self.aws_conn_id).storage():
            return CompactionPublisher(spec, self.codec).preview(partitions)

    def launching(self, how: Launch) -> None:
        if how == Launch.HERE:
            self.log.info("nothing to compact: no Spark application submitted")
        elif how == Launch.CONNECT:
            self.log.info("compaction units run on the Spark Connect server of %s", self.conn_id)

    def installation(self) -> SparkInstallation:
        self._spark = self._spark_installation()
        return self._spark

    def environment(self) -> dict[str, str]:
        return self._aws_env(self._s3) | (self.submit_kwargs.get("env_vars") or {})

    def driver_here(self) -> bool:
        return self._environment_reaches_driver()

    def submit(self, submission: CompactionSubmission) -> None:
        """The Spark provider's hook logs the application's output: the runner reads its
        summary from the ledger."""
        assert self._spark is not None  # the runner asked for the installation first
        submit_kwargs = {k: v for k, v in self.submit_kwargs.items() if k != "env_vars"}
        self._submit_hook = self._spark_submit_hook(submission, self._spark, submit_kwargs)
        self._submit_hook.submit(submission.application)

    def _spark_installation(self) -> SparkInstallation:
        """The Spark to submit with: this hook's ``spark_binary``, else the connection's
        ``spark-binary`` extra (as the Spark provider reads it), else the located one."""
        connection = self._connection()
        named = connection.extra_dejson.get("spark-binary") if connection else None
        return SparkInstallation.locate(spark_submit=self.spark_binary or named)

    def _spark_submit_hook(
        self,
        submission: CompactionSubmission,
        spark: SparkInstallation,
        submit_kwargs: dict[str, Any],
    ) -> SparkSubmitHook:
        """The Spark provider's hook for ``submission``: it builds the command line from the
        connection (master, deploy mode, secrets masked) and tracks the driver."""
        return SparkSubmitHook(
            conn_id=self.conn_id,
            spark_binary=spark.spark_submit,
            conf=submission.conf,
            py_files=submission.py_files,
            name=submission.name,
            application_args=list(submission.application_args),
            env_vars=submission.env,
            **submit_kwargs,
        )

    def _connection(self) -> Connection | None:
        try:
            return self.get_connection(self.conn_id)
        except Exception:  # the Spark provider falls back to YARN without a connection
            return None

    def _conn_type(self) -> str | None:
        connection = self._connection()
        return connection.conn_type if connection else None

    def _aws_env(self, s3: S3Settings | None) -> dict[str, str]:
        """The connection's S3 settings as the standard AWS variables for spark-submit."""
        if s3 is None:
            return {}
        env = {"AWS_ENDPOINT_URL": s3.endpoint_url or "", "AWS_REGION": s3.region or ""}
        env = {k: v for k, v in env.items() if v}
        if s3.credentials is None:
            return env
        if not self._environment_reaches_driver():
            self.log.info(
                "the Spark application on this master uses the cluster's own AWS identity "
                "(instance profile, IRSA or spark-defaults); the credentials of %s serve "
                "this task only",
                self.aws_conn_id,
            )
            return env
        env["AWS_ACCESS_KEY_ID"] = s3.credentials.access_key
        env["AWS_SECRET_ACCESS_KEY"] = s3.credentials.secret_key
        if s3.credentials.session_token:
            env["AWS_SESSION_TOKEN"] = s3.credentials.session_token
        return env

    def _environment_reaches_driver(self) -> bool:
        """Whether spark-submit's environment reaches the driver off the command line.

        True for local and standalone masters in client mode; the Spark provider turns
        ``env_vars`` into ``--conf`` arguments for YARN and Kubernetes.
        """
        connection = self._connection()
        if connection is None:
            return False
        master = connection.host or ""
        deploy_mode = self.submit_kwargs.get("deploy_mode") or connection.extra_dejson.get(
            "deploy-mode"
        )
        return "yarn" not in master and "k8s" not in master and deploy_mode != "cluster"

    def on_kill(self) -> None:
        if self._submit_hook is not None:
            self._submit_hook.on_kill()
        if self._runner is not None:
            self._runner.interrupt()
