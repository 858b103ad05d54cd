"""What each catalog policy's catalog can do, as the spec's validation asks it: a done
partition needs a catalog that holds one, and the refusal names the catalogs that do."""

from __future__ import annotations

import pytest

from airflow_provider_fscommit.core.config.catalog_capabilities import (
    CatalogCapability,
    catalogs_with,
    has,
)
from airflow_provider_fscommit.core.config.options import PolicyKind
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.errors import ConfigError

DONE, WITH_DATA, SWITCH = (
    CatalogCapability.DONE_PARTITIONS,
    CatalogCapability.COMPLETENESS_WITH_DATA,
    CatalogCapability.LOCATION_SWITCH,
)
# Every policy kind and what its catalog can do; a policy without a catalog can do nothing.
EXPECTED = {
    PolicyKind.METASTORE: {DONE, SWITCH},
    PolicyKind.GLUE: {DONE, SWITCH},
    PolicyKind.ICEBERG: {WITH_DATA},
    PolicyKind.MARK_EVENT: set(),
    PolicyKind.DONE_PARTITION: set(),
    PolicyKind.SUCCESS_FILE: set(),
    PolicyKind.HTTP_REPORT: set(),
    PolicyKind.CUSTOM: set(),
}


@pytest.mark.parametrize("kind", list(PolicyKind))
def test_each_policy_kind_has_its_catalogs_capabilities_and_no_other(kind):
    assert {c for c in CatalogCapability if has(kind, c)} == EXPECTED[kind]


def test_catalogs_with_lists_the_catalogs_that_have_a_capability_in_the_options_order():
    assert catalogs_with(DONE) == (PolicyKind.METASTORE, PolicyKind.GLUE)
    assert catalogs_with(WITH_DATA) == (PolicyKind.ICEBERG,)
    assert catalogs_with(SWITCH) == (PolicyKind.METASTORE, PolicyKind.GLUE)


def test_a_done_partition_without_a_catalog_that_holds_one_is_refused_naming_those_that_do():
    options = {
        "staging_path": "/data/staging",
        "checkpoint_path": "/data/ckpt",
        "partition_keys": "dt",
        "metastore_table": "events",
        "sink.partition-commit.policy.kind": "iceberg,done-partition",
    }
    with pytest.raises(
        ConfigError,
        match=r"no catalog that holds done partitions \(Hive partitions: metastore, glue;.*put "
        r"metastore or glue before it, e.g. 'iceberg,metastore,done-partition'",
    ):
        TableSpec.from_options(options)
    options["sink.partition-commit.policy.kind"] = "iceberg,glue,done-partition"
    assert TableSpec.from_options(options).policy_kind[-1] == PolicyKind.DONE_PARTITION
