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
for files of any size. The tail's layout and reading are in :mod:`orc_tail`; the Footer's
field ``5`` is ``repeated UserMetadataItem metadata`` with ``UserMetadataItem {1: string
name, 2: bytes value}``. The new Footer is written in uncompressed ("original") chunks. Only
the Footer and the PostScript's footerLength change: the stripe statistics before the
Footer are located from the Footer's start, so they stay valid where they are.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from types import TracebackType

import pyarrow as pa

from airflow_provider_fscommit.core.errors import OrcUserMetadataError, shown
from airflow_provider_fscommit.core.formats.orc_tail import (
    LENGTH_DELIMITED,
    NO_COMPRESSION,
    PS_FOOTER_LENGTH,
    VARINT,
    bytes_field,
    decompress,
    fields,
    parse_postscript,
    varint,
)

DEFAULT_WINDOW = 16 * 1024 * 1024

# Footer field 5: repeated UserMetadataItem {1: string name, 2: bytes value}.
_FOOTER_METADATA = 5
_ITEM_NAME = 1
_ITEM_VALUE = 2
# A chunk header holds the chunk's length in 23 bits.
_MAX_CHUNK = (1 << 23) - 1


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

    def __enter__(self) -> OrcUserMetadataSink:
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
    parsed = parse_postscript(postscript)
    footer_length, compression = parsed.footer_length, parsed.compression
    footer_start = ps_start - footer_length
    if footer_start < 0:
        raise _window_error("Footer and PostScript", len(tail) - footer_start, tail, file_length)
    if compression == NO_COMPRESSION:
        footer = tail[footer_start:ps_start]
        new_footer = _add_items(footer, metadata)
    else:
        if parsed.block_size is None:
            raise OrcUserMetadataError(
                "the ORC PostScript of a compressed file has no compressionBlockSize"
            )
        footer = decompress(tail[footer_start:ps_start], compression)
        new_footer = _original_chunks(
            _add_items(footer, metadata), min(parsed.block_size, _MAX_CHUNK)
        )
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


def _add_items(footer: bytes, metadata: Mapping[bytes, bytes]) -> bytes:
    """The Footer without the items named in ``metadata``, then ``metadata``'s items
    (protobuf allows a repeated field's entries after other fields)."""
    kept = bytearray()
    for number, wire_type, value, start, end in fields(footer, "Footer"):
        if number == _FOOTER_METADATA and wire_type == LENGTH_DELIMITED:
            item = {n: v for n, _, v, _, _ in fields(value, "UserMetadataItem")}
            if item.get(_ITEM_NAME) in metadata:
                continue
        kept += footer[start:end]
    for name, value in metadata.items():
        item = bytes_field(_ITEM_NAME, name) + bytes_field(_ITEM_VALUE, value)
        kept += bytes_field(_FOOTER_METADATA, item)
    return bytes(kept)


def _with_footer_length(postscript: bytes, footer_length: int) -> bytes:
    """``postscript`` with field 1 set to ``footer_length``, every other field as it was."""
    kept = []
    for number, _, _, start, end in fields(postscript, "PostScript"):
        if number == PS_FOOTER_LENGTH:
            kept.append(varint(PS_FOOTER_LENGTH << 3 | VARINT) + varint(footer_length))
        else:
            kept.append(postscript[start:end])
    return b"".join(kept)


def _original_chunks(data: bytes, chunk_size: int) -> bytes:
    """``data`` as uncompressed ("original") chunks; readers reject chunks over the file's
    compression block size."""
    chunks = []
    for start in range(0, len(data), chunk_size):
        chunk = data[start : start + chunk_size]
        chunks.append((len(chunk) << 1 | 1).to_bytes(3, "little") + chunk)
    return b"".join(chunks)
