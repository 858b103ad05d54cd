"""Reading a stream while it runs and cleans up after itself.

A real query runs in its own process with a micro-batch whenever input arrives. Its sink
log is compacted every 2 batches with the old deltas deleted at once, and only the last 2
batches of its checkpoint are kept, so log files vanish under every reader all the time.
The status (fresh and incremental), the sensor's check and the page's report poll it
hundreds of times while compactions publish from it. Every call must succeed and agree
with the ones before it, and every published partition must hold exactly its rows.

Local listings are so fast that the query rarely gets between a listing and the reads
after it. One of the two pollers therefore takes longer over each listing than the query
takes over a micro-batch (the only fault injected), as a slow remote store can: the query
then commits, compacts and purges between its listings and its reads all the time.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.spark import checkpoint, sink_log
from airflow_provider_fscommit.core.spark.metadata_log import list_log
from airflow_provider_fscommit.core.status.committable import PartitionState, TableStatusReader
from airflow_provider_fscommit.core.status.partition_wait import check_partition
from airflow_provider_fscommit.core.status.table_report import read_table_report
from fscommit_dev.streams import StreamingTable, kill_group, row
from tests.support.compaction import check_exactly_once, committable, compact, table_options

BATCHES = 36
WAITED = "dt=2026-11-20/hour=00"
CLEANUP_CONF = {
    "spark.sql.streaming.fileSink.log.compactInterval": "2",
    "spark.sql.streaming.fileSink.log.cleanupDelay": "0",
    "spark.sql.streaming.minBatchesToRetain": "2",
}


def live_input(batch: int) -> list[dict]:
    """Batch ``i``: two rows in hour ``i // 3``, and a late row two hours back every 4th."""
    hour = batch // 3
    rows = [
        row(1000 * batch + i, f"2026-11-20T{hour:02d}:{20 * i + batch % 3:02d}:00Z") for i in (0, 1)
    ]
    if batch % 4 == 3 and hour >= 2:
        rows.append(row(1000 * batch + 9, f"2026-11-20T{hour - 2:02d}:59:00Z"))
    return rows


def latest_commit(stream: StreamingTable) -> int:
    """The highest committed batch id, from the checkpoint's directory (independent)."""
    names = [p.name for p in (Path(stream.checkpoint) / "commits").glob("[0-9]*")]
    return max((int(n) for n in names if n.isdigit()), default=-1)


class Poller(threading.Thread):
    """Polls every reader of the table until stopped; keeps what each call saw."""

    def __init__(self, spec: TableSpec, name: str) -> None:
        super().__init__(daemon=True, name=name)
        self.spec = spec
        self.stop = threading.Event()
        self.calls = 0
        self.failures: list[str] = []
        self.watermarks: list[int] = []
        self.batches: list[int] = []
        self.committable_seen: dict[str, int] = {}

    def run(self) -> None:
        incremental = TableStatusReader(self.spec)
        table_spec = TableSpec.from_options(self.spec.to_dict())
        while not self.stop.is_set():
            try:
                for reader in (incremental, TableStatusReader(self.spec)):
                    status = reader.read()
                    self._record(status)
                # The wait's cheap look (the checkpoint only) agrees with the full read
                # whenever both saw the same batch.
                check = check_partition(self.spec, WAITED)
                if check.batch_id == status.checkpoint.latest_committed_batch:
                    assert check.committable == status.judge(WAITED)[1], check.reason
                report = read_table_report(table_spec)
                assert report.status.missing_files == [], report.status.missing_files
                self.calls += 4
            except Exception as exc:  # every failure is the finding, whatever its type
                self.failures.append(f"{type(exc).__name__}: {exc}")

    def _record(self, status) -> None:
        checkpoint = status.checkpoint
        if checkpoint.latest_committed_batch is None:
            return
        # Never a wrong answer: progress only goes forward, nothing is missing or orphaned
        # (this query never fails a batch), a committable partition stays committable.
        assert not self.batches or checkpoint.latest_committed_batch >= max(self.batches)
        assert not self.watermarks or (checkpoint.watermark_ms or 0) >= max(self.watermarks)
        assert status.missing_files == [] and status.orphan_files == [], status.orphan_files
        self.batches.append(checkpoint.latest_committed_batch)
        self.watermarks.append(checkpoint.watermark_ms or 0)
        now = {p.staged.path for p in status.in_state(PartitionState.COMMITTABLE)}
        assert set(self.committable_seen) <= now, set(self.committable_seen) - now
        for partition in now:
            self.committable_seen.setdefault(partition, checkpoint.latest_committed_batch)


