"""Whether a partition's CSV files begin with a header line (Spark's ``header=true``).

Spark's CSV sink writes the header at the top of every part file when ``header`` is true,
and nothing in a file or the sink log says whether it did. Merged as plain lines, such
files publish the header once per input file as rows of data, and Spark reading the table
with ``header=true`` drops only the first: a silently wrong table. So ``csv.header``
decides, and where it is unset the files are looked at: a partition of two or more files
that all begin with the same line is evidently written with a header, and the run is
refused before anything is written, naming the option and both of its answers. A line
that is data can begin every file too (a stream of few distinct rows), which is why the
rule refuses rather than guesses. One file alone gives no evidence, and needs none: its
merge is itself, header or not.

``csv.header: false`` is the user's answer for the data-row case, so it is followed; when
the files contradict it the run says so in its log, naming the option.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from airflow_provider_fscommit.core.errors import CsvHeaderError, shown
from airflow_provider_fscommit.core.formats.line_files import codec_of, first_line
from airflow_provider_fscommit.core.storage.filesystem import resolve_filesystem

log = logging.getLogger(__name__)


def partition_header(partition: str, uris: Sequence[str], declared: bool | None) -> bool:
    """Whether the CSV files ``uris`` of ``partition`` are merged as files with a header.

    Reads each file's first line, and stops at the first that differs from the others:
    a partition without a header costs two small reads. Raises ``CsvHeaderError`` when
    the files evidently have a header and ``declared`` (``csv.header``) is unset.
    """
    if declared:
        return True
    line = common_first_line(uris)
    if line is None:
        return False
    text = shown(line.decode(errors="replace"))
    if declared is None:
        raise CsvHeaderError(
            f"the {len(uris)} CSV files of partition {partition} all begin with the same line "
            f"({text}), as files written with header=true do, and csv.header is not set: "
            "merged as plain lines that header would be published as a row once per file. "
            "Set csv.header: true (--csv-header true) if the stream writes header=true (the "
            "header is then kept once), or csv.header: false if that line is data. Nothing "
            "was published"
        )
    log.warning(
        "csv.header is false, but the %d CSV files of partition %s all begin with the same "
        "line (%s), as files written with header=true do: it is published as data, once "
        "per file. If the stream writes header=true, set csv.header: true",
        len(uris),
        partition,
        text,
    )
    return False


def common_first_line(uris: Sequence[str]) -> bytes | None:
    """The first line every non-empty file of ``uris`` begins with, when there are at least
    two such files and they all agree; None otherwise."""
    common: bytes | None = None
    files = 0
    for uri in uris:
        filesystem, path = resolve_filesystem(uri)
        # compression=None: pyarrow would otherwise decompress a *.gz name itself.
        with filesystem.open_input_stream(path, compression=None) as source:
            line = first_line(uri, source, codec_of(uri))
        if line is None:
            continue  # an empty file has no first line to agree or disagree
        if common is not None and line != common:
            return None
        common, files = line, files + 1
    return common if files >= 2 else None
