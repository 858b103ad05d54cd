"""What every Hive-style catalog gets: values, parameters, done partitions, the format check."""

from __future__ import annotations

import pytest

from airflow_provider_fscommit.core.catalogs.hive_partition import (
    catalog_values,
    check_format,
    done_location,
    done_values,
    partition_parameters,
    unchanged,
)
from airflow_provider_fscommit.core.errors import GlueCatalogError
from tests.support.glue import glue_table_spec
from tests.support.metastore_calls import context


def test_a_null_value_is_the_default_partition_name_and_done_suffixes_the_last(tmp_path):
    spec = glue_table_spec(tmp_path / "table", "t")
    assert catalog_values(spec, ["2026-11-20", None]) == [
        "2026-11-20",
        "__HIVE_DEFAULT_PARTITION__",
    ]
    assert done_values(["2026-11-20", "03"]) == ["2026-11-20", "03.done"]


def test_the_done_location_is_hidden_from_readers_of_the_table(tmp_path):
    spec = glue_table_spec(tmp_path / "table", "t")
    location = done_location(context(spec, "2026-11-20", "03"))
    assert location == f"{tmp_path}/table/_fscommit/done/dt=2026-11-20/hour=03.done"
    assert not (tmp_path / "table" / "_fscommit" / "done").exists()  # nothing is written


def test_a_partition_is_unchanged_when_only_its_commit_time_differs(tmp_path):
    spec = glue_table_spec(tmp_path / "table", "t")
    committed = context(spec, "2026-11-20", "03")
    held = partition_parameters(committed) | {"fscommit.committed-at": "1", "owner": "ads"}
    assert unchanged(committed.location, held, committed)
    assert not unchanged(committed.location + "-moved", held, committed)
    assert not unchanged(committed.location, held | {"numRows": "11"}, committed)


@pytest.mark.parametrize(
    ("parameters", "serde", "refused"),
    [
        ({"classification": "orc"}, None, True),  # a Glue crawler's or Athena's table
        ({"spark.sql.sources.provider": "parquet"}, None, False),
        ({}, "org.apache.hadoop.hive.ql.io.orc.OrcSerde", True),
        ({}, "org.apache.hive.hcatalog.data.JsonSerDe", True),
        ({}, "some.custom.Serde", False),  # not known here: not checked
    ],
)
def test_files_the_table_cannot_read_are_refused(tmp_path, parameters, serde, refused):
    spec = glue_table_spec(tmp_path / "table", "t", format="parquet")
    contexts = [context(spec, "2026-11-20", "03")]
    if not refused:
        check_format("db.t", parameters, serde, None, contexts, GlueCatalogError)
        return
    with pytest.raises(GlueCatalogError, match=r"the staged files of dt=2026-11-20/hour=03 are"):
        check_format("db.t", parameters, serde, None, contexts, GlueCatalogError)
