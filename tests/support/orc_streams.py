"""The streams an ORC file's stripes hold, read from its stripe footers (pyarrow does not
say whether a file has row indexes or bloom filters; Spark's ORC reader uses both).

Footer {3: repeated StripeInformation {1: offset, 2: indexLength, 3: dataLength,
4: footerLength}}; StripeFooter {1: repeated Stream {1: kind, 2: column}}; Footer types in
pre-order, so column ``i`` is the i-th type (0: the root struct).
"""

from __future__ import annotations

from pathlib import Path

import pyarrow.fs as pafs

from airflow_provider_fscommit.core.formats.orc_tail import (
    NO_COMPRESSION,
    decompress,
    fields,
    parse_postscript,
    read_footer,
)

ROW_INDEX = 6
BLOOM_FILTER_KINDS = (7, 8)  # BLOOM_FILTER, BLOOM_FILTER_UTF8


def stripe_streams(path: Path) -> list[set[tuple[int, int]]]:
    """Per stripe, its streams' ``(kind, column)``."""
    data = path.read_bytes()
    postscript = parse_postscript(data[-1 - data[-1] : -1])
    footer = read_footer(pafs.LocalFileSystem(), str(path))
    stripes = []
    for number, _, value, _, _ in fields(footer, "Footer"):
        if number != 3 or not isinstance(value, bytes):
            continue
        info = {n: v for n, _, v, _, _ in fields(value, "StripeInformation")}
        start = info[1] + info.get(2, 0) + info[3]
        raw = data[start : start + info[4]]
        stripe_footer = (
            raw
            if postscript.compression == NO_COMPRESSION
            else decompress(raw, postscript.compression)
        )
        streams = set()
        for n, _, stream, _, _ in fields(stripe_footer, "StripeFooter"):
            if n == 1 and isinstance(stream, bytes):
                found = {k: v for k, _, v, _, _ in fields(stream, "Stream")}
                streams.add((found.get(1, 0), found.get(2, 0)))
        stripes.append(streams)
    return stripes
