"""Keys that carry a name of their own, folded into the one option they belong to.

Spark configures a Parquet bloom filter per column (``parquet.bloom.filter.enabled#<column>``,
``parquet.bloom.filter.expected.ndv#<column>``) and pyiceberg takes its catalog's properties
one by one; written that way in a spec (``iceberg.catalog.<property>``), they are folded into
``parquet_bloom_filters`` and ``iceberg_catalog`` before the options are read, so a spec
pastes Spark's and pyiceberg's keys as they are, and the table spec holds one value each.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from airflow_provider_fscommit.core.config.option_values import (
    BLOOM_ENABLED_PREFIX,
    BLOOM_NDV_PREFIX,
    ICEBERG_CATALOG_PREFIX,
    bloom_filters,
    boolean,
    iceberg_catalog_properties,
    positive_int,
)
from airflow_provider_fscommit.core.config.options import ICEBERG_CATALOG, PARQUET_BLOOM_FILTERS
from airflow_provider_fscommit.core.errors import ConfigError


def fold_bloom_filter_keys(options: Mapping[str, Any]) -> dict[str, Any]:
    """``options`` with Spark's per-column bloom filter keys folded into
    ``parquet_bloom_filters``: ``parquet.bloom.filter.enabled#user_id: true`` and
    ``parquet.bloom.filter.expected.ndv#user_id: 1000000`` become ``{"user_id": 1000000}``.
    """
    enabled: dict[str, bool] = {}
    ndv: dict[str, Any] = {}
    rest: dict[str, Any] = {}
    for key, value in options.items():
        if key.startswith(BLOOM_ENABLED_PREFIX):
            enabled[key.removeprefix(BLOOM_ENABLED_PREFIX)] = boolean(value, key)
        elif key.startswith(BLOOM_NDV_PREFIX):
            ndv[key.removeprefix(BLOOM_NDV_PREFIX)] = positive_int(value, key)
        else:
            rest[key] = value
    if not enabled and not ndv:
        return rest
    orphans = sorted(set(ndv) - {column for column, on in enabled.items() if on})
    if orphans:
        raise ConfigError(
            f"{BLOOM_NDV_PREFIX}{orphans[0]} is set but {BLOOM_ENABLED_PREFIX}{orphans[0]} is "
            "not true: enable the column's bloom filter, or drop its expected.ndv"
        )
    folded = dict(bloom_filters(rest.get(PARQUET_BLOOM_FILTERS.name), PARQUET_BLOOM_FILTERS.name))
    folded.update({column: ndv.get(column) for column, on in enabled.items() if on})
    rest[PARQUET_BLOOM_FILTERS.name] = folded
    return rest


def fold_prefixed_keys(options: Mapping[str, Any]) -> dict[str, Any]:
    """``options`` with the per-column and per-property keys folded into their options:
    Spark's bloom filter keys (:func:`fold_bloom_filter_keys`) and
    ``iceberg.catalog.<property>`` into ``iceberg_catalog``."""
    rest: dict[str, Any] = {}
    catalog: dict[str, Any] = {}
    for key, value in fold_bloom_filter_keys(options).items():
        if key.startswith(ICEBERG_CATALOG_PREFIX):
            catalog[key.removeprefix(ICEBERG_CATALOG_PREFIX)] = value
        else:
            rest[key] = value
    if catalog:
        given = iceberg_catalog_properties(rest.get(ICEBERG_CATALOG.name), ICEBERG_CATALOG.name)
        rest[ICEBERG_CATALOG.name] = given | catalog
    return rest
