"""An option's value read alike from a typed value (YAML, JSON, a Param) and from its text
(a CLI flag, Flink's ``WITH (...)``); what a parser cannot take is refused naming the option."""

from __future__ import annotations

from datetime import timedelta

import pytest

from airflow_provider_fscommit.core.config import option_values as v
from airflow_provider_fscommit.core.config.options import PolicyKind
from airflow_provider_fscommit.core.errors import ConfigError


@pytest.mark.parametrize(
    ("parse", "typed", "written", "value"),
    [
        (v.names, ["dt", "hour"], " dt, hour ", ("dt", "hour")),
        (v.boolean, True, " TRUE ", True),
        (v.optional_boolean, None, "", None),
        (v.positive_int, 5, " 5 ", 5),
        (v.probability, 0.05, "0.05", 0.05),
        (v.positive_duration, timedelta(seconds=5), "5 s", timedelta(seconds=5)),
        (v.parameters, ["a", "c=d"], "a;c=d", ("a", "c=d")),
        (v.member(PolicyKind), "metastore", "MetaStore", PolicyKind.METASTORE),
        (v.report_params, {"team": "ads", "env": "prod"}, '{"env":"prod","team":"ads"}', None),
    ],
)
def test_a_typed_value_and_its_text_read_alike(parse, typed, written, value):
    assert parse(typed, "some.option") == parse(written, "some.option")
    if value is not None:
        assert parse(written, "some.option") == value


@pytest.mark.parametrize(
    ("parse", "given", "message"),
    [
        (v.names, "dt,,hour", r"'dt,,hour' has an empty entry; write e.g. 'dt,hour'"),
        (v.names, "dt,dt", r"\['dt', 'dt'\] names an entry twice"),
        (v.boolean, "yes", "expected true or false, got 'yes'"),
        (v.positive_int, True, "expected a positive whole number, got True"),
        (v.positive_int, "-3", "expected a positive whole number, got '-3'"),
        (v.probability, 1, "expected a probability between 0 and 1, got 1"),
        (v.positive_duration, "-5 s", "expected a positive duration such as '5 s', got '-5 s'"),
        (v.choice("a", "b"), "c", "'c' is not one of a, b"),
        (v.report_params, ["team"], r"expected text \(Paimon's form"),
        (v.bloom_filters, "user", r"or use Spark's keys parquet.bloom.filter.enabled#<column>"),
        (v.iceberg_catalog_properties, {"token": "t"}, r"iceberg.catalog.token is a credential"),
    ],
)
def test_a_value_a_parser_cannot_take_is_refused_naming_the_option(parse, given, message):
    with pytest.raises(ConfigError, match=message) as refused:
        parse(given, "some.option")
    if parse is not v.iceberg_catalog_properties:  # names the property itself
        assert str(refused.value).startswith("some.option: ")
