"""``IcebergTable`` on pyiceberg's SQL catalog on SQLite: the completeness set forward
only in a metadata-only commit, a table that is not there named with the fix, a commit
that loses a race to another writer decided again on a fresh read (or refused when the
table is gone), and appends that merge manifests when the table asks for it. (The
policy's receipts, the types and rows read back: tests/core/commit/test_iceberg_policy.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField

from airflow_provider_fscommit.core.catalogs.iceberg_table import IcebergTable
from airflow_provider_fscommit.core.commit.committer import PartitionCommitter
from airflow_provider_fscommit.core.commit.policy_factory import create_policies
from airflow_provider_fscommit.core.compaction.compactor import compact_units
from airflow_provider_fscommit.core.config.quantities import epoch_ms
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.errors import IcebergError
from airflow_provider_fscommit.core.ledger.ledger import CommitLedger
from airflow_provider_fscommit.core.publish.publisher import CompactionPublisher
from airflow_provider_fscommit.core.status.completeness import Completeness
from fscommit_dev.tables import hourly_table
from tests.support.compaction import publish_and_commit
from tests.support.iceberg import iceberg_ids
from tests.support.iceberg_catalog import catalog, iceberg_spec

PARTITIONS = [f"dt=2026-11-20/hour={h:02d}" for h in range(3)]
HOUR_MS = 3_600_000


def through(hour: int) -> dict[str, str]:
    """The completeness parameters of a table complete through ``hour`` of 2026-11-20."""
    at = epoch_ms(f"2026-11-20T{hour:02d}:00:00+00:00")
    return Completeness(at + HOUR_MS, at, at).table_parameters()


def test_the_completeness_moves_forward_only_in_metadata_only_commits(tmp_path):
    lake = catalog(tmp_path)
    lake.create_namespace("lake")
    lake.create_table("lake.awaited", schema=Schema(NestedField(1, "id", LongType())))
    table = IcebergTable(lambda: catalog(tmp_path), "lake", "awaited")
    spec = TableSpec.from_options(hourly_table(str(tmp_path / "s"), str(tmp_path / "c")))
    assert table.set_table_parameters(spec, through(3))
    assert not table.set_table_parameters(spec, through(3))  # held: nothing committed
    assert not table.set_table_parameters(spec, through(1))  # earlier: the table is ahead
    held = lake.load_table("lake.awaited")
    assert held.metadata.snapshots == []  # properties only: no snapshot for readers to see
    assert len(held.metadata.metadata_log) == 1  # one commit after the table's creation
    assert held.properties["fscommit.complete-through"] == through(3)["fscommit.complete-through"]
    assert table.set_table_parameters(spec, through(5))
    read = table.read_table_parameters()
    assert read["fscommit.complete-through"] == through(5)["fscommit.complete-through"]
    assert len(lake.load_table("lake.awaited").metadata.metadata_log) == 2


def test_a_table_that_is_not_there_is_named_with_the_fix_and_has_nothing_to_drop(tmp_path):
    catalog(tmp_path).create_namespace("lake")
    missing = IcebergTable(lambda: catalog(tmp_path), "lake", "nope")
    with pytest.raises(IcebergError, match=r"lake\.nope does not exist .*iceberg\.create-table"):
        missing.read_table_parameters()
    spec = TableSpec.from_options(hourly_table(str(tmp_path / "s"), str(tmp_path / "c")))
    created_later = IcebergTable(lambda: catalog(tmp_path), "lake", "nope", create_table=True)
    assert created_later.drop_partitions(spec, [("2026-11-20", "00")]) == 0
    assert not catalog(tmp_path).table_exists("lake.nope")  # a drop creates nothing


class Racing:
    """A catalog whose first table load lets another writer (a second pyiceberg client, for
    real) change the table right after it: the policy's commit then meets that change."""

    def __init__(self, directory: Path, change) -> None:
        self.catalog = catalog(directory)
        self.directory = directory
        self.change = change
        self.raced = False

    def __getattr__(self, name: str):
        return getattr(self.catalog, name)

    def load_table(self, identifier):
        table = self.catalog.load_table(identifier)
        if not self.raced:
            self.raced = True
            self.change(catalog(self.directory).load_table(identifier))
        return table


