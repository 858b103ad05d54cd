"""Committing partitions to an Iceberg table (pyiceberg's SQL catalog on SQLite).

The ``iceberg`` policy through ``PartitionCommitter``, over partitions whose compaction
the ledger records (as :mod:`bench.metastore` seeds them) with one real Parquet file each
(Spark's schema in its footer, which the policy maps and reads metrics from):

* ``fresh``: N partitions into a new table, one commit run: seconds, the policy's share,
  and the files the commit wrote under the table's ``metadata/`` (the metastore suite's
  policy chain commits the same N);
* ``young`` / ``old``: one new partition into a table already holding 24 partitions (24
  hourly commits) or 10,000 (100 commits of 100): seconds, and every Iceberg file the run
  opened (metadata JSON, manifest lists, manifests), counted in ``PyArrowFileIO``.

Child: ``python -m bench.iceberg MODE DIRECTORY N`` (see :func:`main`).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from bench.measure import check, print_result, run_measured, summarize
from bench.metastore import partition_values, seed_ledger
from bench.settings import REPO, BenchSettings, python

FULL_PARTITIONS = 1000
# The table a one-partition commit lands on: (partitions held, commits that made them).
AGES = {"young": (24, 24), "old": (10_000, 100)}
_SPARK_SCHEMA = {
    "type": "struct",
    "fields": [
        {"name": "id", "type": "long", "nullable": True, "metadata": {}},
        {"name": "v", "type": "double", "nullable": True, "metadata": {}},
    ],
}


def run_iceberg(settings: BenchSettings) -> dict[str, Any]:
    count = settings.scaled(FULL_PARTITIONS, 10)
    ages = {name: (settings.scaled(held, 24), commits) for name, (held, commits) in AGES.items()}
    root = settings.scratch / "iceberg"
    shutil.rmtree(root, ignore_errors=True)
    print(f"iceberg: {count} partitions per fresh commit; ages {ages}", flush=True)
    env = os.environ | {"PYTHONPATH": str(REPO)}
    for name, (held, commits) in ages.items():  # the aged tables, built once, not timed
        log = settings.directory("logs") / f"iceberg-build-{name}.log"
        command = [python(), "-m", "bench.iceberg", "build", str(root / name), str(held)]
        check(run_measured([*command, str(commits)], log, env=env), f"iceberg {name}", log)
    samples: dict[str, list[dict[str, Any]]] = {"fresh": [], "young": [], "old": []}
    for rep in range(settings.reps):
        for mode in ("fresh", "young", "old") if rep % 2 == 0 else ("old", "young", "fresh"):
            log = settings.directory("logs") / f"iceberg-{mode}-{rep}.log"
            if mode == "fresh":
                command = ["fresh", str(root / f"fresh-{rep}"), str(count)]
            else:
                command = ["age", str(root / mode), str(ages[mode][0] + rep)]
            measurement = check(
                run_measured([python(), "-m", "bench.iceberg", *command], log, env=env),
                f"iceberg {mode}",
                log,
            )
            sample = {"whole_s": measurement.wall_s} | measurement.report()
            samples[mode].append(sample)
            print(
                f"  rep {rep + 1}/{settings.reps} {mode:<6} {sample['seconds']:.3f} s", flush=True
            )
    return {
        "partitions": count,
        "ages": {name: {"partitions": h, "commits": c} for name, (h, c) in ages.items()},
        "modes": {
            mode: {
                key: summarize([s[key] for s in runs])
                if isinstance(runs[0][key], int | float)
                else runs[0][key]
                for key in runs[0]
            }
            for mode, runs in samples.items()
        },
    }


def _spec(directory: Path) -> Any:
    from airflow_provider_fscommit.core.config.table_spec import TableSpec

    return TableSpec.from_options(
        {
            "staging_path": f"{directory}/staging",
            "checkpoint_path": f"{directory}/checkpoint",
            "partition_keys": "dt,hour",
            "table_path": f"{directory}/table",
            "policy_kind": "iceberg",
            "metastore_database": "bench",
            "metastore_table": "events",
            "iceberg.create-table": "true",
            "iceberg.catalog.type": "sql",
            "iceberg.catalog.uri": f"sqlite:///{directory}/catalog.db",
            "iceberg.catalog.warehouse": f"file://{directory}/warehouse",
        }
    )


def _publish(table_path: str, partitions: list[str]) -> None:
    """The ledger's published compaction of each partition, and its one Parquet file."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from airflow_provider_fscommit.core.formats.spark_metadata import SPARK_SCHEMA_KEY
    from airflow_provider_fscommit.core.ledger.ledger import CommitLedger

    seed_ledger(table_path, partitions)
    ledger = CommitLedger(table_path)
    rows = pa.table({"id": pa.array(range(1000), pa.int64()), "v": pa.array([0.5] * 1000)})
    rows = rows.replace_schema_metadata({SPARK_SCHEMA_KEY: json.dumps(_SPARK_SCHEMA)})
    for partition in partitions:
        for record in ledger.read(partition).live_commits:
            for output in record["outputs"]:
                path = Path(table_path, partition, output["name"])
                path.parent.mkdir(parents=True, exist_ok=True)
                pq.write_table(rows, path)


