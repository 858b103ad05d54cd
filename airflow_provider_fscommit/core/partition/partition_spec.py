"""Hive-style partition paths (``dt=2026-11-20/hour=03``) exactly as Spark writes them.

Spark escapes partition names and values with ``ExternalCatalogUtils.escapePathName``
and writes ``__HIVE_DEFAULT_PARTITION__`` for null. We must produce and parse the very same
strings, or a partition we publish would not be the directory Spark, Hive and Trino read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from airflow_provider_fscommit.core.compat import strict_zip
from airflow_provider_fscommit.core.errors import PartitionPathError, shown

DEFAULT_PARTITION_NAME = "__HIVE_DEFAULT_PARTITION__"
#: A partition glob's value that stands for any value (:class:`PartitionGlob`).
ANY_VALUE = "*"

# The characters Spark's ExternalCatalogUtils.charToEscape marks (on non-Windows hosts).
_CHARS_TO_ESCAPE = frozenset([chr(c) for c in range(0x01, 0x20)] + list("\"#%'*/:=?\\\x7f{[]^"))


def escape_path_name(name: str) -> str:
    """Escape a partition name or value for use in a path, as Spark does."""
    if not any(ch in _CHARS_TO_ESCAPE for ch in name):
        return name
    return "".join(f"%{ord(ch):02X}" if ch in _CHARS_TO_ESCAPE else ch for ch in name)


def unescape_path_name(path: str) -> str:
    """Invert :func:`escape_path_name`; a ``%`` not followed by two hex digits stays as is."""
    if "%" not in path:
        return path
    out: list[str] = []
    i = 0
    while i < len(path):
        ch = path[i]
        code = _escape_code(path[i + 1 : i + 3]) if ch == "%" else -1
        if code >= 0:
            out.append(chr(code))
            i += 3
        else:
            out.append(ch)
            i += 1
    return "".join(out)


_HEX = frozenset("0123456789abcdefABCDEF")


def _escape_code(text: str) -> int:
    """The code of a ``%XY`` escape (two hex digits, either case), or -1."""
    if len(text) != 2 or text[0] not in _HEX or text[1] not in _HEX:
        return -1
    return int(text, 16)


@dataclass(frozen=True)
class PartitionSpec:
    """The values of one partition, in the table's partition-key order (``None`` is null)."""

    keys: tuple[str, ...]
    values: tuple[str | None, ...]

    def __post_init__(self) -> None:
        if len(self.keys) != len(self.values):
            raise PartitionPathError(
                f"partition keys {list(self.keys)} and values {list(self.values)} differ in length"
            )

    @classmethod
    def of(cls, keys: Sequence[str], values: Mapping[str, str | None]) -> PartitionSpec:
        """Build a spec from a mapping, checking that it names exactly the table's keys."""
        unknown = sorted(set(values) - set(keys))
        missing = [k for k in keys if k not in values]
        if unknown or missing:
            raise PartitionPathError(
                f"partition {dict(values)} does not match the partition keys {list(keys)}"
                + (f": unknown {unknown}" if unknown else "")
                + (f": missing {missing}" if missing else "")
                + "; give exactly one value per partition key"
            )
        return cls(tuple(keys), tuple(values[k] for k in keys))

    @classmethod
    def parse(
        cls,
        path: str,
        keys: Sequence[str],
        default_name: str = DEFAULT_PARTITION_NAME,
    ) -> PartitionSpec:
        """Parse an escaped relative partition path such as ``dt=2026-11-20/hour=03``."""
        return _parse(path, tuple(keys), default_name)

    def path(self, default_name: str = DEFAULT_PARTITION_NAME) -> str:
        """The escaped relative directory of this partition, as Spark names it."""
        return "/".join(
            f"{escape_path_name(k)}={default_name if v is None or v == '' else escape_path_name(v)}"
            for k, v in strict_zip(self.keys, self.values)
        )

    def as_dict(self) -> dict[str, str | None]:
        return dict(strict_zip(self.keys, self.values))

    def __str__(self) -> str:
        return self.path()


@dataclass(frozen=True)
class PartitionGlob:
    """Every partition with the given values, any value where the path says ``*``.

    ``region=*/dt=2026-11-20/hour=03`` is the hour of every region: what one run of a table
    whose keys the time does not all name commits. Spark escapes a ``*`` in a value
    (``%2A``), so a bare ``*`` can only mean "any value".
    """

    keys: tuple[str, ...]
    values: tuple[str | None, ...]  # unescaped; None for a null partition value
    wildcards: frozenset[str]  # the keys of any value

    @classmethod
    def parse(
        cls, path: str, keys: Sequence[str], default_name: str = DEFAULT_PARTITION_NAME
    ) -> PartitionGlob | None:
        """The glob ``path`` spells, or None when it names one partition (no ``*``)."""
        segments = [s for s in path.strip("/").split("/") if s]
        wildcards = frozenset(
            unescape_path_name(name)
            for name, _, raw in (s.partition("=") for s in segments)
            if raw == ANY_VALUE
        )
        if not wildcards:
            return None
        spec = PartitionSpec.parse(path, keys, default_name)
        return cls(spec.keys, spec.values, wildcards)

    def matches(self, partition: PartitionSpec) -> bool:
        """Whether ``partition`` (of the same keys) is one of the glob's."""
        return all(
            key in self.wildcards or value == found
            for key, value, found in strict_zip(self.keys, self.values, partition.values)
        )


# Every run parses each partition's path in several places (the sink log's directories,
# its judging, the completeness step), and a year-old table has thousands: parsed once.
@lru_cache(maxsize=1 << 16)
def _parse(path: str, keys: tuple[str, ...], default_name: str) -> PartitionSpec:
    segments = [s for s in path.strip("/").split("/") if s] if path else []
    if len(segments) != len(keys):
        raise PartitionPathError(
            f"partition path {shown(path)} has {len(segments)} level(s) but the partition keys "
            f"are {list(keys)}; check the table's partition keys (--partition-keys)"
        )
    values: list[str | None] = []
    for segment, key in strict_zip(segments, keys):
        name, sep, raw = segment.partition("=")
        if not sep or unescape_path_name(name) != key:
            raise PartitionPathError(
                f"partition path {shown(path)}: segment {shown(segment)} is not "
                f"'{key}=<value>'; the partition keys are {list(keys)} in this order"
            )
        values.append(None if raw == default_name else unescape_path_name(raw))
    return PartitionSpec(keys, tuple(values))
