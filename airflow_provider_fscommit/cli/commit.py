"""``fscommit commit``: compact, then make the partitions visible with the policy chain."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from airflow_provider_fscommit.cli.compact import (
    NOTHING_COMMITTABLE,
    SparkOptions,
    nothing_committable,
    render_summary,
    run_compact,
    submit_compaction,
)
from airflow_provider_fscommit.core.committer import PartitionCommitter
from airflow_provider_fscommit.core.errors import ConfigError
from airflow_provider_fscommit.core.metastore_policy import ClientFactory
from airflow_provider_fscommit.core.policy_factory import create_policies
from airflow_provider_fscommit.core.table_spec import TableSpec


def metastore_client_factory(uri: str | None) -> ClientFactory | None:
    """A factory of clients through Airflow's ``HiveMetastoreHook`` for ``thrift://h:p``."""
    if uri is None:
        return None
    parts = urlsplit(uri)
    if parts.scheme != "thrift" or not parts.hostname or not parts.port:
        raise ConfigError(f"--metastore-uri {uri!r} is not thrift://HOST:PORT")
    os.environ["AIRFLOW_CONN_FSCOMMIT_CLI_METASTORE"] = (
        f"hive-metastore://{parts.hostname}:{parts.port}"
    )

    def client() -> Any:  # hmsclient's client, used as a context manager
        from airflow.providers.apache.hive.hooks.hive import HiveMetastoreHook

        return HiveMetastoreHook(metastore_conn_id="fscommit_cli_metastore").metastore

    return client


def run_commit(
    spec: TableSpec,
    partitions: Sequence[str] | None,
    *,
    metastore_uri: str | None,
    spark: SparkOptions,
    dry_run: bool,
    as_json: bool,
) -> int:
    committer = PartitionCommitter(
        spec, create_policies(spec, metastore_client_factory(metastore_uri))
    )
    if dry_run:
        return run_compact(spec, partitions, spark, dry_run=True, as_json=as_json)
    result = submit_compaction(spec, partitions, spark, show_progress=not as_json)
    if result is None:
        return 1
    if nothing_committable(partitions, result["partitions"]):
        return NOTHING_COMMITTABLE
    ready = [p["partition"] for p in result["partitions"] if p["state"] != "failed"]
    # Airflow's hooks log to stdout; keep stdout for the report (and for --json).
    with contextlib.redirect_stdout(sys.stderr):
        outcomes = [o.to_dict() for o in committer.commit(ready)]
    if as_json:
        print(json.dumps({"compaction": result, "commits": outcomes}, indent=2))
    else:
        print(render_summary(result))
        for outcome in outcomes:
            print(f"{outcome['partition']}: {outcome['state']} ({', '.join(spec.policy_kind)})")
    failed = any(p["state"] == "failed" for p in result["partitions"])
    if failed:
        print("fscommit: error: some partitions failed to compact; see above", file=sys.stderr)
    return 1 if failed else 0
