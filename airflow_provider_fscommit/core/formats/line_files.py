"""Merging line-oriented files (Spark's ``json``, ``csv`` and ``text`` sinks) exactly.

Spark writes these formats one record per line, optionally compressed with a Hadoop codec.
Hadoop reads a compressed file as its compressed units one after the other (gzip members,
bzip2 streams, zlib streams, lz4/snappy blocks), so the byte concatenation of part files
reads back as the concatenation of their lines. Merging therefore copies each input's bytes
unchanged whenever that is exact, and re-encodes only what must change: a missing final
newline (added as one more encoded unit) and the repeated header of CSV files written with
``header=true`` (kept once, from the first file).

Every input is still decoded, for three reasons: to count its rows, to know whether its
content ends with a newline, and to refuse a file Spark would misread or we could not merge
exactly (a corrupt stream, a header that differs from the first file's).

Rows are *lines*, split as Hadoop's ``LineReader`` splits them when no separator is set
(``\\n``, ``\\r`` or ``\\r\\n``), a last line without a separator included and the CSV header
excluded. That is the row count Spark reads for ``json``, ``text`` and ``csv`` read line by
line; a CSV value quoted across a line break is one row for a ``multiLine`` reader but counts
here once per line, the same in the inputs and in the merged file.

Memory is bounded by the read size, one lz4/snappy block (as large as the largest single
write Hadoop compressed, a line at most) and, with ``header=True``, the header line.
"""

from __future__ import annotations

import bz2
import struct
import zlib
from collections.abc import Callable, Iterable, Iterator
from itertools import chain
from typing import Protocol

import pyarrow as pa

from airflow_provider_fscommit.core.errors import (
    HeaderMismatchError,
    LineFileError,
    UnreadableLineFileError,
)

# The Hadoop codecs Spark's line-oriented file sinks write, with the extension Hadoop gives
# their files (zstd is left out: this Spark's Hadoop cannot write it).
LINE_CODECS: dict[str, str] = {
    "none": "",
    "gzip": ".gz",
    "bzip2": ".bz2",
    "deflate": ".deflate",
    "lz4": ".lz4",
    "snappy": ".snappy",
}

# Spark names a part file ``part-<n>-<uuid>.c000`` + one of these + the codec's extension.
_FORMAT_EXTENSIONS = (".json", ".csv", ".txt")

_READ_SIZE = 1 << 20
# Uncompressed bytes per lz4/snappy block we write: one compressed chunk per block, far
# below the 256 KiB buffer Hadoop's decompressors hold a block's chunk in by default.
_BLOCK_SIZE = 1 << 16
# LZ4 cannot expand a byte of input into more than 255 bytes of output: the bound keeps a
# corrupt block header from making us allocate up to 2 GiB.
_LZ4_MAX_RATIO = 256
_INT = struct.Struct(">i")


class _Undecodable(Exception):
    """Raised inside the decoders, which do not know the file's name; see ``_decoded``."""


def codec_of(file_name: str) -> str:
    """The codec of a Spark ``json``/``csv``/``text`` part file, from its name.

    A name must be a format's extension followed by one codec's extension: anything else
    (``.json.zst``, ``.csv.lzo``) would otherwise be taken for uncompressed text and copied
    without being understood.
    """
    codec = next(
        (
            name
            for name, extension in LINE_CODECS.items()
            if extension and file_name.endswith(extension)
        ),
        "none",
    )
    stem = file_name.removesuffix(LINE_CODECS[codec])
    if not stem.endswith(_FORMAT_EXTENSIONS):
        raise LineFileError(
            f"{file_name} is not named like a json, csv or text file compressed with one of "
            f"{', '.join(LINE_CODECS)} (extensions {', '.join(filter(None, LINE_CODECS.values()))})"
        )
    return codec


def merge_lines(
    inputs: Iterable[tuple[str, pa.NativeFile]],
    sink: pa.NativeFile,
    codec: str,
    header: bool,
) -> int:
    """Write to ``sink`` one ``codec`` file whose lines are the inputs' lines in order.

    Returns the number of rows written (lines, headers excluded). ``sink`` only receives
    sequential writes, so it may be an object store upload. An input whose decoded content
    is empty contributes nothing; one whose content does not end with a newline gets one
    before the next input's content. With ``header``, the first non-empty input's header
    line is kept and every other input's header is checked against it and dropped.

    Raises ``UnreadableLineFileError`` for an input that does not decode and
    ``HeaderMismatchError`` for a header that differs; ``sink`` then holds a partial file.
    """
    if codec not in LINE_CODECS:
        raise ValueError(f"unknown line codec {codec!r}, expected one of {', '.join(LINE_CODECS)}")
    rows = 0
    first: tuple[str, bytes] | None = None  # the uri and header line of the first content
    ends_with_newline = True  # whether the content written so far does
    for uri, source in inputs:
        pieces = _decoded(uri, source, codec)
        lines = _Lines(keep_first_line=header and first is None)
        if header and first is not None:
            line, rest = _split_first_line(decoded for _raw, decoded in pieces)
            if line is not None and line != first[1]:
                raise HeaderMismatchError(first[0], first[1], uri, line)
            written = _write_encoded(sink, codec, rest, lines, newline_first=not ends_with_newline)
        else:
            written = _copy(sink, codec, pieces, lines, newline_first=not ends_with_newline)
            if written and header:
                first = (uri, lines.first_line)
                rows -= 1
        if written:
            rows += lines.count
            ends_with_newline = lines.last == b"\n"
    return rows