def racing_commit(spec: TableSpec, directory: Path, change) -> Racing:
    """Commit PARTITIONS[1] (the table holds PARTITIONS[0]) while ``change`` races it."""
    racing = Racing(directory, change)
    (policy,) = create_policies(
        TableSpec.from_options(spec.to_dict() | {"iceberg_create_table": False}),
        iceberg_catalog=lambda: racing,
    )
    PartitionCommitter(spec, [policy]).commit(PARTITIONS[1:2])
    return racing


def test_a_commit_that_loses_a_race_decides_again_on_a_fresh_read(compacted_stream, tmp_path):
    """Another writer commits between this run's read of the table and its commit: the
    catalog refuses this run's commit, which is decided again on the table as it is now
    and keeps the other writer's change."""
    spec = iceberg_spec(compacted_stream, tmp_path)
    publish_and_commit(spec, PARTITIONS[:1])  # creates the table
    CompactionPublisher(spec).run(compact_units, PARTITIONS[1:2])
    racing = racing_commit(
        spec,
        tmp_path,
        lambda t: t.transaction().set_properties({"owner": "ads"}).commit_transaction(),
    )
    table = catalog(tmp_path).load_table("lake.events")
    assert racing.raced and table.properties["owner"] == "ads"
    assert len(table.metadata.snapshots) == 2
    assert set(iceberg_ids(table)) == {("2026-11-20", "00"), ("2026-11-20", "01")}


def test_a_table_dropped_by_a_racing_writer_is_refused_and_recorded_nowhere(
    compacted_stream, tmp_path
):
    """The other writer drops the table meanwhile (a change no retry gets past): one
    message naming the table, the ledger records nothing. (A racing writer's schema or
    partitioning change is no refusal: the files are added under the spec they were read
    with, which Iceberg keeps valid.)"""
    spec = iceberg_spec(compacted_stream, tmp_path)
    publish_and_commit(spec, PARTITIONS[:1])
    CompactionPublisher(spec).run(compact_units, PARTITIONS[1:2])
    with pytest.raises(IcebergError) as refused:
        racing_commit(spec, tmp_path, lambda t: catalog(tmp_path).drop_table("lake.events"))
    assert "Iceberg table lake.events" in str(refused.value)
    assert "nothing was recorded as committed" in str(refused.value)
    assert not CommitLedger(spec.table_path).read(PARTITIONS[1]).policies_current
    assert not catalog(tmp_path).table_exists("lake.events")


def test_appends_merge_manifests_when_the_table_asks_for_it(compacted_stream, tmp_path):
    """One commit run per partition: each adds a manifest, unless the table sets
    commit.manifest-merge.enabled (Iceberg's own appends' setting), then they merge."""
    spec = iceberg_spec(compacted_stream, tmp_path)
    publish_and_commit(spec, PARTITIONS[:1])
    lake = catalog(tmp_path)
    lake.load_table("lake.events").transaction().set_properties(
        {"commit.manifest-merge.enabled": "true", "commit.manifest.min-count-to-merge": "2"}
    ).commit_transaction()
    for partition in PARTITIONS[1:]:
        publish_and_commit(spec, [partition])
    table = lake.load_table("lake.events")
    assert len(table.current_snapshot().manifests(table.io)) == 1
    assert len(table.metadata.snapshots) == 3 and len(iceberg_ids(table)) == 3

    unmerged = iceberg_spec(compacted_stream, tmp_path / "unmerged")
    for partition in PARTITIONS:
        publish_and_commit(unmerged, [partition])
    table = catalog(tmp_path / "unmerged").load_table("lake.events")
    assert len(table.current_snapshot().manifests(table.io)) == 3
