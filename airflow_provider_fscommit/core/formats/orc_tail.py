"""The tail of an ORC file (Footer and PostScript), read without an ORC library.

Three things need the ORC tail that pyarrow does not expose: the compactor adds Spark's
user metadata to the Footer (:mod:`orc_user_metadata`) and checks its timestamp bounds
(:func:`timestamp_range_ms`), and the metastore policy reads the Footer's column
statistics (:mod:`column_statistics`). All need only a minimal protobuf wire reader and
the chunked decompression of the ORC specification, kept here once::

    ... stripes | stripe statistics | Footer | PostScript | PostScript length (1 byte)

The PostScript is an uncompressed protobuf message: ``1`` footerLength, ``2`` compression
kind, ``3`` compressionBlockSize, ``5`` metadataLength, ``8000`` magic ``"ORC"``, ... The
Footer is a protobuf message stored in compression chunks of the file's codec, each after
a 3-byte little-endian header ``(length << 1) | isOriginal``.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.fs as pafs

from airflow_provider_fscommit.core.errors import OrcTailError

# Protobuf wire types.
VARINT = 0
FIXED64 = 1
LENGTH_DELIMITED = 2
FIXED32 = 5
# PostScript fields.
PS_FOOTER_LENGTH = 1
_PS_COMPRESSION = 2
_PS_BLOCK_SIZE = 3
_PS_MAGIC = 8000
_MAGIC = b"ORC"
NO_COMPRESSION = 0
_COMPRESSION_NAMES = ("NONE", "ZLIB", "SNAPPY", "LZO", "LZ4", "ZSTD", "BROTLI")
# Read this much of a file's end first: Spark's footers are a few kilobytes.
_TAIL_GUESS = 64 * 1024


@dataclass(frozen=True)
class PostScript:
    """The PostScript fields a reader of the Footer needs."""

    footer_length: int
    compression: int
    block_size: int | None


def parse_postscript(postscript: bytes) -> PostScript:
    """The PostScript message (without its length byte); not ORC without the magic."""
    try:
        found = {number: value for number, _, value, _, _ in fields(postscript, "PostScript")}
    except OrcTailError as error:
        raise OrcTailError(f"not an ORC file: {error}") from None
    if found.get(_PS_MAGIC) != _MAGIC:
        raise OrcTailError("not an ORC file: its PostScript (last bytes) has no 'ORC' magic")
    block_size = found.get(_PS_BLOCK_SIZE)
    return PostScript(
        footer_length=_int_field(found, PS_FOOTER_LENGTH, "footerLength"),
        compression=_int_field(found, _PS_COMPRESSION, "compression", default=NO_COMPRESSION),
        block_size=block_size if isinstance(block_size, int) else None,
    )


def read_footer(filesystem: pafs.FileSystem, path: str) -> bytes:
    """The decompressed Footer message of the ORC file at ``path``.

    One ranged read of the file's end serves the usual footer; a larger one is read again.
    """
    with filesystem.open_input_file(path) as source:
        size = source.size()
        tail = source.read_at(min(size, _TAIL_GUESS), size - min(size, _TAIL_GUESS))
        if not tail:
            raise OrcTailError(f"{path} is empty, not an ORC file")
        ps_end = len(tail) - 1
        ps_start = ps_end - tail[-1]
        if ps_start < 0:
            raise OrcTailError(f"{path} is not an ORC file: it is shorter than its PostScript")
        postscript = parse_postscript(tail[ps_start:ps_end])
        needed = 1 + tail[-1] + postscript.footer_length
        if needed > size:
            raise OrcTailError(f"{path} is not an ORC file: its Footer would start before it")
        if needed > len(tail):
            tail = source.read_at(needed, size - needed)
    footer = tail[len(tail) - needed : len(tail) - needed + postscript.footer_length]
    if postscript.compression == NO_COMPRESSION:
        return footer
    return decompress(footer, postscript.compression)


# Footer {4: repeated Type types, 7: repeated ColumnStatistics}, column i's statistics the
# i-th; Type {1: kind}, kinds 9 TIMESTAMP and 18 TIMESTAMP_INSTANT; ColumnStatistics
# {9: TimestampStatistics {1: minimum, 2: maximum, 3: minimumUtc, 4: maximumUtc}} (sint64 ms).
_FOOTER_TYPES, _FOOTER_STATISTICS, _TYPE_KIND = 4, 7, 1
_TIMESTAMP_KINDS = (9, 18)
_TIMESTAMP_STATISTICS = 9
_TIMESTAMP_BOUNDS = (1, 2, 3, 4)


def timestamp_range_ms(footer: bytes) -> tuple[int, int] | None:
    """The earliest and latest timestamp of any timestamp column (nested ones included)
    that the Footer's statistics record, in ms since the epoch; None without any.

    pyarrow's ORC reader converts timestamps to nanoseconds: before pyarrow 25 a value
    outside 1677-09-21..2262-04-11 wraps around silently, so the compactor asks the
    Footer before it reads rows.
    """
    kinds: list[int] = []
    statistics: list[bytes] = []
    for number, _, value, _, _ in fields(footer, "Footer"):
        if number == _FOOTER_TYPES and isinstance(value, bytes):
            kind = next((v for n, _, v, _, _ in fields(value, "Type") if n == _TYPE_KIND), 0)
            kinds.append(kind if isinstance(kind, int) else 0)
        elif number == _FOOTER_STATISTICS and isinstance(value, bytes):
            statistics.append(value)
    bounds: list[int] = []
    for kind, stats in zip(kinds, statistics):
        if kind not in _TIMESTAMP_KINDS:
            continue
        for number, _, value, _, _ in fields(stats, "ColumnStatistics"):
            if number == _TIMESTAMP_STATISTICS and isinstance(value, bytes):
                bounds += [
                    (v >> 1) ^ -(v & 1)  # zigzag sint64
                    for n, _, v, _, _ in fields(value, "TimestampStatistics")
                    if n in _TIMESTAMP_BOUNDS and isinstance(v, int)
                ]
    return (min(bounds), max(bounds)) if bounds else None


def _int_field(
    found: Mapping[int, int | bytes], number: int, name: str, default: int | None = None
) -> int:
    value = found.get(number, default)
    if not isinstance(value, int):
        raise OrcTailError(f"the ORC PostScript has no {name} (field {number})")
    return value


def decompress(stream: bytes, compression: int) -> bytes:
    """The Footer's compression chunks, decompressed with the PostScript's codec."""
    name = (
        _COMPRESSION_NAMES[compression]
        if compression < len(_COMPRESSION_NAMES)
        else str(compression)
    )
    decompressor = _DECOMPRESSORS.get(compression)
    if decompressor is None:
        raise OrcTailError(
            f"cannot read an ORC Footer compressed with {name}: only "
            f"{', '.join(_COMPRESSION_NAMES[kind] for kind in _DECOMPRESSORS)} are supported"
        )
    out = bytearray()
    pos = 0
    while pos < len(stream):
        if pos + 3 > len(stream):
            raise OrcTailError("the ORC Footer ends inside a compression chunk header")
        header = int.from_bytes(stream[pos : pos + 3], "little")
        start, pos = pos + 3, pos + 3 + (header >> 1)
        if pos > len(stream):
            raise OrcTailError("the ORC Footer ends inside a compression chunk")
        chunk = stream[start:pos]
        try:
            out += chunk if header & 1 else decompressor(chunk)
        except (OSError, ValueError, IndexError, zlib.error) as error:
            raise OrcTailError(f"cannot decompress the ORC Footer ({name}): {error}") from error
    return bytes(out)


def _inflate(chunk: bytes) -> bytes:
    inflater = zlib.decompressobj(-zlib.MAX_WBITS)
    return inflater.decompress(chunk) + inflater.flush()


def _unsnappy(chunk: bytes) -> bytes:
    # Arrow needs the exact size, which a snappy block starts with.
    size, _ = read_varint(chunk, 0, "SNAPPY chunk")
    return pa.Codec("snappy").decompress(chunk, size, asbytes=True)


def _unlz4(chunk: bytes) -> bytes:
    # An LZ4 block does not record its decompressed size; add up its sequences' lengths.
    size = pos = 0
    while True:
        token = chunk[pos]
        literals, pos = _lz4_length(chunk, pos + 1, token >> 4)
        size += literals
        pos += literals
        if pos >= len(chunk):  # the last sequence has literals only
            return pa.Codec("lz4_raw").decompress(chunk, size, asbytes=True)
        match, pos = _lz4_length(chunk, pos + 2, token & 15)
        size += match + 4


def _lz4_length(chunk: bytes, pos: int, length: int) -> tuple[int, int]:
    if length == 15:
        while True:
            extra = chunk[pos]
            pos += 1
            length += extra
            if extra != 255:
                break
    return length, pos


def _unzstd(chunk: bytes) -> bytes:
    # Arrow's one-shot zstd needs the exact size; its stream decoder does not.
    return pa.CompressedInputStream(pa.py_buffer(chunk), "zstd").read()


_DECOMPRESSORS: dict[int, Callable[[bytes], bytes]] = {
    1: _inflate,
    2: _unsnappy,
    4: _unlz4,
    5: _unzstd,
}


def fields(message: bytes, what: str) -> Iterator[tuple[int, int, int | bytes, int, int]]:
    """``(number, wire type, value, start, end)`` of each field of a protobuf ``message``;
    varints and fixed-width values as ``int``, length-delimited values as ``bytes``,
    ``start:end`` the raw field."""
    pos = 0
    while pos < len(message):
        start = pos
        key, pos = read_varint(message, pos, what)
        number, wire_type = key >> 3, key & 7
        value: int | bytes
        if wire_type == VARINT:
            value, pos = read_varint(message, pos, what)
        elif wire_type == LENGTH_DELIMITED:
            length, pos = read_varint(message, pos, what)
            value, pos = message[pos : pos + length], pos + length
        elif wire_type in (FIXED64, FIXED32):
            width = 8 if wire_type == FIXED64 else 4
            value, pos = int.from_bytes(message[pos : pos + width], "little"), pos + width
        else:
            raise OrcTailError(f"the ORC {what} has a field of wire type {wire_type}")
        if pos > len(message):
            raise OrcTailError(f"the ORC {what} ends inside field {number}")
        yield number, wire_type, value, start, pos


def read_varint(data: bytes, pos: int, what: str) -> tuple[int, int]:
    """The varint at ``pos`` and the position after it."""
    value = shift = 0
    while True:
        if pos >= len(data):
            raise OrcTailError(f"the ORC {what} ends inside a varint")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7


def varint(value: int) -> bytes:
    """``value`` as a protobuf varint."""
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def bytes_field(number: int, value: bytes) -> bytes:
    """A length-delimited protobuf field."""
    return varint(number << 3 | LENGTH_DELIMITED) + varint(len(value)) + value
