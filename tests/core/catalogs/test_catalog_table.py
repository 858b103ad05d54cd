"""What every catalog table shares: capabilities declared as the spec's validation reads
them, and a completeness that never moves backward in a catalog."""

from __future__ import annotations

import pytest

from airflow_provider_fscommit.core.catalogs.catalog_table import forward
from airflow_provider_fscommit.core.catalogs.glue_table import GlueTable
from airflow_provider_fscommit.core.catalogs.iceberg_table import IcebergTable
from airflow_provider_fscommit.core.catalogs.metastore_table import MetastoreTable
from airflow_provider_fscommit.core.config.catalog_capabilities import (
    CATALOG_CAPABILITIES,
    CatalogCapability,
    catalogs_with,
)
from airflow_provider_fscommit.core.config.options import PolicyKind
from airflow_provider_fscommit.core.status.completeness import Completeness

HOUR_MS = 3_600_000


def test_each_catalog_declares_what_the_capability_table_says_of_it():
    assert (
        {t.kind for t in (MetastoreTable, GlueTable, IcebergTable)}
        == set(CATALOG_CAPABILITIES)
        == {k for k in PolicyKind if k.catalog}
    )
    assert [t.holds_done_partitions for t in (MetastoreTable, GlueTable, IcebergTable)] == [
        True,
        True,
        False,
    ]
    assert catalogs_with(CatalogCapability.DONE_PARTITIONS) == ("metastore", "glue")
    assert catalogs_with(CatalogCapability.COMPLETENESS_WITH_DATA) == ("iceberg",)
    assert catalogs_with(CatalogCapability.LOCATION_SWITCH) == ("metastore", "glue")


def test_a_catalog_whose_flags_disagree_with_the_capability_table_is_refused_when_defined():
    with pytest.raises(TypeError, match="make them agree"):

        class Disagreeing(IcebergTable):
            kind = PolicyKind.ICEBERG
            holds_done_partitions = True


def parameters(watermark_h: int | None, through_h: int | None, at: int) -> dict[str, str]:
    hours = [None if h is None else h * HOUR_MS for h in (watermark_h, through_h)]
    return Completeness(*hours, at).table_parameters()


def test_the_completeness_moves_only_forward_in_a_catalog():
    held = parameters(5, 4, 100)
    assert forward(held, parameters(5, 4, 200), "t") is None  # the same instants: held
    assert forward(held, parameters(3, 2, 200), "t") is None  # earlier: the catalog is ahead
    assert forward(None, parameters(3, 2, 200), "t") == parameters(3, 2, 200)
    # Each value the later of the two: the catalog's watermark, the run's complete-through.
    assert forward(held, parameters(4, 6, 200), "t") == parameters(5, 6, 200)


def test_a_value_keeps_its_spelling_and_one_fscommit_cannot_read_is_replaced():
    spelled = {"fscommit.complete-through": "2026-11-20T03:00:00Z"}
    assert forward({}, spelled, "t") == spelled
    assert forward(spelled, spelled, "t") is None
    assert forward(spelled | {"owner": "ads"}, spelled, "t") is None
    garbled = {"fscommit.complete-through": "yesterday"}
    assert forward(garbled, spelled, "t") == spelled
