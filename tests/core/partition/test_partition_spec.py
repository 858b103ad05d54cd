"""Partition paths must be byte-identical to Spark's, or published partitions are lost."""

from __future__ import annotations

import random
import re

import pytest

from airflow_provider_fscommit.core.errors import PartitionPathError
from airflow_provider_fscommit.core.partition.partition_spec import (
    DEFAULT_PARTITION_NAME,
    PartitionGlob,
    PartitionSpec,
    escape_path_name,
    unescape_path_name,
)


def _samples() -> list[str]:
    rng = random.Random(7)
    alphabet = [chr(c) for c in range(1, 128)] + list("éü→✓漢字") + ["%2F", "%zz", "%+A", "%-1"]
    out = [chr(c) for c in range(1, 128)]
    out += ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12))) for _ in range(300)]
    return [*out, "a b:c/d%e=f#g", "%", "%4", "%41", "100%", "__HIVE_DEFAULT_PARTITION__"]


def test_escape_and_unescape_match_spark_for_every_ascii_char_and_random_strings(spark):
    utils = spark._jvm.org.apache.spark.sql.catalyst.catalog.ExternalCatalogUtils
    for value in _samples():
        assert escape_path_name(value) == utils.escapePathName(value), repr(value)
        assert unescape_path_name(value) == utils.unescapePathName(value), repr(value)
        assert unescape_path_name(escape_path_name(value)) == value


def test_round_trip_of_a_spec_through_its_path():
    spec = PartitionSpec(("dt", "k"), ("2026-11-20", "a b:c/d%e=f#g"))
    assert spec.path() == "dt=2026-11-20/k=a b%3Ac%2Fd%25e%3Df%23g"
    assert PartitionSpec.parse(spec.path(), ["dt", "k"]) == spec


def test_null_and_empty_values_use_the_default_partition_name():
    spec = PartitionSpec(("dt",), (None,))
    assert spec.path() == f"dt={DEFAULT_PARTITION_NAME}"
    assert PartitionSpec(("dt",), ("",)).path() == f"dt={DEFAULT_PARTITION_NAME}"
    assert PartitionSpec.parse(f"dt={DEFAULT_PARTITION_NAME}", ["dt"]).values == (None,)
    assert PartitionSpec.parse("dt=NULLX", ["dt"], default_name="NULLX").values == (None,)


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("dt=2026-11-20", "has 1 level(s) but the partition keys are ['dt', 'hour']"),
        ("dt=2026-11-20/hour=03/x=1", "has 3 level(s)"),
        ("hour=03/dt=2026-11-20", "is not 'dt=<value>'"),
        ("dt=2026-11-20/03", "is not 'hour=<value>'"),
        ("", "has 0 level(s)"),
    ],
)
def test_paths_that_do_not_fit_the_keys_are_rejected_with_the_reason(path, message):
    with pytest.raises(PartitionPathError, match=re.escape(message)):
        PartitionSpec.parse(path, ["dt", "hour"])


def test_of_checks_the_mapping_names_exactly_the_keys():
    assert PartitionSpec.of(["dt", "hour"], {"hour": "03", "dt": "d"}).values == ("d", "03")
    with pytest.raises(PartitionPathError, match=r"unknown \['day'\].*missing \['dt'\]"):
        PartitionSpec.of(["dt", "hour"], {"day": "d", "hour": "03"})


def test_a_glob_names_every_value_of_its_starred_keys_and_a_real_star_is_a_value():
    keys = ("k", "dt", "hour")
    glob = PartitionGlob.parse("k=*/dt=2026-11-20/hour=01", keys)
    assert glob is not None and glob.wildcards == {"k"}
    for path, matched in [
        ("k=US/dt=2026-11-20/hour=01", True),
        ("k=__HIVE_DEFAULT_PARTITION__/dt=2026-11-20/hour=01", True),
        ("k=US/dt=2026-11-20/hour=02", False),
    ]:
        assert glob.matches(PartitionSpec.parse(path, keys)) is matched, path
    # Spark escapes a '*' in a value: that path names one partition, not a glob.
    assert PartitionGlob.parse(f"k={escape_path_name('*')}/dt=2026-11-20/hour=01", keys) is None
    assert PartitionGlob.parse("k=US/dt=2026-11-20/hour=01", keys) is None
    with pytest.raises(PartitionPathError, match="has 2 level"):
        PartitionGlob.parse("k=*/dt=2026-11-20", keys)
