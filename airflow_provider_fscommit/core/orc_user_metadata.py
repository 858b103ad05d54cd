"""Add ORC *user metadata* to a file while pyarrow writes it.

Spark stamps every ORC file it writes with user metadata items in the file footer
(``org.apache.spark.version`` = ``4.3.0``). pyarrow's ``ORCWriter`` keeps ORC type
attributes such as ``spark.sql.catalyst.type`` but cannot write user metadata, so a file
the compactor rewrites would lose those items. ``OrcUserMetadataSink`` puts them back: it
is the file object pyarrow writes into, and when it is closed it rewrites the file's tail
(Footer and PostScript) with the items added. Spark's reader and tools such as
``orc-tools meta`` then see the same user metadata as in Spark's own files.

The tail is rewritten from the last bytes written, held back in a bounded window, so the
sink only ever writes forward (an S3 upload stream cannot seek) and memory stays bounded
for files of any size. Layout, from the ORC specification::

    ... stripes | stripe statistics | Footer | PostScript | PostScript length (1 byte)

The PostScript is an uncompressed protobuf message: ``1`` footerLength, ``2`` compression
kind, ``3`` compressionBlockSize, ``5`` metadataLength, ``8000`` magic ``"ORC"``, ... The
Footer is a protobuf message stored in compression chunks of the file's codec, each after a
3-byte little-endian header ``(length << 1) | isOriginal``; its field ``5`` is ``repeated
UserMetadataItem metadata`` with ``UserMetadataItem {1: string name, 2: bytes value}``.
Only the Footer and the PostScript's footerLength change: the stripe statistics before the
Footer are located from the Footer's start, so they stay valid where they are.
"""

from __future__ import annotations

import zlib
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from types import TracebackType
from typing import Self

import pyarrow as pa

from airflow_provider_fscommit.core.errors import FsCommitError, shown

DEFAULT_WINDOW = 16 * 1024 * 1024

_MAGIC = b"ORC"
# PostScript fields.
_PS_FOOTER_LENGTH = 1
_PS_COMPRESSION = 2
_PS_BLOCK_SIZE = 3
_PS_MAGIC = 8000
# Footer field 5: repeated UserMetadataItem {1: string name, 2: bytes value}.
_FOOTER_METADATA = 5
_ITEM_NAME = 1
_ITEM_VALUE = 2
_VARINT = 0
_FIXED64 = 1
_LENGTH_DELIMITED = 2
_FIXED32 = 5
# A chunk header holds the chunk's length in 23 bits.
_MAX_CHUNK = (1 << 23) - 1
_COMPRESSION_NAMES = ("NONE", "ZLIB", "SNAPPY", "LZO", "LZ4", "ZSTD", "BROTLI")
_NONE = 0


class OrcUserMetadataError(FsCommitError):
    """The ORC tail cannot be rewritten: it is not in the held window or does not parse."""


class OrcUserMetadataSink:
    """A write-only file object that adds user metadata items to the ORC file written into it.

    Pass it as ``pyarrow.orc.ORCWriter(where=...)`` (or ``pyarrow.orc.write_table``); pyarrow
    wraps it in a ``pyarrow.PythonFile`` and only calls ``write`` and reads ``closed``. All
    bytes go on to ``sink`` except the last writes that make up at least ``window`` bytes
    (whole writes are held, not copied: at most ``window`` plus one write's bytes). They are
    held back until ``close``, which rewrites the tail they end with, adding ``metadata``
    (an item with the same name is replaced), writes it and closes ``sink``. The ORC writer
    does not close a file object it did not open, so close this sink after closing the
    writer (a ``with`` block does). Leaving a ``with`` block on an exception writes no tail,
    so an unfinished file never reads as a whole one.
    """

    def __init__(
        self,
        sink: pa.NativeFile,
        metadata: Mapping[bytes, bytes],
        window: int = DEFAULT_WINDOW,
    ) -> None:
        if window < 1:
            raise ValueError(f"window must be at least 1 byte, not {window}")
        for name in metadata:
            try:
                name.decode("utf-8")
            except UnicodeDecodeError:
                raise OrcUserMetadataError(
                    f"ORC user metadata name {shown(name)} is not UTF-8 (ORC names are strings)"
                ) from None
        self._sink = sink
        self._metadata = dict(metadata)
        self._window = window
        self._held: deque[bytes] = deque()
        self._held_size = 0
        self._position = 0
        self._closed = False

    @property
    def closed(self) -> bool:
        return self._closed

    def writable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._position

    def write(self, data: bytes | bytearray | memoryview | pa.Buffer) -> int:
        if self._closed:
            raise ValueError("write to a closed OrcUserMetadataSink")
        chunk = bytes(data)  # no copy of the bytes objects pyarrow writes
        self._held.append(chunk)
        self._held_size += len(chunk)
        self._position += len(chunk)
        while self._held_size - len(self._held[0]) >= self._window:
            oldest = self._held.popleft()
            self._held_size -= len(oldest)
            self._sink.write(oldest)
        return len(chunk)

    def flush(self) -> None:
        """Flush ``sink``; the held window stays back until ``close``."""
        self._sink.flush()

    def close(self) -> None:
        """Write the tail with the user metadata added and close ``sink``.

        Raises ``OrcUserMetadataError`` (writing no tail) if the held bytes do not end with
        a whole ORC tail; ``sink`` is closed either way.
        """
        if self._closed:
            return
        self._closed = True
        try:
            self._sink.write(
                _with_user_metadata(b"".join(self._held), self._metadata, self._position)
            )
        finally:
            self._held.clear()
            self._sink.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is None:
            self.close()
            return
        self._closed = True
        self._held.clear()
        self._sink.close()


