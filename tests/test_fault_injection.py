"""Fault injection across compaction, publish and commit: SIGKILL, rerun, check.

Each trial kills a run (at a named step boundary, or at a seeded random moment), reruns it
to completion and hands the table to an independent checker that reads only the sink log
(JSON lines), the Parquet files and the success files: no row lost, none duplicated, no
row that the sink log does not commit, every partition of a clean run committed, and the
success files agreeing with the ledger. ``FSCOMMIT_SOAK=1`` runs a longer random loop.
"""

from __future__ import annotations

import json
import os
import random
import signal
import time
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from airflow_provider_fscommit.core.faults import FAULT_POINTS
from airflow_provider_fscommit.core.ledger.ledger import CommitLedger
from fscommit_dev.streams import StreamingTable
from tests.support.fault_worker import run_worker

SOAK = os.environ.get("FSCOMMIT_SOAK") == "1"
RANDOM_TRIALS = 300 if SOAK else 50
TIME_BUDGET_S = 3600 if SOAK else 600


def spec_json(stream: StreamingTable, table: Path) -> str:
    return json.dumps(
        {
            "staging_path": stream.staging,
            "checkpoint_path": stream.checkpoint,
            "table_path": str(table),
            "partition_keys": "dt,hour",
            "timestamp_pattern": "$dt $hour:00:00",
            "delay": "1 h",
            "policy_kind": "success-file",
            "compaction_file_size": "4KB",
        }
    )


def staged_ids(staging: str) -> dict[str, Counter]:
    """Row ids per partition of the files the sink log commits (read independently)."""
    log_dir = Path(staging, "_spark_metadata")
    files: dict[str, bool] = {}
    entries = sorted(
        (p for p in log_dir.iterdir() if not p.name.startswith(".")),
        key=lambda p: int(p.name.split(".")[0]),
    )
    compacts = [p for p in entries if p.name.endswith(".compact")]
    start = int(compacts[-1].name.split(".")[0]) if compacts else -1
    for path in entries:
        if int(path.name.split(".")[0]) < start:
            continue
        for line in path.read_text().splitlines()[1:]:
            entry = json.loads(line)
            files[entry["path"]] = entry["action"] != "delete"
    out: dict[str, Counter] = {}
    for uri, live in files.items():
        if live:
            local = uri.removeprefix("file:")
            partition = "/".join(local.split("/")[-3:-1])
            ids = pq.read_table(local, columns=["id"]).column("id").to_pylist()
            out.setdefault(partition, Counter()).update(ids)
    return out


def check_table(table: Path, staged: dict[str, Counter], complete: set[str]) -> int:
    """The invariants; returns the number of rows checked."""
    published: dict[str, Counter] = {}
    leftovers = []
    for path in table.rglob("*"):
        relative = path.relative_to(table)
        if relative.parts[0] == "_fscommit" or path.is_dir():
            continue
        if path.name.startswith("."):
            leftovers.append(str(relative))
        elif path.suffix == ".parquet":
            partition = "/".join(relative.parts[:-1])
            ids = pq.read_table(path, columns=["id"]).column("id").to_pylist()
            published.setdefault(partition, Counter()).update(ids)
    assert leftovers == [], "hidden files left behind"
    for partition, ids in published.items():
        assert not ids - staged[partition], f"{partition}: rows the sink log does not commit"
        assert max(ids.values()) == 1, f"{partition}: a row published twice"
    ledger = CommitLedger(str(table))
    for partition in complete:
        assert published.get(partition) == staged[partition], f"{partition}: rows lost"
        records = ledger.read(partition)
        assert not records.open_plans and records.policies_current, partition
    for success in table.rglob("_SUCCESS"):
        partition = "/".join(success.relative_to(table).parts[:-1])
        assert ledger.read(partition).policies_current, f"{partition}: _SUCCESS without ledger"
    return sum(sum(c.values()) for c in published.values())


@pytest.mark.slow
def test_sigkill_at_every_step_and_at_random_moments_then_rerun(fault_stream, tmp_path, capsys):
    staged = staged_ids(fault_stream.staging)
    baseline = tmp_path / "baseline"
    started = time.monotonic()
    assert run_worker(spec_json(fault_stream, baseline)) == 0
    clean_run_s = time.monotonic() - started
    complete = {"/".join(p.relative_to(baseline).parts[:-1]) for p in baseline.rglob("_SUCCESS")}
    assert len(complete) >= 4
    check_table(baseline, staged, complete)

    rng = random.Random(20261122)
    trials = [("point", point, None) for point in FAULT_POINTS]
    trials += [("random", None, rng.uniform(0.0, clean_run_s)) for _ in range(RANDOM_TRIALS)]
    counts: Counter = Counter()
    rows = 0
    deadline = time.monotonic() + TIME_BUDGET_S
    for number, (kind, point, delay) in enumerate(trials):
        if kind == "random" and time.monotonic() > deadline:
            break
        table = tmp_path / f"trial-{number}"
        spec = spec_json(fault_stream, table)
        code = run_worker(spec, fault=point, kill_after=delay)
        if kind == "point":
            assert code == -signal.SIGKILL, f"fault point {point} was never reached"
            counts[point] += 1
        else:
            counts["random, killed" if code == -signal.SIGKILL else "random, finished"] += 1
        assert run_worker(spec) == 0, f"trial {number}: the rerun failed"
        rows += check_table(table, staged, complete)
    done = sum(counts.values())
    with capsys.disabled():  # the figures belong in every test report
        print(
            f"\nfault trials: {done} ({dict(sorted(counts.items()))}), kill points "
            f"{len(FAULT_POINTS)}, rows checked {rows}, violations 0"
        )
    assert done >= len(FAULT_POINTS) + 50
