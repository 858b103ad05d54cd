"""A synthetic file sink log and checkpoint in Spark's exact format, at any size.

What a long-lived hourly stream on S3 leaves behind: ``_spark_metadata`` with the latest
``N.compact`` (every live entry, ``compactInterval`` 10) and the deltas after it, and a
checkpoint whose ``offsets/`` and ``commits/`` retain the last 100 batches. Lines are
byte for byte what Spark's ``FileStreamSinkLog`` writes (``v1``, then one JSON object per
line without spaces, no trailing newline; ``s3a://`` paths, S3A's block size and
replication), with realistic part-file names.

Entry paths are ``s3a://lake<staging>/dt=…/hour=…/part-…`` where ``<staging>`` is the
*local* directory that holds the log: fscommit reads the log from the local disk (a
staging path without a scheme matches any scheme) and never touches the data files, so
no S3 is needed. A staging path of ``s3a://lake/…`` itself would make pyarrow open an S3
filesystem, which needs the network.

Batches write ~100 files each into the current hour, as an hourly stream does; entry i
lies in partition ``i * partitions // entries``. :meth:`SyntheticLog.add_batch` and
:meth:`SyntheticLog.add_compact` add the next delta or compact file (and their
checkpoint batch) for the incremental reads, and :meth:`SyntheticLog.reset` removes them.
"""

from __future__ import annotations

import json
import random
import shutil
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

COMPACT_INTERVAL = 10
RETAINED_BATCHES = 100
ENTRIES_PER_BATCH = 100
BLOCK_SIZE = 33554432  # fs.s3a.block.size
FIRST_HOUR = datetime(2025, 1, 1, tzinfo=UTC)
BATCH_INTERVAL_MS = 36_000  # 100 batches an hour
# The conf Spark 4.3 records in every offsets file (from a real checkpoint).
_OFFSET_CONF = {
    "spark.sql.streaming.stateStore.providerClass": (
        "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider"
    ),
    "spark.sql.streaming.join.stateFormatVersion": "2",
    "spark.sql.streaming.stateStore.compression.codec": "lz4",
    "spark.sql.streaming.multipleWatermarkPolicy": "min",
    "spark.sql.streaming.aggregation.stateFormatVersion": "2",
    "spark.sql.shuffle.partitions": "200",
}


def hourly_partition(hour: int) -> str:
    """The path of the ``hour``-th hourly partition from :data:`FIRST_HOUR`."""
    at = FIRST_HOUR + timedelta(hours=hour)
    return f"dt={at:%Y-%m-%d}/hour={at:%H}"


@dataclass(frozen=True)
class StreamFolders:
    """A stream's folders under ``root``: the sink's output (staging) and its checkpoint."""

    root: Path

    @property
    def staging(self) -> Path:
        return self.root / "staging"

    @property
    def checkpoint(self) -> Path:
        return self.root / "checkpoint"