@pytest.fixture
def slow_listings(monkeypatch):
    """Log listings of the thread named ``slow`` take longer than a micro-batch."""

    def listing(filesystem, directory):
        files = list_log(filesystem, directory)
        if threading.current_thread().name == "slow":
            time.sleep(1.5)
        return files

    for module in (checkpoint, sink_log):
        monkeypatch.setattr(module, "list_log", listing)


@pytest.mark.slow
def test_readers_and_compactions_of_a_stream_that_compacts_and_purges_its_logs(
    spark, tmp_path, slow_listings
):
    stream = StreamingTable(tmp_path / "stream", live=True, spark_conf=CLEANUP_CONF)
    table = str(tmp_path / "table")
    stream.add_batches(live_input(0))
    child = stream.run_in_child()
    pollers: list[Poller] = []
    try:
        deadline = time.monotonic() + 240
        while latest_commit(stream) < 0:
            assert child.poll() is None and time.monotonic() < deadline, "the query never ran"
            time.sleep(0.5)
        spec = TableSpec.from_options(table_options(stream, table))
        pollers = [Poller(spec, "fast"), Poller(spec, "slow")]
        for poller in pollers:
            poller.start()
        compactions = []
        slow = pollers[1]
        slow_calls = slow.calls
        for batch in range(1, BATCHES):
            stream.add_batches(live_input(batch))
            while latest_commit(stream) < batch:  # one input file per micro-batch
                assert child.poll() is None and time.monotonic() < deadline + 600, "stuck"
                time.sleep(1.5)
            if batch % 12 == 0:
                compactions.append(compact(stream.staging, stream.checkpoint, table))
            # At least three slow reads overlap the batches, however quick the compactions.
            if batch % 12 == 0 or batch == BATCHES - 1:
                while slow.calls == slow_calls and not slow.failures:
                    assert time.monotonic() < deadline + 600, "the slow reader is stuck"
                    time.sleep(0.5)
                slow_calls = slow.calls
    finally:
        for poller in pollers:
            poller.stop.set()
            poller.join(timeout=120)
        kill_group(child)

    for poller in pollers:
        assert poller.failures == [], (poller.name, poller.failures[:5])
        assert poller.calls >= (200 if poller.name == "fast" else 10), (poller.name, poller.calls)
    # The logs really were compacted and purged under the readers.
    sink_log = sorted(p.name for p in (Path(stream.staging) / "_spark_metadata").iterdir())
    assert any(n.endswith(".compact") for n in sink_log) and "0" not in sink_log, sink_log
    assert not (Path(stream.checkpoint) / "offsets" / "0").exists()
    for result in compactions:
        assert result.returncode in (0, 3), result.stdout[-2000:] + result.stderr[-2000:]
    assert any(r.returncode == 0 for r in compactions)

    # After the stream: one more run publishes the late rows; each partition holds its rows.
    done = committable(stream.staging, stream.checkpoint)
    for poller in pollers:
        assert poller.committable_seen and set(poller.committable_seen) <= {
            f"dt={d}/hour={h}" for d, h in done
        }
    final = compact(stream.staging, stream.checkpoint, table)
    assert final.returncode == 0, final.stdout[-2000:] + final.stderr[-2000:]
    assert check_exactly_once(spark, stream.staging, table, complete=done) > 0
