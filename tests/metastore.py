"""Test helpers around the real metastore: reader-side SQL and direct Thrift calls."""

from __future__ import annotations

import json
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

from airflow_provider_fscommit.metastore.server import MetastoreServer
from tests.streams import spark_env

ROOT = Path(__file__).resolve().parents[1]


def hive_sql(server: MetastoreServer, *statements: str) -> list[dict]:
    """Rows of the last statement, as a Hive-enabled Spark session reads them."""
    result = subprocess.run(
        [
            sys.executable,
            str(ROOT / "tests" / "hive_sql.py"),
            server.uri,
            str(server.state_dir / "warehouse"),
            json.dumps(list(statements)),
        ],
        capture_output=True,
        text=True,
        env=spark_env(),
        timeout=300,
    )
    lines = [x for x in result.stdout.splitlines() if x.startswith("HIVE_SQL_RESULT ")]
    assert lines, result.stderr[-3000:]
    return json.loads(lines[-1][len("HIVE_SQL_RESULT ") :])


@contextmanager
def thrift_client(server: MetastoreServer):
    """A plain hmsclient connection (for checks; the code under test uses the hook)."""
    import hmsclient

    with hmsclient.HMSClient(host="127.0.0.1", port=server.port) as client:
        yield client
