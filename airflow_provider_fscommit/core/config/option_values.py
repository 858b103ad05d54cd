"""How an option's value is read: one parser per kind of value, each naming the option.

A value comes from a YAML or JSON spec, a CLI flag, a DAG Param or Flink's ``WITH (...)``
clause, so each parser takes both a typed value and its text (``'true'``, ``'a,b'``,
``'5 s'``) and reads them alike, as Flink reads its options' strings. A value it cannot
take is refused with the option's key and what was expected, before anything runs.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from datetime import timedelta
from typing import Any

from airflow_provider_fscommit.core.compat import StrEnum
from airflow_provider_fscommit.core.config.quantities import parse_duration
from airflow_provider_fscommit.core.config.secret_keys import holds_secret
from airflow_provider_fscommit.core.errors import ConfigError, shown

# Spark's (parquet-mr's) per-column bloom filter keys: '<prefix>#<column>'.
BLOOM_ENABLED_PREFIX = "parquet.bloom.filter.enabled#"
BLOOM_NDV_PREFIX = "parquet.bloom.filter.expected.ndv#"
# pyiceberg's catalog properties (``load_catalog``), one table option each:
# 'iceberg.catalog.<property>'.
ICEBERG_CATALOG_PREFIX = "iceberg.catalog."


def text(value: Any, option: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{option}: expected a non-empty string, got {value!r}")
    return value.strip()


def optional_text(value: Any, option: str) -> str | None:
    return None if value is None or value == "" else text(value, option)


def names(value: Any, option: str) -> tuple[str, ...]:
    """A list given as ``'a,b'`` (Flink's form) or as a sequence of strings."""
    if isinstance(value, str):
        items: Any = value.split(",") if value.strip() else []
        if any(not part.strip() for part in items):
            raise ConfigError(f"{option}: {value!r} has an empty entry; write e.g. 'dt,hour'")
    elif isinstance(value, (list, tuple)):
        items = value
    else:
        raise ConfigError(f"{option}: expected a comma-separated list, got {value!r}")
    entries = tuple(text(item, option) for item in items)
    if len(set(entries)) != len(entries):
        raise ConfigError(f"{option}: {list(entries)} names an entry twice")
    return entries


def parameters(value: Any, option: str) -> tuple[str, ...]:
    """Flink's ``policy.class.parameters``: ``;``-separated strings, kept verbatim."""
    if value is None or value == "":
        return ()
    if isinstance(value, str):
        return tuple(value.split(";"))
    if isinstance(value, Sequence) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise ConfigError(f"{option}: expected ';'-separated parameters, got {value!r}")


def boolean(value: Any, option: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise ConfigError(f"{option}: expected true or false, got {value!r}")


def optional_boolean(value: Any, option: str) -> bool | None:
    """Unset (None) is an answer of its own: the files are looked at instead."""
    return None if value is None or value == "" else boolean(value, option)


def choice(*allowed: str) -> Callable[[Any, str], str]:
    """One of ``allowed`` in any case, as Flink reads its enum options; kept lower-case."""

    def parse(value: Any, option: str) -> str:
        given = text(value, option)
        if given.lower() not in allowed:
            raise ConfigError(f"{option}: {given!r} is not one of {', '.join(allowed)}")
        return given.lower()

    return parse


def positive_int(value: Any, option: str) -> int:
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ConfigError(f"{option}: expected a positive whole number, got {value!r}")
    return value


def probability(value: Any, option: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = -1.0
    if isinstance(value, bool) or not 0.0 < number < 1.0:
        raise ConfigError(f"{option}: expected a probability between 0 and 1, got {value!r}")
    return number


def member(kinds: type[StrEnum]) -> Callable[[Any, str], Any]:
    """A member of ``kinds`` by its value, in any case, as Flink reads its enum options."""
    parse_value = choice(*(kind.value for kind in kinds))
    return lambda value, option: kinds(parse_value(value, option))


def report_params(value: Any, option: str) -> str | None:
    """Paimon's ``params``: any text, kept as written (Paimon sends it verbatim).

    A mapping (a YAML spec or a Param that wrote an object) becomes its compact JSON text,
    so that a spec stays plain JSON values and pastes between Paimon, YAML and Params.
    """
    if value is None or value == "" or value == {}:
        return None
    if isinstance(value, str):
        return value
    if not isinstance(value, Mapping):
        raise ConfigError(
            f"{option}: expected text (Paimon's form, e.g. 'team=ads') or a JSON object, "
            f"got {shown(value)}"
        )
    try:
        return json.dumps(dict(value), sort_keys=True, separators=(",", ":"))
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{option}: {shown(value)} cannot be sent as JSON ({exc})") from None


def positive_duration(value: Any, option: str) -> timedelta:
    refused = ConfigError(f"{option}: expected a positive duration such as '5 s', got {value!r}")
    if isinstance(value, str) and value.strip().startswith("-"):
        raise refused  # a minus sign, not an unknown unit
    duration = parse_duration(value, option)
    if duration <= timedelta(0):
        raise refused
    return duration


def optional_positive_duration(value: Any, option: str) -> timedelta | None:
    return None if value in (None, "") else positive_duration(value, option)


def bloom_filters(value: Any, option: str) -> dict[str, int | None]:
    """Columns with a Parquet bloom filter, each with its expected distinct values (None:
    the partition's rows); :func:`.prefixed_keys.fold_bloom_filter_keys` builds it from
    Spark's keys."""
    if value is None or value == "":
        return {}
    if not isinstance(value, Mapping):
        raise ConfigError(
            f"{option}: expected a mapping of column to expected distinct values, got "
            f"{value!r}; or use Spark's keys {BLOOM_ENABLED_PREFIX}<column>: true"
        )
    return {
        text(column, option): None if ndv is None else positive_int(ndv, option)
        for column, ndv in value.items()
    }


def iceberg_catalog_properties(value: Any, option: str) -> dict[str, str]:
    """pyiceberg catalog properties; a credential among them is refused (it would be
    stored in the spec, the DAG's serialized form and the operators' templates)."""
    if value is None or value == "":
        return {}
    if not isinstance(value, Mapping):
        raise ConfigError(
            f"{option}: expected a mapping of pyiceberg catalog property to value, got "
            f"{value!r}; or use the keys {ICEBERG_CATALOG_PREFIX}<property>"
        )
    properties = {text(k, option): text(str(v), option) for k, v in value.items()}
    secret = sorted(k for k in properties if holds_secret(k))
    if secret:
        raise ConfigError(
            f"{ICEBERG_CATALOG_PREFIX}{secret[0]} is a credential, which a table spec must not "
            "hold; give it through the catalog's Airflow connection (aws_conn_id for Glue, "
            "metastore_conn_id for Hive, the iceberg connection for REST) or the catalog's "
            "own environment (PYICEBERG_CATALOG__<NAME>__…)"
        )
    return properties
