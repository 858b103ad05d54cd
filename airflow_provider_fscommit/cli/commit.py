"""``fscommit commit``: compact, then make the partitions visible with the policy chain."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Sequence

from airflow_provider_fscommit.cli.compact import (
    NOTHING_COMMITTABLE,
    SparkOptions,
    nothing_committable,
    render_summary,
    run_compact,
    submit_compaction,
)
from airflow_provider_fscommit.core.commit.committer import PartitionCommitter
from airflow_provider_fscommit.core.commit.metastore_policy import ClientFactory
from airflow_provider_fscommit.core.commit.policy_factory import create_policies
from airflow_provider_fscommit.core.commit.publisher import CompactionState
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.hooks.metastore import uri_metastore_client


def metastore_client_factory(uri: str | None) -> ClientFactory | None:
    """The metastore clients of ``--metastore-uri`` (None: not given)."""
    return None if uri is None else uri_metastore_client(uri)


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
    ready = [p["partition"] for p in result["partitions"] if p["state"] != CompactionState.FAILED]
    # Airflow's hooks log to stdout; keep stdout for the report (and for --json).
    with contextlib.redirect_stdout(sys.stderr):
        outcomes = [o.to_dict() for o in committer.commit(ready)]
    if as_json:
        print(json.dumps({"compaction": result, "commits": outcomes}, indent=2))
    else:
        print(render_summary(result))
        for outcome in outcomes:
            print(f"{outcome['partition']}: {outcome['state']} ({', '.join(spec.policy_kind)})")
    failed = any(p["state"] == CompactionState.FAILED for p in result["partitions"])
    if failed:
        print("fscommit: error: some partitions failed to compact; see above", file=sys.stderr)
    return 1 if failed else 0
