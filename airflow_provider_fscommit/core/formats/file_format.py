"""The file format of a table's staged files (Flink's ``format`` option).

Spark's file sink writes ``parquet``, ``orc``, ``json``, ``csv`` and ``text``, and names
every file by its format and codec (``part-…c000.snappy.orc``, ``part-…c000.csv.gz``), so
the names tell the format without a read; the first file of a partition is also checked
by its magic bytes (``PAR1``, ``ORC``), which catches a spec or a name that lies before
anything is written. The format decides how a partition is compacted: Parquet and ORC are
rewritten row group by row group, line formats are concatenated.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence

import pyarrow as pa
import pyarrow.compute as pc

from airflow_provider_fscommit.core.compat import StrEnum
from airflow_provider_fscommit.core.errors import ConfigError, FormatMismatchError
from airflow_provider_fscommit.core.formats.line_files import LINE_CODECS
from airflow_provider_fscommit.core.storage.filesystem import resolve_filesystem


class FileFormat(StrEnum):
    """The formats Spark's file sink writes, by the names Spark gives them."""

    PARQUET = "parquet"
    ORC = "orc"
    JSON = "json"
    CSV = "csv"
    TEXT = "text"

    @property
    def extension(self) -> str:
        """The last extension Spark gives the format's files."""
        return "txt" if self is FileFormat.TEXT else self.value

    @property
    def is_lines(self) -> bool:
        """Line-oriented: files merge by concatenation, not by rewriting rows."""
        return self in (FileFormat.JSON, FileFormat.CSV, FileFormat.TEXT)


_BY_EXTENSION = {f.extension: f for f in FileFormat}
_MAGIC = ((b"PAR1", FileFormat.PARQUET), (b"ORC", FileFormat.ORC))
# The ORC codecs Spark names a file by (``…c000.zlib.orc``); pyarrow's writer spells them
# the same way.
_ORC_CODECS = frozenset({"snappy", "zlib", "zstd", "lz4"})


def parse_format(value: str, option: str = "format") -> FileFormat:
    """A format name as Spark spells it, in any case; anything else is one clear error."""
    try:
        return FileFormat(value.strip().lower())
    except ValueError:
        raise ConfigError(
            f"{option}: {value!r} is not a format Spark's file sink writes; use one of "
            f"{', '.join(FileFormat)} (or leave it unset to detect it from the files)"
        ) from None


def format_of_name(name: str) -> FileFormat | None:
    """The format a file's name gives (a line codec's extension, if any, stripped)."""
    base = posixpath.basename(name)
    codec = next((e for e in LINE_CODECS.values() if e and base.endswith(e)), "")
    stem, dot, extension = base.removesuffix(codec).rpartition(".")
    return _BY_EXTENSION.get(extension.lower()) if dot and stem else None


def orc_codec_of(name: str) -> str:
    """The compression of an ORC file as Spark names it (``…c000.zlib.orc``)."""
    parts = posixpath.basename(name).lower().rsplit(".", 2)
    return parts[-2] if len(parts) > 1 and parts[-2] in _ORC_CODECS else "uncompressed"


def sniff(uri: str) -> FileFormat | None:
    """The binary format a file's first bytes announce (None: text-like or empty)."""
    filesystem, path = resolve_filesystem(uri)
    try:
        with filesystem.open_input_stream(path, compression=None) as handle:
            head = handle.read(4)
    except FileNotFoundError:
        return None  # a missing staged file is the compactor's error, with its way out
    return next((fmt for magic, fmt in _MAGIC if head.startswith(magic)), None)


def formats_of_names(paths: pa.Array | pa.ChunkedArray) -> set[FileFormat]:
    """The formats a column of file names gives, computed in C++ over a whole sink log."""
    codecs = "|".join(re.escape(ext.lstrip(".")) for ext in LINE_CODECS.values() if ext)
    pattern = rf"\.(?P<ext>[A-Za-z]+)(?:\.(?:{codecs}))?$"
    extensions = pc.unique(pc.struct_field(pc.extract_regex(paths, pattern), "ext"))
    return {_BY_EXTENSION[e] for e in extensions.to_pylist() if e and e.lower() in _BY_EXTENSION}


def table_format(
    paths: pa.Array | pa.ChunkedArray, declared: FileFormat | None
) -> tuple[FileFormat | None, str | None]:
    """A status's view: the staged files' format (else the spec's), and what is wrong."""
    found = formats_of_names(paths)
    if len(found) > 1:
        return None, f"staged files of several formats ({', '.join(sorted(found))})"
    if declared is not None and found and declared not in found:
        return None, (
            f"the table spec says {declared} but the staged files are "
            f"{found.pop()}; nothing is published until they agree"
        )
    return (found.pop() if found else declared), None


def partition_format(
    partition: str,
    uris: Sequence[str],
    declared: FileFormat | None,
    *,
    check_content: bool = True,
) -> FileFormat:
    """The one format of a partition's staged files, checked against the spec.

    Names are read for every file (mixed formats are refused, naming one file of each);
    with ``check_content`` the first file's magic bytes are read too. Nothing is written
    before this answers, so a wrong spec changes nothing.
    """
    by_format: dict[FileFormat | None, str] = {}
    for uri in uris:
        by_format.setdefault(format_of_name(uri), uri)
    named = [fmt for fmt in by_format if fmt is not None]
    if len(named) > 1:
        examples = "; ".join(f"{fmt}: {by_format[fmt]}" for fmt in named)
        raise FormatMismatchError(
            f"partition {partition} holds staged files of several formats ({examples}); a "
            "table has one format. Nothing was published: move the stray files out of the "
            "sink (or quarantine them) and rerun"
        )
    found = named[0] if named else None
    if check_content and uris:
        # No magic under a binary name is a damaged file: the compactor names it.
        found = sniff(uris[0]) or found
    if declared is not None and found is not None and found is not declared:
        raise FormatMismatchError(
            f"the table spec says format {str(declared)!r}, but the staged files of "
            f"partition {partition} are {found} (e.g. {uris[0]}). Nothing was "
            f"written: set format to {str(found)!r}, or leave it unset to detect it"
        )
    return found or declared or FileFormat.PARQUET