def first_line(uri: str, source: pa.NativeFile, codec: str) -> bytes | None:
    """The first line of an input's decoded content (None when it is empty), decoding no
    further than that line's end."""
    line, _rest = _split_first_line(decoded for _raw, decoded in _decoded(uri, source, codec))
    return line


class _Lines:
    """Counts the lines of decoded content fed in pieces, as Hadoop's ``LineReader`` splits
    them: a line ends at ``\\n``, ``\\r`` or ``\\r\\n``, even across two pieces. With
    ``keep_first_line`` it also keeps the first line (the CSV header), and only that."""

    def __init__(self, keep_first_line: bool = False) -> None:
        self.terminators = 0
        self.last = b""  # the last byte fed, b"" while nothing was
        self.first_line = b""
        # The content so far while the first line is kept and has not ended.
        self._head: bytearray | None = bytearray() if keep_first_line else None

    def add(self, data: bytes) -> None:
        if not data:
            return
        if self._head is not None:
            self._head += data
            self.first_line = _line_before(self._head)
            if len(self.first_line) < len(self._head):
                self._head = None
        self.terminators += data.count(b"\n") + data.count(b"\r") - data.count(b"\r\n")
        if self.last == b"\r" and data.startswith(b"\n"):
            self.terminators -= 1
        self.last = data[-1:]

    @property
    def count(self) -> int:
        return self.terminators + (self.last not in (b"", b"\n", b"\r"))


def _line_before(head: bytes | bytearray) -> bytes:
    """``head`` up to its first line separator (all of it when it has none)."""
    ends = [i for i in (head.find(b"\n"), head.find(b"\r")) if i >= 0]
    return bytes(head[: min(ends)] if ends else head)


def _split_first_line(pieces: Iterator[bytes]) -> tuple[bytes | None, Iterator[bytes]]:
    """The first line of decoded content (``None`` when it is empty) and an iterator over
    the content after that line's separator, reading no further than needed."""
    head = b""
    for piece in pieces:
        head += piece
        line = _line_before(head)
        after = len(line)
        # A ``\\r`` at the end of what was read may be the start of ``\\r\\n``: read on.
        if after < len(head) and (head[after : after + 1] == b"\n" or after + 1 < len(head)):
            after += 2 if head[after : after + 2] == b"\r\n" else 1
            return line, chain([head[after:]], pieces)
    if not head:
        return None, iter(())
    line = _line_before(head)
    return line, iter([head[len(line) + 1 :]])


def _copy(
    sink: pa.NativeFile,
    codec: str,
    pieces: Iterator[tuple[bytes, bytes]],
    lines: _Lines,
    newline_first: bool,
) -> bool:
    """Copy an input's raw bytes to ``sink`` unchanged, counting its decoded lines.

    Raw bytes are held back until the first decoded byte: an input with empty content must
    contribute nothing, both because the newline owed by the previous input goes before
    content only, and because an empty lz4/snappy file is an end-of-stream marker that would
    end Hadoop's reading of everything after it. Returns whether anything was written.
    """
    held: list[bytes] | None = []
    for raw, decoded in pieces:
        lines.add(decoded)
        if held is None:
            sink.write(raw)
            continue
        held.append(raw)
        if lines.last:
            if newline_first:
                sink.write(_encode(codec, b"\n"))
            for data in held:
                sink.write(data)
            held = None
    return held is None


def _write_encoded(
    sink: pa.NativeFile,
    codec: str,
    pieces: Iterator[bytes],
    lines: _Lines,
    newline_first: bool,
) -> bool:
    """Encode decoded content to ``sink`` as one more unit of ``codec`` (a gzip member, a
    bzip2 or zlib stream, lz4/snappy blocks), counting its lines. Empty content writes
    nothing. Returns whether anything was written."""
    encoder: _Encoder | None = None
    for piece in pieces:
        if not piece:
            continue
        lines.add(piece)
        if encoder is None:
            encoder = _encoder(codec)
            if newline_first:
                piece = b"\n" + piece
        sink.write(encoder.compress(piece))
    if encoder is None:
        return False
    sink.write(encoder.flush())
    return True


