"""The names the core takes from newer Pythons and pyarrows behave as the originals."""

from __future__ import annotations

import pyarrow as pa
import pytest

from airflow_provider_fscommit.core.compat import StrEnum, concat_batches, strict_zip


class Colour(StrEnum):
    RED = "red"


def test_a_str_enum_member_is_its_value_in_str_format_and_comparison():
    assert str(Colour.RED) == f"{Colour.RED}" == "red"
    assert Colour.RED == "red" and Colour("red") is Colour.RED
    assert f"{Colour.RED:>5}" == "  red"


def test_strict_zip_pairs_items_and_refuses_different_lengths():
    assert list(strict_zip([1, 2], "ab")) == [(1, "a"), (2, "b")]
    with pytest.raises(ValueError):
        list(strict_zip([1, 2], [1]))


def test_concat_batches_keeps_the_rows_in_order_in_one_batch():
    schema = pa.schema([("id", pa.int64()), ("s", pa.string())])
    batches = [
        pa.record_batch([pa.array([i, i + 1]), pa.array([f"{i}", None])], schema=schema)
        for i in range(0, 6, 2)
    ]
    joined = concat_batches(batches)
    assert isinstance(joined, pa.RecordBatch)
    assert joined.schema == schema
    assert joined.column("id").to_pylist() == list(range(6))
    assert joined.column("s").to_pylist() == ["0", None, "2", None, "4", None]
