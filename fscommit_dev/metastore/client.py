"""The tests' and the benchmarks' side of the loopback metastore: reader-side SQL (Spark
through Hive, in a child process that serves a server's requests) and direct Thrift calls."""

from __future__ import annotations

import json
import select
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from airflow_provider_fscommit.core.commit.committer import PartitionCommitter
from airflow_provider_fscommit.core.commit.policy_factory import create_policies
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.hooks.metastore import connection_metastore_client
from fscommit_dev.metastore.server import MetastoreServer
from fscommit_dev.streams import spark_env


def hive_sql(server: MetastoreServer, *statements: str, timeout: float = 300) -> list[dict]:
    """Rows of the last statement, as a Hive-enabled Spark session reads them (a new
    session of the server's reader, :func:`_reader`)."""
    reader = _reader(server)
    reader.stdin.write(json.dumps(list(statements)) + "\n")
    reader.stdin.flush()
    if not select.select([reader.stdout], [], [], timeout)[0]:
        raise AssertionError(f"no answer in {timeout} s to {statements}; {_reader_log(server)}")
    answer = reader.stdout.readline()
    kind, _, payload = answer.partition(" ")
    if kind != "HIVE_SQL_RESULT":
        error = json.loads(payload) if kind == "HIVE_SQL_ERROR" else "the reader exited"
        raise AssertionError(f"{statements}: {error}; {_reader_log(server)}")
    return json.loads(payload)


_READERS: dict[Path, subprocess.Popen] = {}


def _reader(server: MetastoreServer) -> subprocess.Popen:
    """The child process that runs :func:`hive_sql`'s requests on ``server`` (started on
    the first one): it ends with this process, whose end closes its stdin."""
    reader = _READERS.get(server.state_dir)
    if reader is None or reader.poll() is not None:
        with open(server.state_dir / "hive-sql.log", "ab") as log:
            reader = subprocess.Popen(
                [
                    sys.executable,
                    str(Path(__file__).with_name("hive_sql.py")),
                    server.uri,
                    str(server.state_dir / "warehouse"),
                ],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                text=True,
                env=spark_env(),
            )
        _READERS[server.state_dir] = reader
    return reader


def _reader_log(server: MetastoreServer) -> str:
    log = server.state_dir / "hive-sql.log"
    return f"its log ({log}) ends:\n{log.read_text(errors='replace')[-3000:]}"


@contextmanager
def thrift_client(server: MetastoreServer):
    """A plain hmsclient connection (for checks; the code under test uses the hook)."""
    import hmsclient

    with hmsclient.HMSClient(host="127.0.0.1", port=server.port) as client:
        yield client


def create_table(
    server: MetastoreServer,
    name: str,
    location: Path,
    keys: tuple[str, ...] = ("dt", "hour"),
    database: str = "fscommit",
) -> None:
    """An external Parquet table of one ``id bigint`` column partitioned by ``keys``.

    The tests and the metastore benchmark create their tables with it; the database is
    created with the first table.
    """
    from hmsclient.genthrift.hive_metastore import ttypes

    with thrift_client(server) as client:
        if database not in client.get_all_databases():
            client.create_database(ttypes.Database(name=database, locationUri=str(location)))
        sd = ttypes.StorageDescriptor(
            cols=[ttypes.FieldSchema("id", "bigint", None)],
            location=str(location),
            inputFormat="org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
            outputFormat="org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
            serdeInfo=ttypes.SerDeInfo(
                serializationLib="org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe",
                parameters={},
            ),
        )
        client.create_table(
            ttypes.Table(
                tableName=name,
                dbName=database,
                sd=sd,
                tableType="EXTERNAL_TABLE",
                partitionKeys=[ttypes.FieldSchema(k, "string", None) for k in keys],
                parameters={"EXTERNAL": "TRUE"},
            )
        )


def metastore_committer(spec: TableSpec) -> PartitionCommitter:
    """The spec's policy chain through the metastore_default connection, as operators build it."""
    return PartitionCommitter(
        spec, create_policies(spec, connection_metastore_client("metastore_default"))
    )


def metastore_table_spec(table: Path, name: str, **extra: Any) -> TableSpec:
    """The spec of an hourly table published at ``table`` and named ``fscommit.<name>``.

    Its staging and checkpoint paths sit beside ``table`` (and need not exist): the
    policy and expiration tests publish through the ledger, without a stream.
    """
    return TableSpec.from_options(
        {
            "staging_path": str(table.parent / "staging"),
            "checkpoint_path": str(table.parent / "c"),
            "partition_keys": "dt,hour",
            "table_path": str(table),
            "metastore_database": "fscommit",
            "metastore_table": name,
        }
        | extra
    )