def _with_user_metadata(tail: bytes, metadata: Mapping[bytes, bytes], file_length: int) -> bytes:
    """``tail``, the last bytes of an ORC file of ``file_length`` bytes, with ``metadata``
    added to its Footer; everything before the Footer is returned unchanged."""
    if not tail:
        raise OrcUserMetadataError("the ORC file is empty: no PostScript to add user metadata to")
    ps_length = tail[-1]
    ps_start = len(tail) - 1 - ps_length
    if ps_start < 0:
        raise _window_error("PostScript", 1 + ps_length, tail, file_length)
    postscript = tail[ps_start:-1]
    try:
        ps_fields = {number: value for number, _, value, _, _ in _fields(postscript, "PostScript")}
    except OrcUserMetadataError as error:
        raise OrcUserMetadataError(f"not an ORC file: {error}") from None
    if ps_fields.get(_PS_MAGIC) != _MAGIC:
        raise OrcUserMetadataError(
            "not an ORC file: its PostScript (last bytes) has no 'ORC' magic"
        )
    footer_length = _int_field(ps_fields, _PS_FOOTER_LENGTH, "footerLength")
    compression = _int_field(ps_fields, _PS_COMPRESSION, "compression", default=_NONE)
    footer_start = ps_start - footer_length
    if footer_start < 0:
        raise _window_error("Footer and PostScript", len(tail) - footer_start, tail, file_length)
    if compression == _NONE:
        footer = tail[footer_start:ps_start]
        new_footer = _add_items(footer, metadata)
    else:
        block_size = _int_field(ps_fields, _PS_BLOCK_SIZE, "compressionBlockSize")
        footer = _decompress(tail[footer_start:ps_start], compression)
        new_footer = _original_chunks(_add_items(footer, metadata), min(block_size, _MAX_CHUNK))
    new_postscript = _with_footer_length(postscript, len(new_footer))
    if len(new_postscript) > 255:
        raise OrcUserMetadataError(
            f"the new ORC PostScript is {len(new_postscript)} bytes, over the 255 its length "
            "byte can hold"
        )
    return b"".join(
        (tail[:footer_start], new_footer, new_postscript, bytes((len(new_postscript),)))
    )


def _window_error(part: str, needed: int, tail: bytes, file_length: int) -> OrcUserMetadataError:
    if len(tail) < file_length:
        return OrcUserMetadataError(
            f"the ORC {part} needs the last {needed} bytes of the file, more than the "
            f"{len(tail)} bytes held back to rewrite it; use a larger window"
        )
    return OrcUserMetadataError(
        f"not an ORC file: its {part} would take {needed} bytes, but the file has {file_length}"
    )


def _int_field(
    fields: Mapping[int, int | bytes], number: int, name: str, default: int | None = None
) -> int:
    value = fields.get(number, default)
    if not isinstance(value, int):
        raise OrcUserMetadataError(f"the ORC PostScript has no {name} (field {number})")
    return value


