"""The checks at the end of every soak run; each failure names the partition and the rule.

- ``committed-once``: every partition that was committable before the end (the final
  safe watermark past its time plus the delay) is committed, exactly once: the ledger's
  latest publication has its policies committed, no staged file is published by two
  plans, the metastore lists it at the published location, and the rows of its published
  files, the ledger's row counts and the sink log's rows are the same rows.
- ``not-before-watermark``: every plan was made under a watermark past ``t(P) + delay``.
- ``late-rows-published``: every late row is in its partition's published files.
- ``no-failed-task``: no task instance is left failed after its retries (the REST API).
- ``nothing-lost``: every row the generator wrote is in the sink log.
- ``nothing-orphaned``: no file on the staging disk outside the sink log, every sink-log
  file of a committed partition published, no plan left open, and the published
  directory holds exactly the ledger's outputs.
- ``nothing-early``: no partition that was not committable yet is committed.
- ``loopback-only``: no part of the deployment listens on anything but 127.0.0.1.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pyarrow.parquet as pq

from airflow_provider_fscommit.core.ledger.ledger import CommitLedger
from airflow_provider_fscommit.core.spark.checkpoint import read_checkpoint
from airflow_provider_fscommit.core.spark.staging import StagingTable, is_hidden
from fscommit_dev.airflow_services import Services
from fscommit_dev.listeners import listening_addresses
from fscommit_dev.metastore.client import thrift_client
from fscommit_dev.metastore.server import MetastoreServer
from fscommit_dev.soak.generator import WrittenRow, partition_start_ms
from fscommit_dev.soak.tables import METASTORE_DATABASE, PARTITION_KEYS, SoakTable

HIVE_DEFAULT = "__HIVE_DEFAULT_PARTITION__"


@dataclass(frozen=True)
class Violation:
    rule: str
    table: str
    partition: str  # or the task instance, for no-failed-task
    detail: str

    def __str__(self) -> str:
        return f"{self.rule}: {self.table} {self.partition}: {self.detail}"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _local(uri: str) -> str:
    """A local path of a ``file:`` URI (as the sink log and the metastore name files)."""
    return unquote(urlsplit(uri).path) if uri.startswith("file:") else uri


def _ids(paths: Iterable[str]) -> Counter:
    ids: Counter = Counter()
    for path in paths:
        ids.update(pq.read_table(_local(path), columns=["id"])["id"].to_pylist())
    return ids


def _data_files(directory: Path) -> list[Path]:
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.iterdir() if p.is_file() and not is_hidden(p.name))


def staged_files(table: SoakTable) -> dict[str, list[str]]:
    """Each partition's files (URIs) the sink log has committed."""
    staging = StagingTable(str(table.staging), PARTITION_KEYS, HIVE_DEFAULT)
    snapshot = staging.snapshot()
    paths = {p.path for p in staging.partitions(snapshot)}
    files = staging.committed_files(snapshot, paths)
    return {path: [f.uri for f in staged] for path, staged in files.items()}


def sink_log_ids(files: dict[str, list[str]]) -> dict[str, Counter]:
    """Each partition's rows (ids, counted) as the sink log's committed files hold them."""
    return {path: _ids(uris) for path, uris in files.items()}


