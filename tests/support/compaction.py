"""Helpers for the compaction tests: run ``fscommit compact`` for real, check invariants.

The checker is independent of the code under test: it compares what Spark reads from the
published table with what Spark reads from staging (through the sink log), by row id.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

from airflow_provider_fscommit.core.commit.committer import PartitionCommitter
from airflow_provider_fscommit.core.commit.policy_factory import create_policies
from airflow_provider_fscommit.core.compaction.compactor import compact_units
from airflow_provider_fscommit.core.compaction.planner import plan_partition
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.ledger.ledger import CommitLedger
from airflow_provider_fscommit.core.publish.publisher import CompactionPublisher
from airflow_provider_fscommit.core.spark.staging import StagedFile
from airflow_provider_fscommit.core.status.committable import PartitionState, TableStatusReader
from fscommit_dev.tables import hourly_table, table_flags
from tests.support.run_shared import RUN_FOLDER_ENV, run_connect_server

FSCOMMIT = str(Path(sys.executable).parent / "fscommit")
# A spark-submit of its own, for the tests whose subject is the launch.
SUBMIT = ("--spark-master", "local[2]")
# The flags that say how to launch Spark: with one, compact() spark-submits.
LAUNCH_FLAGS = ("--spark-master", "--spark-home", "--spark-submit", "--conf")


def compact_command(
    staging: str,
    checkpoint: str,
    table: str,
    *extra: str,
    target: str = "4KB",
    command: str = "compact",
) -> list[str]:
    """The ``fscommit`` command line of the hourly test table, JSON output."""
    options = hourly_table(staging, checkpoint, table_path=table, compaction_file_size=target)
    return [FSCOMMIT, command, *table_flags(options), "--json", *extra]


def compact(
    staging: str,
    checkpoint: str,
    table: str,
    *extra: str,
    fault: str | None = None,
    target: str = "4KB",
    command: str = "compact",
) -> subprocess.CompletedProcess:
    """Run the compaction application through the CLI in its own process group.

    ``extra`` may name partitions or flags. The units run on the run's Spark Connect
    server unless ``extra`` says how to launch Spark (:data:`SUBMIT`, ``--spark-home``, a
    ``--conf``: the tests of the launch) or a ``fault`` kills the application, whose
    process group a spark-submit is.
    """
    env = dict(os.environ)
    env.pop("FSCOMMIT_FAULT", None)
    if fault:
        env["FSCOMMIT_FAULT"] = fault
    if fault or any(flag in extra for flag in LAUNCH_FLAGS):
        if "--spark-master" not in extra:
            extra = (*SUBMIT, *extra)
    elif "--spark-remote" not in extra:
        server = run_connect_server(Path(os.environ[RUN_FOLDER_ENV]))
        extra = ("--spark-remote", server.url, *extra)
    return subprocess.run(
        compact_command(staging, checkpoint, table, *extra, target=target, command=command),
        env=env,
        start_new_session=True,
        capture_output=True,
        text=True,
        timeout=600,
    )


def commit(
    stream, table: Path, metastore_uri: str, *extra: str, name: str = "events"
) -> subprocess.CompletedProcess:
    """``fscommit commit`` of ``stream``'s hourly table: ``fscommit.<name>``, then ``_SUCCESS``."""
    policies = {
        "sink.partition-commit.policy.kind": "metastore,success-file",
        "metastore_database": "fscommit",
        "metastore_table": name,
    }
    return compact(
        stream.staging,
        stream.checkpoint,
        str(table),
        *table_flags(policies),
        "--metastore-uri",
        metastore_uri,
        *extra,
        command="commit",
    )


def visible_data_files(table: str) -> list[Path]:
    """The files a reader of the published table sees (Spark's hidden-name rule)."""
    root = Path(table)
    if not root.exists():
        return []
    return sorted(
        p
        for p in root.rglob("*.parquet")
        if not any(part.startswith((".", "_")) for part in p.relative_to(root).parts[-1:])
        and "_fscommit" not in p.parts
    )


def ids_by_partition(spark, path: str, files: list[Path] | None = None) -> dict[tuple, Counter]:
    """Row ids per (dt, hour) as Spark reads ``path`` (or just ``files`` under it)."""
    reader = spark.read.option("mergeSchema", "true").option("basePath", path)
    df = reader.parquet(*[str(f) for f in files]) if files is not None else reader.parquet(path)
    out: dict[tuple, Counter] = {}
    for row in df.select("dt", "hour", "id").collect():
        out.setdefault((row["dt"], row["hour"]), Counter())[row["id"]] += 1
    return out


def check_exactly_once(spark, staging: str, table: str, complete: set[tuple] = frozenset()):
    """No duplicate, no orphan row in the published table; ``complete`` partitions equal.

    Returns the number of published rows checked.
    """
    staged = ids_by_partition(spark, staging)
    files = visible_data_files(table)
    published = ids_by_partition(spark, table, files) if files else {}
    for partition, ids in published.items():
        duplicates = [i for i, n in ids.items() if n > 1]
        assert not duplicates, f"{partition}: rows published twice: {duplicates[:5]}"
        unknown = set(ids) - set(staged.get(partition, Counter()))
        assert not unknown, f"{partition}: rows not in the sink log: {sorted(unknown)[:5]}"
    for partition in complete:
        assert published.get(partition, Counter()) == staged[partition], partition
    return sum(sum(ids.values()) for ids in published.values())


def committable(staging: str, checkpoint: str) -> set[tuple]:
    """The (dt, hour) values of the committable partitions of the hourly test table."""
    spec = TableSpec.from_options(hourly_table(staging, checkpoint))
    status = TableStatusReader(spec).read(find_orphans=False)
    return {p.staged.spec.values for p in status.in_state(PartitionState.COMMITTABLE)}


def table_options(stream, table: str) -> dict:
    """Options of the hourly test table of ``stream`` (Flink keys), publishing into ``table``."""
    return hourly_table(
        stream.staging, stream.checkpoint, table_path=table, **{"compaction.file-size": "4KB"}
    )


def clean_args(stream, table: Path, *extra: str) -> list[str]:
    """The ``fscommit clean-staging`` arguments of ``stream``'s hourly table, JSON output."""
    options = table_options(stream, str(table))
    return ["clean-staging", *table_flags(options), "--json", *extra]


def published_ledger(spec: TableSpec, partition: str, rows: int) -> None:
    """Record a published compaction in the ledger, as the compaction job does."""
    ledger = CommitLedger(spec.table_path)
    plan = plan_partition(
        partition,
        [StagedFile("file:///s/x.parquet", 10)],
        set(),
        seq=ledger.read(partition).next_seq,
        target_file_size=100,
        auto_compaction=True,
        codec="snappy",
        sink_latest_batch=3,
        watermark_ms=4,
        created_ms=5,
    )
    ledger.write_plan(plan)
    ledger.record([partition])  # the intent enters the table state first, as in a run
    ledger.write_commit(
        plan, {"seq": plan.seq, "rows": rows, "outputs": [{"name": "o", "rows": rows, "bytes": 50}]}
    )
    ledger.record([partition])
    Path(spec.table_path, partition).mkdir(parents=True, exist_ok=True)


def publish_and_commit(
    spec: TableSpec, partitions: list[str], origin: dict | None = None
) -> PartitionCommitter:
    """Compact ``partitions`` in this process (the core's units, no Spark) and commit them
    with the spec's policy chain, as a run does; the committer, for its completeness."""
    CompactionPublisher(spec).run(compact_units, partitions)
    committer = PartitionCommitter(spec, create_policies(spec))
    committer.commit(partitions, origin=origin)
    return committer
