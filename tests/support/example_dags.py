"""The repository's example DAGs (``dags/``) set up on a test table, for the runs of them.

The DAG tests, the services tests and the status page's browser test all run these DAGs
on a real stream; they read the table's spec from a file, as a deployment does.
"""

from __future__ import annotations

import json
from pathlib import Path

from fscommit_dev.spark_connect import ConnectServer
from fscommit_dev.streams import StreamingTable
from fscommit_dev.tables import hourly_table

DAGS_DIR = Path(__file__).resolve().parents[2] / "dags"
DAY = "dt=2026-11-20"
SECRET = "S3cr3t-Passw0rd-fscommit"
# spark_default as a spark-submit to a local master, for the runs whose subject is the launch.
SUBMIT_CONNECTION = "spark://local%5B2%5D"


def connect_connection(server: ConnectServer) -> str:
    """spark_default as a ``spark_connect`` connection to ``server``: the DAGs' compactions
    run there, without a spark-submit (and its JVM) per task."""
    return json.dumps({"conn_type": "spark_connect", "host": "127.0.0.1", "port": server.port})


def example_airflow_extra_env(
    base: Path, spec: dict, metastore, spark_connection: str = SUBMIT_CONNECTION
) -> dict[str, str]:
    """Settings of an Airflow that runs the repository's ``dags/`` on ``spec``'s table,
    compacting through ``spark_connection`` (``spark_default``)."""
    spec_file = base / "table.json"
    spec_file.write_text(json.dumps(spec))
    return {
        "AIRFLOW__CORE__DAGS_FOLDER": str(DAGS_DIR),
        "FSCOMMIT_TABLE_SPEC": str(spec_file),
        "AIRFLOW_CONN_SPARK_DEFAULT": spark_connection,
        # A password the connection holds but must never show (logs, XCom, events).
        "AIRFLOW_CONN_METASTORE_DEFAULT": (
            f"hive-metastore://fscommit:{SECRET}@127.0.0.1:{metastore.port}"
        ),
        "AIRFLOW__OPENLINEAGE__TRANSPORT": json.dumps(
            {"type": "file", "log_file_path": str(base / "lineage.jsonl"), "append": True}
        ),
    }


def example_spec(stream: StreamingTable, table: Path, metastore_table: str) -> dict:
    """The hourly table of ``stream`` published at ``table``, committed to the metastore."""
    return hourly_table(
        stream.staging,
        stream.checkpoint,
        table_path=str(table),
        metastore_database="fscommit",
        metastore_table=metastore_table,
        **{
            "sink.partition-commit.policy.kind": "metastore,success-file",
            "compaction.file-size": "4KB",
        },
    )
