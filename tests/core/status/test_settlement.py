"""The table state's columns settle each partition as :func:`.work.settled_as` does, and
give each settled partition the state :func:`.table_report.partition_state` gives it.

Every combination of the facts the verdict reads, on the specs that change it (a catalog
that rewrites fragmented partitions, a sorted table, expiration), written as a real Arrow
checkpoint and read back, with entries after it that the columns no longer describe.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pyarrow.fs as pafs
import pytest

from airflow_provider_fscommit.core.compat import strict_zip
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.ledger.table_state import PartitionSummary, StateLog, TableState
from airflow_provider_fscommit.core.status import settlement, table_report
from airflow_provider_fscommit.core.status.settlement import settled_partitions
from airflow_provider_fscommit.core.status.table_report import partition_state
from airflow_provider_fscommit.core.status.work import settled_as
from airflow_provider_fscommit.core.storage.conditional_writes import conditional_store
from fscommit_dev.tables import hourly_table

MB = 1024 * 1024
NOW_MS = 1_800_000_000_000
# Each fact the verdict reads, with values on both sides of every line of its rule.
FACTS = {
    "settled_files": (0, 3),
    "open_plans": (0, 1),
    "policies_current": (False, True),
    "retire_pending": (False, True),
    "expired_at_ms": (None, 5),
    "published_compactions": (None, 1, 2),
    "published_files": (0, 1, 2, 4),
    "published_bytes": (0, 5 * MB),
    "format": (None, "parquet", "json"),
}
STAGED = (3, 4)
CATALOG = {
    "sink.partition-commit.policy.kind": "metastore,success-file",
    "metastore_database": "fscommit",
    "metastore_table": "settled",
}


def spec(**options: str) -> TableSpec:
    return TableSpec.from_options(
        {"compaction.file-size": "1MB"}
        | hourly_table("/staging", "/checkpoint", partition_keys="dt,hour,n", **options)
    )


SPECS = {
    "success-file": spec(),
    "rewrites": spec(**CATALOG),
    "rewrites, sorted": spec(**CATALOG, **{"compaction.sort-by": "s"}),
    # Now is 2027-01-15: the days before 2026-11-26 are past it.
    "expiration": spec(**{"partition.expiration-time": "50 d"}),
}


def hour(n: int) -> str:
    return f"dt=2026-11-{20 + n % 8}/hour={n // 8 % 24:02d}/n={n}"


@pytest.fixture(scope="module")
def read_state(tmp_path_factory) -> tuple[TableState, dict[str, int]]:
    """A checkpoint of every combination (twice: each staged count), an entry after it that
    changes some, and a staged partition without records; the state as a run reads it."""
    combinations = list(itertools.product(*FACTS.values(), STAGED))
    # The facts a settled partition's state reads besides, cycled every 12 rows: each of
    # their combinations occurs within the 144 rows that share an expiry and the facts
    # before it (current policies among them).
    summaries = {
        hour(n): PartitionSummary(
            **dict(strict_zip(FACTS, facts[:-1])),
            policy_commits=n // 2 % 3,
            latest_commit=4 if n // 6 % 2 else None,
        )
        for n, facts in enumerate(combinations)
    }
    counts = {hour(n): facts[-1] for n, facts in enumerate(combinations)}
    root = str(Path(tmp_path_factory.mktemp("settled"), "_fscommit"))
    filesystem = pafs.LocalFileSystem()
    log, store = StateLog(filesystem, root), conditional_store(filesystem, root)
    filesystem.create_dir(log.directory)
    log.create_checkpoint(TableState(0, summaries, 0), store)
    # After the checkpoint: settled ones made unsettled, and unsettled ones settled.
    settled_one = PartitionSummary(settled_files=3, policies_current=True)
    changes = {hour(n): settled_one for n in range(0, len(combinations), 97)}
    log.append(changes, log.read(), store)
    state = log.read()
    assert state is not None and state.columns is not None and state.changed == changes.keys()
    return state, counts | {"dt=2026-12-01/hour=00/n=0": 1}


@pytest.mark.parametrize("name", SPECS)
def test_the_columns_settle_each_partition_as_the_rule_does(name, read_state, monkeypatch):
    state, counts = read_state
    table = SPECS[name]
    expected = {
        path: verdict
        for path, files in counts.items()
        if (verdict := settled_as(table, path, state.get(path), files, NOW_MS)) is not None
    }
    asked = []
    monkeypatch.setattr(
        settlement, "settled_as", lambda *args: asked.append(args[1]) or settled_as(*args)
    )
    assert settled_partitions(table, state, counts, NOW_MS) == expected
    if table.expiration_time is not None:  # the verdict moves with the clock: each is asked
        assert len(asked) == len(counts)
        return
    # The columns answer but for the partitions entries changed since the checkpoint, and
    # settled, fragmented and not settled all occur: each branch of the rule is compared.
    assert sorted(asked) == sorted(state.changed)
    assert {True, False} <= set(expected.values()) and len(expected) < len(counts) - 1


def test_the_columns_give_each_partition_the_state_its_summary_gives(read_state, monkeypatch):
    state, counts = read_state
    paths = sorted(path for path in counts if path in state.partitions)
    expected = [partition_state(None, state.partitions[path]) for path in paths]
    asked = []
    monkeypatch.setattr(
        table_report,
        "partition_state",
        lambda status, summary: asked.append(summary) or partition_state(status, summary),
    )
    assert table_report.settled_states(state, paths) == expected
    # Every state occurs; only the partitions entries changed are asked one at a time.
    assert {s.value for s in expected} == {
        "expired",
        "committable",
        "pending",
        "late-data",
        "re-committed",
        "committed",
    }
    assert len(asked) == len(state.changed)