# Decoding. Each decoder turns an iterator of raw reads into ``(raw, decoded)`` pairs: the
# raw bytes that are safe to copy as they are, and the content they decode to.

_Pieces = Iterator[tuple[bytes, bytes]]


def _decoded(uri: str, source: pa.NativeFile, codec: str) -> _Pieces:
    """``source`` decoded with ``codec``, in pieces; a decoding failure names ``uri``
    (errors reading ``source`` itself pass through: they are not the file's fault)."""

    def reads() -> Iterator[bytes]:
        while data := source.read(_READ_SIZE):
            yield data

    try:
        yield from _DECODERS[codec](reads())
    except _Undecodable as error:
        raise UnreadableLineFileError(uri, codec, str(error)) from error


def _plain_pieces(reads: Iterator[bytes]) -> _Pieces:
    for data in reads:
        yield data, data


def _zlib_pieces(reads: Iterator[bytes], wbits: int) -> _Pieces:
    """Consecutive zlib (``wbits`` 15) or gzip (``wbits`` 31) streams, as Hadoop reads
    them; output is produced in pieces of at most ``_READ_SIZE`` bytes."""
    stream = None
    for raw in reads:
        pending = raw
        while True:
            if stream is None:
                stream = zlib.decompressobj(wbits)
            try:
                out = stream.decompress(pending, _READ_SIZE)
            except zlib.error as error:
                raise _Undecodable(str(error)) from error
            yield raw, out
            raw = b""
            if stream.eof:
                pending, stream = stream.unused_data, None
                if not pending:
                    break
            else:
                pending = stream.unconsumed_tail
                if not pending and len(out) < _READ_SIZE:
                    break
    if stream is not None:
        raise _Undecodable("it ends inside a compressed stream (truncated?)")


def _bzip2_pieces(reads: Iterator[bytes]) -> _Pieces:
    """Consecutive bzip2 streams, as Hadoop reads them, in pieces of at most
    ``_READ_SIZE`` bytes."""
    stream = None
    for raw in reads:
        pending = raw
        while True:
            if stream is None:
                stream = bz2.BZ2Decompressor()
            try:
                out = stream.decompress(pending, _READ_SIZE)
            except OSError as error:
                raise _Undecodable(str(error)) from error
            yield raw, out
            raw = pending = b""
            if stream.eof:
                pending, stream = stream.unused_data, None
                if not pending:
                    break
            elif stream.needs_input:
                break
    if stream is not None:
        raise _Undecodable("it ends inside a compressed stream (truncated?)")


def _block_pieces(reads: Iterator[bytes], decompress: Callable[[bytes, int], bytes]) -> _Pieces:
    """Hadoop's ``BlockCompressorStream`` framing, one block per piece.

    A block is its uncompressed length (4 bytes, big-endian) followed by chunks, each its
    compressed length (4 bytes) and the compressed bytes, until the chunks decompress to the
    block's length. Hadoop writes several chunks only for one ``write`` larger than its
    buffer (a very long line). A block of length 0 ends the stream: Hadoop writes it as the
    whole of an empty file, and stops reading at it. Hadoop also silently stops at a
    truncated block or trailing bytes after that marker; we refuse both, as the data Spark
    would drop is probably the file's.
    """
    read = _Reader(reads).read
    while head := read(4):
        if len(head) < 4:
            raise _Undecodable("it ends inside a block header (truncated?)")
        (size,) = _INT.unpack(head)
        if size == 0:
            if read(1):
                raise _Undecodable("it has data after its end-of-stream marker")
            return
        if size < 0:
            raise _Undecodable(f"a block claims a negative length ({size})")
        frame, parts, done = [head], [], 0
        while done < size:
            chunk_head = read(4)
            length = _INT.unpack(chunk_head)[0] if len(chunk_head) == 4 else -1
            chunk = read(length) if length > 0 else b""
            if len(chunk) != length:
                raise _Undecodable("it ends inside a block (truncated?)")
            try:
                data = decompress(chunk, size - done)
            except (OSError, pa.ArrowException) as error:
                raise _Undecodable(str(error)) from error
            frame += [chunk_head, chunk]
            parts.append(data)
            done += len(data)
        yield b"".join(frame), b"".join(parts)