def check_table(
    table: SoakTable,
    delay_ms: int,
    rows: list[WrittenRow],
    metastore: MetastoreServer,
) -> tuple[list[Violation], dict[str, Any]]:
    """Every rule of one table but ``no-failed-task``; the violations and what was counted."""
    found: list[Violation] = []

    def fail(rule: str, partition: str, detail: str) -> None:
        found.append(Violation(rule, table.name, partition, detail))

    watermark = read_checkpoint(str(table.checkpoint)).watermark_ms or 0
    files = staged_files(table)
    logged = sink_log_ids(files)
    written: dict[str, Counter] = {}
    for r in rows:
        if r.table == table.name:
            written.setdefault(r.partition, Counter())[r.id] += 1
    for partition, ids in sorted(written.items()):
        lost = ids - logged.get(partition, Counter())
        if lost:
            fail(
                "nothing-lost",
                partition,
                f"{len(lost)} written rows not in the sink log, e.g. ids {sorted(lost)[:5]}",
            )
    with thrift_client(metastore) as client:
        listed = {
            "/".join(f"{k}={v}" for k, v in zip(PARTITION_KEYS, p.values, strict=True)): (
                p.sd.location
            )
            for p in client.get_partitions(METASTORE_DATABASE, table.name, -1)
        }
    ledger = CommitLedger(str(table.table_path))
    committable = [p for p in logged if watermark > partition_start_ms(p) + delay_ms]
    committed = 0
    published_rows = 0
    for partition in sorted(logged):
        records = ledger.read(partition)
        is_committable = partition in committable
        if not is_committable:
            if records.policy_commits or records.commits:
                fail(
                    "nothing-early",
                    partition,
                    "committed, but the final watermark "
                    f"{watermark} is not past its time plus the delay",
                )
            continue
        if not records.policies_current:
            fail(
                "committed-once",
                partition,
                "not committed: its latest publication "
                f"({records.latest_commit}) has no policy commit",
            )
            continue
        committed += 1
        published_by: Counter = Counter(
            f.uri for plan in records.committed_plans for f in plan.staged_inputs
        )
        twice = [uri for uri, n in published_by.items() if n > 1]
        if twice:
            fail("committed-once", partition, f"staged files published twice: {twice[:3]}")
        policy_seqs = Counter(r.get("compaction_seq") for r in records.policy_commits.values())
        again = sorted((seq for seq, n in policy_seqs.items() if n > 1), key=str)
        if again:
            fail("committed-once", partition, f"publications {again} committed more than once")
        for plan in records.plans.values():
            bound = partition_start_ms(partition) + delay_ms
            if plan.watermark_ms is None or plan.watermark_ms <= bound:
                fail(
                    "not-before-watermark",
                    partition,
                    f"plan {plan.seq} made under "
                    f"watermark {plan.watermark_ms}, not past t(P) + delay = {bound}",
                )
        directory = table.table_path / partition / records.directory
        published = _ids(str(p) for p in _data_files(directory))
        published_rows += sum(published.values())
        if published != logged[partition]:
            missing = logged[partition] - published
            extra = published - logged[partition]
            fail(
                "committed-once",
                partition,
                f"published rows differ from the sink log's: "
                f"{sum(missing.values())} missing (e.g. {sorted(missing)[:5]}), "
                f"{sum(extra.values())} extra (e.g. {sorted(extra)[:5]})",
            )
        ledger_rows = sum(
            o.get("rows", 0) for c in records.live_commits for o in c.get("outputs", [])
        )
        if ledger_rows != sum(logged[partition].values()):
            fail(
                "committed-once",
                partition,
                f"the ledger's outputs hold {ledger_rows} rows, "
                f"the sink log {sum(logged[partition].values())}",
            )
        names = {o["name"] for c in records.live_commits for o in c.get("outputs", [])}
        on_disk = {p.name for p in _data_files(directory)}
        if names != on_disk:
            fail(
                "nothing-orphaned",
                partition,
                f"published directory holds {sorted(on_disk - names)} "
                f"beyond the ledger's outputs, lacks {sorted(names - on_disk)}",
            )
        unpublished = set(files[partition]) - set(published_by)
        unpublished -= records.quarantined_inputs
        if unpublished:
            fail(
                "nothing-orphaned",
                partition,
                f"{len(unpublished)} sink-log files never "
                f"published, e.g. {sorted(unpublished)[:2]}",
            )
        if records.open_plans:
            fail(
                "nothing-orphaned",
                partition,
                f"plans left open: {[p.seq for p in records.open_plans]}",
            )
        location = listed.get(partition)
        if location is None:
            fail("committed-once", partition, "the metastore does not list it")
        elif _local(location).rstrip("/") != str(directory).rstrip("/"):
            fail(
                "committed-once",
                partition,
                f"the metastore's location {location} is not the published directory",
            )
    for r in rows:
        if r.table == table.name and r.late and r.partition in committable:
            directory = table.table_path / r.partition / ledger.read(r.partition).directory
            if r.id not in _ids(str(p) for p in _data_files(directory)):
                fail(
                    "late-rows-published",
                    r.partition,
                    f"late row {r.id} (written at {r.written_ms}) is not published",
                )
    stray = _unlogged_staged_files(table)
    if stray:
        fail(
            "nothing-orphaned",
            "(staging)",
            f"{len(stray)} files on disk outside the sink log, e.g. {stray[:2]}",
        )
    counted = {
        "partitions": len(logged),
        "committable": len(committable),
        "committed": committed,
        "published_rows": published_rows,
        "compacted_rows": compacted_rows(ledger),
        "rows": sum(sum(c.values()) for c in logged.values()),
        "late_rows": sum(1 for r in rows if r.table == table.name and r.late),
        "final_watermark_ms": watermark,
    }
    return found, counted


def _unlogged_staged_files(table: SoakTable) -> list[str]:
    """Data files under staging that the sink log does not name (a killed batch's)."""
    staging = StagingTable(str(table.staging), PARTITION_KEYS, HIVE_DEFAULT)
    logged = staging.logged_relative_paths(staging.snapshot())
    on_disk = {
        str(p.relative_to(table.staging))
        for p in table.staging.rglob("*")
        if p.is_file() and not any(is_hidden(part) for part in p.relative_to(table.staging).parts)
    }
    return sorted(on_disk - logged)


def failed_tasks(services: Services) -> list[Violation]:
    """Task instances left failed (or upstream_failed) after their retries, from the REST
    API as an operator's dashboard reads them."""
    found = []
    for state in ("failed", "upstream_failed"):
        response = services.rest(
            "GET", "/dags/~/dagRuns/~/taskInstances", params={"state": state, "limit": 100}
        )
        response.raise_for_status()
        for ti in response.json()["task_instances"]:
            found.append(
                Violation(
                    "no-failed-task",
                    ti["dag_id"],
                    f"{ti['dag_run_id']} {ti['task_id']}",
                    f"{state} after try {ti.get('try_number')}",
                )
            )
    return found


def non_loopback_listeners(groups: dict[str, int]) -> list[Violation]:
    """The listeners of the deployment's process groups (by part) not on 127.0.0.1."""
    found = []
    for part, pgid in sorted(groups.items()):
        for address in sorted(listening_addresses(pgid)):
            if not address.startswith("127.0.0.1:"):
                found.append(Violation("loopback-only", part, address, "listens beyond loopback"))
    return found


def compacted_rows(ledger: CommitLedger) -> int:
    """The rows every committed compaction of the table wrote: the published rows, plus
    those a rewrite wrote again (late rows merged into a fragmented partition's files) and
    the outputs it replaced."""
    return sum(
        output.get("rows", 0)
        for partition in ledger.partitions()
        for commit in ledger.read(partition).commits.values()
        for output in commit.get("outputs", [])
    )