def _commit(directory: Path, partitions: list[str]) -> tuple[float, float]:
    """One commit run of ``partitions``: its seconds and the policy's."""
    from airflow_provider_fscommit.core.commit.committer import PartitionCommitter
    from airflow_provider_fscommit.core.commit.policy_factory import create_policies

    spec = _spec(directory)
    _publish(spec.require_table_path(), partitions)
    (policy,) = create_policies(spec)
    commit_all = policy.commit_all
    spent = [0.0]

    def timed(contexts: Any, *rest: Any) -> Any:
        started = time.perf_counter()
        try:
            return commit_all(contexts, *rest)
        finally:
            spent[0] += time.perf_counter() - started

    policy.commit_all = timed  # type: ignore[method-assign]
    started = time.perf_counter()
    outcomes = PartitionCommitter(spec, [policy]).commit(partitions)
    seconds = time.perf_counter() - started
    states = {o.state for o in outcomes}
    if states != {"committed"}:
        raise SystemExit(f"unexpected commit outcomes {states}")
    return seconds, spent[0]


def _opened() -> Counter[str]:
    """Count every file pyiceberg opens from now on, by kind (read or written)."""
    from pyiceberg.io.pyarrow import PyArrowFileIO

    opened: Counter[str] = Counter()
    new_input = PyArrowFileIO.new_input

    def counted(self: PyArrowFileIO, location: str) -> Any:
        name = location.rsplit("/", 1)[-1]
        kind = (
            "metadata JSON"
            if name.endswith(".metadata.json")
            else "manifest list"
            if name.startswith("snap-")
            else "manifest"
            if name.endswith(".avro")
            else "data file"
        )
        opened[kind] += 1
        opened[f"{kind} bytes"] += os.path.getsize(location.removeprefix("file://"))
        return new_input(self, location)

    PyArrowFileIO.new_input = counted  # type: ignore[method-assign]
    return opened


def _hours(first: int, count: int) -> list[str]:
    values = partition_values(first + count)[first:]
    return [f"dt={dt}/hour={hour}" for dt, hour in values]


def main() -> None:
    """``build DIR N COMMITS``: a table of N partitions made by COMMITS commit runs;
    ``fresh DIR N``: commit N partitions to a new table; ``age DIR K``: commit partition K
    (the next hour) to the table ``build`` made."""
    # Imported before the clock, as the metastore suite imports the Hive hook: what an
    # Airflow worker's process pays once (about 2.4 s here), not per commit.
    import pyiceberg.catalog.sql
    import pyiceberg.io.pyarrow
    import pyiceberg.table  # noqa: F401

    mode, directory, number = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
    if mode == "build":
        commits = int(sys.argv[4])
        step = number // commits
        for first in range(0, number, step):
            _commit(directory, _hours(first, min(step, number - first)))
        return
    if mode == "fresh":
        seconds, policy_s = _commit(directory, _hours(0, number))
        metadata = [p for p in Path(directory, "warehouse").rglob("*") if p.is_file()]
        print_result(
            {
                "seconds": seconds,
                "policy_s": policy_s,
                "metadata_files": len([p for p in metadata if p.parent.name == "metadata"]),
            }
        )
        return
    opened = _opened()
    seconds, policy_s = _commit(directory, _hours(number, 1))
    print_result({"seconds": seconds, "policy_s": policy_s, "opened": dict(opened)})


if __name__ == "__main__":
    main()