def _add_items(footer: bytes, metadata: Mapping[bytes, bytes]) -> bytes:
    """The Footer without the items named in ``metadata``, then ``metadata``'s items
    (protobuf allows a repeated field's entries after other fields)."""
    kept = bytearray()
    for number, wire_type, value, start, end in _fields(footer, "Footer"):
        if number == _FOOTER_METADATA and wire_type == _LENGTH_DELIMITED:
            item = {n: v for n, _, v, _, _ in _fields(value, "UserMetadataItem")}
            if item.get(_ITEM_NAME) in metadata:
                continue
        kept += footer[start:end]
    for name, value in metadata.items():
        item = _bytes_field(_ITEM_NAME, name) + _bytes_field(_ITEM_VALUE, value)
        kept += _bytes_field(_FOOTER_METADATA, item)
    return bytes(kept)


def _with_footer_length(postscript: bytes, footer_length: int) -> bytes:
    """``postscript`` with field 1 set to ``footer_length``, every other field as it was."""
    fields = []
    for number, _, _, start, end in _fields(postscript, "PostScript"):
        if number == _PS_FOOTER_LENGTH:
            fields.append(_varint(_PS_FOOTER_LENGTH << 3 | _VARINT) + _varint(footer_length))
        else:
            fields.append(postscript[start:end])
    return b"".join(fields)


def _original_chunks(data: bytes, chunk_size: int) -> bytes:
    """``data`` as uncompressed ("original") chunks; readers reject chunks over the file's
    compression block size."""
    chunks = []
    for start in range(0, len(data), chunk_size):
        chunk = data[start : start + chunk_size]
        chunks.append((len(chunk) << 1 | 1).to_bytes(3, "little") + chunk)
    return b"".join(chunks)


def _decompress(stream: bytes, compression: int) -> bytes:
    name = (
        _COMPRESSION_NAMES[compression]
        if compression < len(_COMPRESSION_NAMES)
        else str(compression)
    )
    decompress = _DECOMPRESSORS.get(compression)
    if decompress is None:
        raise OrcUserMetadataError(
            f"cannot read an ORC Footer compressed with {name}: only "
            f"{', '.join(_COMPRESSION_NAMES[kind] for kind in _DECOMPRESSORS)} are supported"
        )
    out = bytearray()
    pos = 0
    while pos < len(stream):
        if pos + 3 > len(stream):
            raise OrcUserMetadataError("the ORC Footer ends inside a compression chunk header")
        header = int.from_bytes(stream[pos : pos + 3], "little")
        start, pos = pos + 3, pos + 3 + (header >> 1)
        if pos > len(stream):
            raise OrcUserMetadataError("the ORC Footer ends inside a compression chunk")
        chunk = stream[start:pos]
        try:
            out += chunk if header & 1 else decompress(chunk)
        except (OSError, ValueError, IndexError, zlib.error) as error:
            raise OrcUserMetadataError(
                f"cannot decompress the ORC Footer ({name}): {error}"
            ) from error
    return bytes(out)


def _inflate(chunk: bytes) -> bytes:
    inflater = zlib.decompressobj(-zlib.MAX_WBITS)
    return inflater.decompress(chunk) + inflater.flush()


def _unsnappy(chunk: bytes) -> bytes:
    # Arrow needs the exact size, which a snappy block starts with.
    size, _ = _read_varint(chunk, 0, "SNAPPY chunk")
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


def _fields(message: bytes, what: str) -> Iterator[tuple[int, int, int | bytes, int, int]]:
    """``(number, wire type, value, start, end)`` of each field of a protobuf ``message``;
    varints as ``int``, length-delimited values as ``bytes``, ``start:end`` the raw field."""
    pos = 0
    while pos < len(message):
        start = pos
        key, pos = _read_varint(message, pos, what)
        number, wire_type = key >> 3, key & 7
        value: int | bytes
        if wire_type == _VARINT:
            value, pos = _read_varint(message, pos, what)
        elif wire_type == _LENGTH_DELIMITED:
            length, pos = _read_varint(message, pos, what)
            value, pos = message[pos : pos + length], pos + length
        elif wire_type in (_FIXED64, _FIXED32):
            width = 8 if wire_type == _FIXED64 else 4
            value, pos = int.from_bytes(message[pos : pos + width], "little"), pos + width
        else:
            raise OrcUserMetadataError(f"the ORC {what} has a field of wire type {wire_type}")
        if pos > len(message):
            raise OrcUserMetadataError(f"the ORC {what} ends inside field {number}")
        yield number, wire_type, value, start, pos


def _read_varint(data: bytes, pos: int, what: str) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(data):
            raise OrcUserMetadataError(f"the ORC {what} ends inside a varint")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7


def _varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _bytes_field(number: int, value: bytes) -> bytes:
    return _varint(number << 3 | _LENGTH_DELIMITED) + _varint(len(value)) + value
