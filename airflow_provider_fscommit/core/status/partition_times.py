"""Many partitions' times at once: a year-old table's thousands read as one Arrow column.

The completeness step places every partition of the table on the timeline, and one at a
time (parse the path, fill the timestamp pattern, parse the text, place it in the zone)
that costs ~13 µs a partition, 0.11 s of a year-old table's no-op commit. Nearly every
partition's time is the default extractor's pattern filled with plain values into the
canonical form (``2026-11-20 03:00:00``), on a fixed-offset zone (UTC): those are read by
Arrow's kernels in ~5 ms for the year. Any other partition (a formatter, a custom
extractor, escaped or null values, a field out of range that Java's LENIENT resolution
rolls over, a zone with transitions) is read one at a time by
:meth:`TableSpec.partition_time_ms`, the one definition of a partition's time, which the
fast route is checked against (``tests/core/status/test_partition_times.py``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from datetime import timezone

import pyarrow as pa
import pyarrow.compute as pc

from airflow_provider_fscommit.core.compat import strict_zip
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.formats.arrow_arrays import string_array
from airflow_provider_fscommit.core.partition.partition_spec import escape_path_name
from airflow_provider_fscommit.core.partition.time_extractor import (
    DefaultPartTimeExtractor,
    pattern_template,
)

# The canonical texts, as the extractor's fast path takes them (``_parse_lenient``), but
# for a second of 60 or more and the year 0: Arrow's parser rolls such a second over where
# Python's refuses it (LENIENT then rolls it over its own way), and a year 0 is no Python
# date at all.
_CANONICAL = (
    r"^(?:[1-9][0-9]{3}|0[1-9][0-9]{2}|00[1-9][0-9]|000[1-9])-[0-9]{2}-[0-9]{2}"
    r"(?: [0-9]{2}:[0-9]{2}:[0-5][0-9])?$"
)
# A canonical text's day (``0`` and its two digits, an integer's text), or ``0`` for any
# other text.
_DAY = r"^[0-9]{4}-[0-9]{2}-([0-9]{2})(?: .*)?$|^.*$"


def partition_times_ms(spec: TableSpec, partitions: Sequence[str]) -> Iterator[int]:
    """:meth:`TableSpec.partition_time_ms` of each of ``partitions``, in order; raises its
    error when the iteration reaches a partition without a time."""
    for partition, fast in strict_zip(partitions, column_times_ms(spec, partitions)):
        yield spec.partition_time_ms(partition) if fast is None else fast


def column_times_ms(spec: TableSpec, partitions: Sequence[str]) -> list[int | None]:
    """Each partition's time as one column reads it, None where it is not in the form the
    column route takes (see the module's docstring): the caller reads those one by one."""
    template = _template(spec)
    zone = spec.watermark_zone
    if template is None or not isinstance(zone, timezone) or not partitions:
        return [None] * len(partitions)
    pattern, replacement = template
    paths = string_array(partitions)
    # A path of other keys, or with an escaped value, keeps its own text: never canonical.
    texts = pc.replace_substring_regex(paths, pattern=pattern, replacement=replacement)
    null_value = "=" + re.escape(spec.partition_default_name) + "(/|$)"
    canonical = pc.and_(
        pc.match_substring_regex(texts, pattern=_CANONICAL),
        pc.invert(pc.match_substring_regex(paths, pattern=null_value)),
    )
    local = pc.coalesce(
        pc.strptime(texts, format="%Y-%m-%d %H:%M:%S", unit="us", error_is_null=True),
        pc.strptime(texts, format="%Y-%m-%d", unit="us", error_is_null=True),
    )
    # Arrow's parser rolls a day past its month's end over (Feb 29th of a common year is
    # March 1st) where Python's refuses it: the day read is then not the day written.
    written_day = pc.cast(pc.replace_substring_regex(texts, _DAY, "0\\1"), pa.int64())
    taken = pc.and_(canonical, pc.equal(pc.day(local), written_day)).to_pylist()
    offset_us = round(zone.utcoffset(None).total_seconds() * 1_000_000)
    micros = pc.cast(local, pa.int64()).to_pylist()
    return [(us - offset_us) // 1000 if ok else None for ok, us in strict_zip(taken, micros)]


def _template(spec: TableSpec) -> tuple[str, str] | None:
    """The regular expression a plain partition path matches (no escaped character, no
    segment out of the keys' order) and the replacement that fills the timestamp pattern
    from its groups; None when the default extractor without a formatter is not the
    table's, or its keys do not fit one expression."""
    extractor, keys = spec.time_extractor, spec.partition_keys
    if not isinstance(extractor, DefaultPartTimeExtractor) or extractor.timestamp_formatter:
        return None
    if not keys or len(keys) > 9 or any(escape_path_name(k) != k for k in keys):
        return None
    parts = (
        (0,)
        if extractor.timestamp_pattern is None
        else pattern_template(extractor.timestamp_pattern, keys)
    )
    pattern = "^" + "/".join(f"{re.escape(key)}=([^/%]*)" for key in keys) + "$"
    replacement = "".join(
        f"\\{part + 1}" if isinstance(part, int) else part.replace("\\", "\\\\") for part in parts
    )
    return pattern, replacement
