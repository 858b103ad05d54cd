"""Committing partitions to a real Hive metastore: fscommit's policy chain vs Spark SQL.

A loopback metastore (``fscommit_dev.metastore.server``, Hive 2.3 from
pyspark's jars, Derby) serves both, with a fresh table per run:

* ``policy-chain``: ``PartitionCommitter`` with the ``metastore,success-file`` policies
  and the CLI's client factory (Airflow's ``HiveMetastoreHook``), over partitions whose
  compaction is recorded in the ledger as ``fscommit commit`` finds them after
  ``compact``: ledger reads, one ``get_partitions_by_names``, one ``add_partitions_req``,
  a success file and a ledger record per partition. Each policy is timed too.
  Child: ``python -m bench.metastore TABLE_PATH URI TABLE N``.
* ``spark-sql``: one ``ALTER TABLE … ADD PARTITION … LOCATION`` per partition in one
  Spark application with Hive support (``jobs/hive_alter.py``).

Both are checked: the table has exactly the N partitions afterwards.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from airflow_provider_fscommit.core.commit.policy import PartitionCommitPolicy
from airflow_provider_fscommit.core.publish.published import CommitContext
from bench.measure import check, print_result, run_measured, summarize
from bench.settings import REPO, BenchSettings, python
from bench.spark import spark_env, submit_command

DATABASE = "fscommit_bench"
FULL_PARTITIONS = 1000
METHODS = ("policy-chain", "spark-sql")
_FIRST_HOUR = datetime(2026, 1, 1, tzinfo=UTC)


def partition_values(count: int) -> list[tuple[str, str]]:
    hours = (_FIRST_HOUR + timedelta(hours=i) for i in range(count))
    return [(f"{h:%Y-%m-%d}", f"{h:%H}") for h in hours]


def run_metastore(settings: BenchSettings) -> dict[str, Any]:
    from fscommit_dev.metastore import server
    from fscommit_dev.metastore.client import create_table

    count = settings.scaled(FULL_PARTITIONS, 10)
    state = settings.scratch / "metastore"
    shutil.rmtree(state, ignore_errors=True)
    print(f"metastore: {count} partitions per commit", flush=True)
    running = server.start(state)
    samples: dict[str, list[dict[str, float]]] = {method: [] for method in METHODS}
    try:
        for rep in range(settings.reps):
            for method in METHODS if rep % 2 == 0 else METHODS[::-1]:
                table = f"{method.replace('-', '_')}_{rep}"
                location = state / "tables" / table
                create_table(running, table, location, database=DATABASE)
                log = settings.directory("logs") / f"metastore-{table}.log"
                if method == "policy-chain":
                    command = [python(), "-m", "bench.metastore", str(location), running.uri]
                    command += [table, str(count)]
                    env = os.environ | {
                        "PYTHONPATH": str(REPO),
                        "AIRFLOW_HOME": str(settings.directory("airflow-home")),
                    }
                else:
                    config = {
                        "uri": running.uri,
                        "warehouse": str(state / "warehouse"),
                        "table": f"{DATABASE}.{table}",
                        "location": str(location),
                        "partitions": partition_values(count),
                    }
                    command = submit_command("hive_alter", [json.dumps(config)])
                    env = spark_env()
                measurement = check(run_measured(command, log, env=env), method, log)
                registered = _partition_count(running.port, table)
                if registered != count:
                    raise RuntimeError(f"{method}: {registered} partitions, expected {count}")
                sample = {"whole_s": measurement.wall_s} | measurement.report()
                samples[method].append(sample)
                print(
                    f"  rep {rep + 1}/{settings.reps} {method:<12} {sample['seconds']:.3f} s "
                    f"(whole {measurement.wall_s:.1f} s)",
                    flush=True,
                )
    finally:
        server.stop(state)
    return {
        "partitions": count,
        "methods": {
            method: {key: summarize([s[key] for s in runs]) for key in runs[0]}
            for method, runs in samples.items()
        },
    }


def _partition_count(port: int, table: str) -> int:
    from hmsclient import HMSClient

    with HMSClient(host="127.0.0.1", port=port) as client:
        return len(client.get_partition_names(DATABASE, table, -1))


class _TimedPolicy(PartitionCommitPolicy):
    """A policy of the chain, unchanged, with the time its batch call took."""

    def __init__(self, policy: PartitionCommitPolicy) -> None:
        self.policy = policy
        self.seconds = 0.0

    def commit(self, context: CommitContext) -> None:
        self.commit_all([context])

    def commit_all(self, contexts: Sequence[CommitContext]) -> None:
        started = time.perf_counter()
        self.policy.commit_all(contexts)
        self.seconds += time.perf_counter() - started


def seed_ledger(table_path: str, partitions: list[str]) -> None:
    """Record one published compaction per partition, as the publisher would have: its
    records, and the table state it keeps of them (without it, the commit run measured
    would be the first under the table state's release, which summarizes every partition's
    records once: an upgrade, not a commit)."""
    from airflow_provider_fscommit.core.compaction.planner import (
        plan_partition,
    )
    from airflow_provider_fscommit.core.ledger.ledger import CommitLedger
    from airflow_provider_fscommit.core.spark.staging import StagedFile

    ledger = CommitLedger(table_path)
    for partition in partitions:
        plan = plan_partition(
            partition,
            [StagedFile(f"s3a://lake/staging/{partition}/part-00000.c000.snappy.parquet", 10**5)],
            set(),
            seq=0,
            target_file_size=128 * 2**20,
            auto_compaction=True,
            codec="snappy",
            sink_latest_batch=7,
            watermark_ms=1_800_000_000_000,
            created_ms=1_800_000_000_000,
        )
        ledger.write_plan(plan)
        outputs = [{"name": u.output, "rows": 1000, "bytes": 10**5} for u in plan.units]
        ledger.write_commit(plan, {"seq": 0, "plan_id": plan.plan_id, "outputs": outputs})
    ledger.upgrade()


def main() -> None:
    """``python -m bench.metastore TABLE_PATH URI TABLE N``: commit N partitions, timed."""
    from airflow.providers.apache.hive.hooks.hive import HiveMetastoreHook  # noqa: F401

    from airflow_provider_fscommit.cli.arguments import metastore_client_factory
    from airflow_provider_fscommit.core.commit.committer import PartitionCommitter
    from airflow_provider_fscommit.core.commit.policy_factory import create_policies
    from airflow_provider_fscommit.core.config.table_spec import TableSpec

    table_path, uri, table, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    partitions = [f"dt={dt}/hour={hour}" for dt, hour in partition_values(count)]
    seed_ledger(table_path, partitions)
    spec = TableSpec.from_options(
        {
            "staging_path": f"{table_path}-staging",
            "checkpoint_path": f"{table_path}-checkpoint",
            "partition_keys": "dt,hour",
            "table_path": table_path,
            "policy_kind": "metastore,success-file",
            "metastore_database": DATABASE,
            "metastore_table": table,
        }
    )
    policies = [_TimedPolicy(p) for p in create_policies(spec, metastore_client_factory(uri))]
    started = time.perf_counter()
    outcomes = PartitionCommitter(spec, policies).commit(partitions)
    seconds = time.perf_counter() - started
    states = {o.state for o in outcomes}
    if states != {"committed"}:
        raise SystemExit(f"unexpected commit outcomes {states}")
    print_result(
        {
            "seconds": seconds,
            "metastore_s": policies[0].seconds,
            "success_file_s": policies[1].seconds,
        }
    )


if __name__ == "__main__":
    main()