class _Reader:
    """Exact-size reads over an iterator of arbitrary-size reads."""

    def __init__(self, reads: Iterator[bytes]) -> None:
        self._reads = reads
        self._buffer = b""

    def read(self, size: int) -> bytes:
        """``size`` bytes, fewer only at the end of the input."""
        parts, wanted = [], size
        while wanted:
            if not self._buffer:
                self._buffer = next(self._reads, b"")
                if not self._buffer:
                    break
            parts.append(self._buffer[:wanted])
            self._buffer = self._buffer[wanted:]
            wanted -= len(parts[-1])
        return b"".join(parts)


_LZ4 = pa.Codec("lz4_raw")
_SNAPPY = pa.Codec("snappy")


def _lz4_chunk(chunk: bytes, at_most: int) -> bytes:
    """Decompress one lz4 block-format chunk that yields at most ``at_most`` bytes.

    The format does not record the decompressed size and ``pyarrow`` returns a buffer of
    the size it is given, whatever the chunk yields; but decompressing into fewer bytes than
    the chunk yields fails. So the size is ``at_most`` when ``at_most - 1`` fails (a block
    of one chunk, the usual case: two decompressions), else the least size that succeeds,
    found by bisection (the chunks of a block split from one long write).
    """

    def attempt(size: int) -> bytes | None:
        try:
            return _LZ4.decompress(chunk, decompressed_size=size, asbytes=True)
        except (OSError, pa.ArrowException):
            return None

    at_most = min(at_most, _LZ4_MAX_RATIO * len(chunk))
    whole = attempt(at_most)
    if whole is None:
        raise _Undecodable(f"an lz4 chunk does not decompress into {at_most} bytes")
    smaller = attempt(at_most - 1) if at_most else None
    if smaller is None:
        return whole
    fails, fits = -1, at_most - 1
    while fits - fails > 1:
        middle = (fails + fits) // 2
        if (result := attempt(middle)) is None:
            fails = middle
        else:
            fits, smaller = middle, result
    return smaller


def _snappy_chunk(chunk: bytes, at_most: int) -> bytes:
    """Decompress one raw snappy chunk, whose leading varint gives its size."""
    size = shift = 0
    for byte in chunk[:5]:
        size |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            break
    else:
        raise _Undecodable("a snappy chunk has no valid length")
    if size > at_most:
        raise _Undecodable(f"a snappy chunk of {size} bytes overflows its block")
    return _SNAPPY.decompress(chunk, decompressed_size=size, asbytes=True)


_DECODERS: dict[str, Callable[[Iterator[bytes]], _Pieces]] = {
    "none": _plain_pieces,
    "gzip": lambda reads: _zlib_pieces(reads, wbits=31),
    "bzip2": _bzip2_pieces,
    "deflate": lambda reads: _zlib_pieces(reads, wbits=15),
    "lz4": lambda reads: _block_pieces(reads, _lz4_chunk),
    "snappy": lambda reads: _block_pieces(reads, _snappy_chunk),
}


# Encoding: what Hadoop's codecs write, so that Spark reads what we add between copies.


class _Encoder(Protocol):
    def compress(self, data: bytes, /) -> bytes: ...

    def flush(self) -> bytes: ...


class _Plain:
    def compress(self, data: bytes, /) -> bytes:
        return data

    def flush(self) -> bytes:
        return b""


class _Blocks:
    """Hadoop ``BlockCompressorStream`` framing: blocks of ``_BLOCK_SIZE`` bytes, each
    compressed as one chunk."""

    def __init__(self, codec: pa.Codec) -> None:
        self._codec = codec
        self._buffer = b""

    def compress(self, data: bytes, /) -> bytes:
        self._buffer += data
        size = len(self._buffer) - len(self._buffer) % _BLOCK_SIZE
        full, self._buffer = self._buffer[:size], self._buffer[size:]
        return b"".join(self._block(full[i : i + _BLOCK_SIZE]) for i in range(0, size, _BLOCK_SIZE))

    def flush(self) -> bytes:
        rest, self._buffer = self._buffer, b""
        return self._block(rest) if rest else b""

    def _block(self, data: bytes) -> bytes:
        chunk = self._codec.compress(data, asbytes=True)
        return _INT.pack(len(data)) + _INT.pack(len(chunk)) + chunk


def _encoder(codec: str) -> _Encoder:
    """A fresh encoder: its output is one complete unit Hadoop reads after the others."""
    if codec == "gzip":
        return zlib.compressobj(wbits=31)
    if codec == "bzip2":
        return bz2.BZ2Compressor()
    if codec == "deflate":
        return zlib.compressobj(wbits=15)
    if codec == "lz4":
        return _Blocks(_LZ4)
    if codec == "snappy":
        return _Blocks(_SNAPPY)
    return _Plain()


def _encode(codec: str, data: bytes) -> bytes:
    encoder = _encoder(codec)
    return encoder.compress(data) + encoder.flush()