@dataclass(frozen=True)
class SyntheticLog(StreamFolders):
    """A generated log of ``entries`` files over ``partitions`` hourly partitions."""

    entries: int
    partitions: int

    @property
    def log_dir(self) -> Path:
        return self.staging / "_spark_metadata"

    @property
    def batches(self) -> int:
        """Batches at the first read: a compact file plus 8 deltas (the most there are)."""
        return max(1, self.entries // ENTRIES_PER_BATCH // COMPACT_INTERVAL) * COMPACT_INTERVAL + 8

    @property
    def latest_compact(self) -> int:
        return self.batches - 9

    def partition_path(self, partition: int) -> str:
        return hourly_partition(partition)

    def watermark_ms(self, batch: int) -> int:
        """Half an hour into the third-last hour (then a minute per batch): with a 1 h delay
        every partition but the last three is committable."""
        base = FIRST_HOUR + timedelta(hours=self.partitions - 3, minutes=30)
        return int(base.timestamp() * 1000) + (batch - self.batches + 1) * 60_000

    def now_ms(self) -> int:
        """The wall clock the reads pretend it is (a partition-time trigger ignores it)."""
        return self.watermark_ms(self.batches + 10) + 3_600_000

    def write(self) -> None:
        """Write the log and checkpoint unless this exact one is already there."""
        marker = self.root / "synthetic.json"
        shape = {"entries": self.entries, "partitions": self.partitions, "format": 1}
        if marker.exists() and json.loads(marker.read_text()) == shape:
            return
        shutil.rmtree(self.root, ignore_errors=True)
        self.log_dir.mkdir(parents=True)
        lines = _Lines(self)
        compact = self.latest_compact
        write_log_file(
            self.log_dir / f"{compact}.compact",
            (lines.line(i) for i in range(lines.first_entry(compact + 1))),
        )
        for batch in range(compact + 1, self.batches):
            self._write_delta(lines, batch)
        for batch in range(max(0, self.batches - RETAINED_BATCHES), self.batches):
            self._write_checkpoint_batch(batch)
        (self.checkpoint / "metadata").write_text(json.dumps({"id": str(uuid.uuid4())}))
        marker.write_text(json.dumps(shape))

    def add_batch(self) -> None:
        """The next micro-batch: one delta of ~100 files in the current hour."""
        self._write_delta(_Lines(self), self.batches)
        self._write_checkpoint_batch(self.batches)

    def add_compact(self) -> None:
        """The batch after :meth:`add_batch`: Spark's next compact file (old one + new lines)."""
        batch = self.batches + 1
        lines = _Lines(self)
        previous = (self.log_dir / f"{self.latest_compact}.compact").read_bytes()
        deltas = [
            (self.log_dir / str(b)).read_bytes() for b in range(self.latest_compact + 1, batch)
        ]
        new = (lines.line(i) for i in range(lines.first_entry(batch), lines.first_entry(batch + 1)))
        with open(self.log_dir / f"{batch}.compact", "wb") as handle:
            handle.write(previous)
            for delta in deltas:
                handle.write(b"\n" + delta.partition(b"\n")[2])
            handle.write(b"\n" + "\n".join(new).encode())
        self._write_checkpoint_batch(batch)

    def reset(self) -> None:
        """Remove what :meth:`add_batch` and :meth:`add_compact` added."""
        for batch in (self.batches, self.batches + 1):
            for path in (
                self.log_dir / str(batch),
                self.log_dir / f"{batch}.compact",
                self.checkpoint / "offsets" / str(batch),
                self.checkpoint / "commits" / str(batch),
            ):
                path.unlink(missing_ok=True)

    def _write_delta(self, lines: _Lines, batch: int) -> None:
        first, end = lines.first_entry(batch), lines.first_entry(batch + 1)
        write_log_file(self.log_dir / str(batch), (lines.line(i) for i in range(first, end)))

    def _write_checkpoint_batch(self, batch: int) -> None:
        write_checkpoint_batch(
            self.checkpoint, batch, self.watermark_ms(batch), self.watermark_ms(batch + 1)
        )


def write_checkpoint_batch(
    checkpoint: Path, batch: int, watermark_ms: int, next_watermark_ms: int | None = None
) -> None:
    """Batch ``batch``'s offsets and commit files, as Spark 4.3 writes them."""
    offsets = checkpoint / "offsets"
    commits = checkpoint / "commits"
    offsets.mkdir(parents=True, exist_ok=True)
    commits.mkdir(parents=True, exist_ok=True)
    metadata = {
        "batchWatermarkMs": watermark_ms,
        "batchTimestampMs": watermark_ms + 1_800_000,
        "conf": _OFFSET_CONF,
    }
    (offsets / str(batch)).write_text(
        "v1\n" + _compact_json(metadata) + "\n" + _compact_json({"logOffset": batch})
    )
    next_watermark = watermark_ms if next_watermark_ms is None else next_watermark_ms
    (commits / str(batch)).write_text(
        "v1\n" + _compact_json({"nextBatchWatermarkMs": next_watermark})
    )


class _Lines:
    """The JSON line of every entry, deterministic (seeded) so reruns write the same log."""

    def __init__(self, log: SyntheticLog) -> None:
        self.log = log
        self.prefix = f"s3a://lake{log.staging}"

    def first_entry(self, batch: int) -> int:
        """Entries are spread evenly over the first-read batches; later ones get 100."""
        log = self.log
        if batch <= log.batches:
            return batch * log.entries // log.batches
        return log.entries + (batch - log.batches) * ENTRIES_PER_BATCH

    def line(self, entry: int) -> str:
        log = self.log
        partition = min(entry * log.partitions // log.entries, log.partitions - 1)
        rng = random.Random(entry)
        batch_time = 1_735_689_600_000 + entry // ENTRIES_PER_BATCH * BATCH_INTERVAL_MS
        name = f"part-{entry % 200:05d}-{uuid.UUID(int=rng.getrandbits(128))}.c000.snappy.parquet"
        return _compact_json(
            {
                "path": f"{self.prefix}/{log.partition_path(partition)}/{name}",
                "size": rng.randrange(50_000, 150_000),
                "isDir": False,
                "modificationTime": batch_time + rng.randrange(30_000),
                "blockReplication": 1,
                "blockSize": BLOCK_SIZE,
                "action": "add",
            }
        )


def _compact_json(document: dict) -> str:
    return json.dumps(document, separators=(",", ":"))


def write_log_file(path: Path, lines: Iterable[str]) -> None:
    """``v1`` then the entries, one per line, no trailing newline (as Spark writes)."""
    with open(path, "w") as handle:
        handle.write("v1")
        for line in lines:
            handle.write("\n" + line)
