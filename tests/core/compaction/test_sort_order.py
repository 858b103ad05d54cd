"""The sort order of a compacted partition, with Spark's ORDER BY as the oracle."""

from __future__ import annotations

import math
import random
from decimal import Decimal

import pyarrow as pa
import pytest

from airflow_provider_fscommit.core.compaction.sort_order import SortOrder, quantiles, ranks
from airflow_provider_fscommit.core.errors import ConfigError

SCHEMA = pa.schema(
    [
        ("id", pa.int64()),
        ("country", pa.string()),
        ("score", pa.float64()),
        ("amount", pa.decimal128(12, 3)),
        ("at", pa.timestamp("us", tz="UTC")),
        ("flag", pa.bool_()),
    ]
)


def rows(count: int, seed: int = 7) -> pa.Table:
    """Skewed, repeated, null, NaN and non-ASCII values: what a sort must order as Spark."""
    pick = random.Random(seed)
    countries = ["US", "US", "US", "DE", "fr", "Ünïcode", "", None]
    scores = [None, float("nan"), float("inf"), float("-inf"), -0.0, 0.0, 1.5, -2.25]
    return pa.table(
        {
            "id": list(range(count)),
            "country": [pick.choice(countries) for _ in range(count)],
            "score": [pick.choice([*scores, pick.uniform(-9, 9)]) for _ in range(count)],
            "amount": [
                None if pick.random() < 0.1 else Decimal(pick.randint(-(10**6), 10**6)) / 1000
                for _ in range(count)
            ],
            "at": [
                None if pick.random() < 0.1 else pick.randint(0, 10**12) * 1000
                for _ in range(count)
            ],
            "flag": [pick.choice([True, False, None]) for _ in range(count)],
        },
        schema=SCHEMA,
    )


SPARK_SCHEMA = (
    "id BIGINT, country STRING, score DOUBLE, amount DECIMAL(12,3), at TIMESTAMP, flag BOOLEAN"
)


@pytest.mark.parametrize(
    "columns",
    [("country", "score"), ("score", "id"), ("amount", "at", "flag"), ("flag", "country", "id")],
)
def test_a_linear_order_is_sparks_order_by(spark, columns):
    table = rows(3000)
    frame = spark.createDataFrame(table.to_pylist(), SPARK_SCHEMA).orderBy(*columns)
    as_micros = [f"unix_micros({c}) AS {c}" if c == "at" else c for c in columns]
    expected = [tuple(r) for r in frame.selectExpr(*as_micros).collect()]
    ordered = SortOrder(tuple(columns)).keyed(table).sort(table)
    micros = ordered.set_column(4, "at", ordered.column("at").cast(pa.int64()))
    got = [tuple(r.values()) for r in micros.select(list(columns)).to_pylist()]
    assert _nan_as_text(got) == _nan_as_text(expected)
    assert sorted(ordered.column("id").to_pylist()) == list(range(3000))


def _nan_as_text(keys: list[tuple]) -> list[tuple]:
    """NaN never equals itself; as text it compares."""
    return [tuple("NaN" if v != v else v for v in key) for key in keys]


def test_a_z_order_clusters_every_column_so_a_filter_on_either_meets_few_row_groups():
    side = 256
    grid = pa.table(
        {
            "x": [i % side for i in range(side * side)],
            "y": [i // side for i in range(side * side)],
        }
    )
    shuffled = grid.take(pa.array(random.Random(3).sample(range(side * side), side * side)))
    z_ordered = SortOrder(("x", "y"), z_order=True).keyed(shuffled).sort(shuffled)
    linear = SortOrder(("x", "y")).keyed(shuffled).sort(shuffled)
    assert sorted(z_ordered.to_pylist(), key=lambda r: (r["y"], r["x"])) == grid.to_pylist()
    # As 64 row groups of 1,024 rows: how many a filter on one value could not skip.
    assert max(_met(z_ordered, "x"), _met(z_ordered, "y")) <= 16
    assert _met(linear, "x") == 1 and _met(linear, "y") == 64


def _met(table: pa.Table, column: str) -> int:
    """The most row groups of 1,024 rows whose min..max holds one value of ``column``."""
    groups = [table.slice(start, 1024)[column].to_pylist() for start in range(0, len(table), 1024)]
    bounds = [(min(g), max(g)) for g in groups]
    return max(sum(1 for low, high in bounds if low <= v <= high) for v in range(0, 256, 17))


def test_a_column_the_files_lack_or_a_nested_one_is_refused_naming_it():
    schema = pa.schema([("id", pa.int64()), ("st", pa.struct([("a", pa.int32())]))])
    with pytest.raises(ConfigError) as missing:
        SortOrder(("id", "user_id")).check(schema, "dt=2026-11-20/hour=03")
    assert str(missing.value) == (
        "compaction.sort-by names column 'user_id', which the files of partition "
        "dt=2026-11-20/hour=03 do not have (their columns: id, st); nothing was published. "
        "Fix the table spec"
    )
    with pytest.raises(ConfigError, match=r"compaction.z-order-by names column 'st' of type st"):
        SortOrder(("id", "st"), z_order=True).check(schema, "dt=1")


@pytest.mark.parametrize("column", SCHEMA.names)
def test_a_values_range_number_counts_the_cuts_at_most_it_in_this_order(column):
    """Numbers and times are looked up, other types counted in a sort: one answer."""
    values = rows(3000).column(column).combine_chunks()
    cuts = quantiles(values, 15)

    def key(value):  # NaN after every number and equal to NaN, as Spark orders them
        if isinstance(value, float) and math.isnan(value):
            return (True, 0.0)
        return (False, value)

    expected = [
        0 if v is None else sum(key(c) <= key(v) for c in cuts.to_pylist())
        for v in values.to_pylist()
    ]
    assert ranks(values, cuts).tolist() == expected
    assert ranks(values, cuts[:0]).tolist() == [0] * len(values)
