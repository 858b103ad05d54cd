"""Spark's per-column bloom filter keys and pyiceberg's per-property catalog keys, pasted
into a spec as they are, folded into the one option each belongs to."""

from __future__ import annotations

import pytest

from airflow_provider_fscommit.core.config.prefixed_keys import (
    fold_bloom_filter_keys,
    fold_prefixed_keys,
)
from airflow_provider_fscommit.core.errors import ConfigError


def test_sparks_bloom_filter_keys_fold_into_one_mapping_of_column_to_distinct_values():
    folded = fold_bloom_filter_keys(
        {
            "format": "parquet",
            "parquet.bloom.filter.enabled#user_id": "true",
            "parquet.bloom.filter.expected.ndv#user_id": "1000000",
            "parquet.bloom.filter.enabled#country": True,
            "parquet.bloom.filter.enabled#off": "false",
            "parquet_bloom_filters": {"session": 50},
        }
    )
    assert folded == {
        "format": "parquet",
        "parquet_bloom_filters": {"session": 50, "user_id": 1_000_000, "country": None},
    }


def test_an_expected_ndv_without_its_bloom_filter_enabled_is_refused():
    with pytest.raises(
        ConfigError,
        match=r"expected.ndv#user_id is set but parquet.bloom.filter.enabled#user_id is not "
        r"true: enable the column's bloom filter, or drop its expected.ndv",
    ):
        fold_bloom_filter_keys(
            {
                "parquet.bloom.filter.enabled#user_id": "false",
                "parquet.bloom.filter.expected.ndv#user_id": 10,
            }
        )


def test_iceberg_catalog_keys_fold_into_the_catalog_properties_each_winning_over_the_mapping():
    folded = fold_prefixed_keys(
        {
            "iceberg_catalog": {"type": "sql", "uri": "sqlite:///a.db"},
            "iceberg.catalog.uri": "sqlite:///b.db",
            "iceberg.catalog.warehouse": "file:///warehouse",
            "parquet.bloom.filter.enabled#k": "true",
        }
    )
    assert folded == {
        "iceberg_catalog": {
            "type": "sql",
            "uri": "sqlite:///b.db",
            "warehouse": "file:///warehouse",
        },
        "parquet_bloom_filters": {"k": None},
    }
    assert fold_prefixed_keys({"delay": "1 h"}) == {"delay": "1 h"}
