"""The trigger only waits, serializes to plain kwargs and fires once."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
from datetime import timedelta

from structlog.testing import capture_logs

from airflow_provider_fscommit.core.status.table_poller import pollers
from airflow_provider_fscommit.metrics import TableMetrics
from airflow_provider_fscommit.triggers.watermark import PartitionWatermarkTrigger
from fscommit_dev.synthetic_log import (
    FIRST_HOUR,
    SyntheticLog,
    hourly_partition,
    write_checkpoint_batch,
)
from fscommit_dev.tables import hourly_table
from tests.support.compaction import table_options


def first_event(trigger: PartitionWatermarkTrigger):
    async def take():
        async for event in trigger.run():
            return event.payload

    return asyncio.run(asyncio.wait_for(take(), timeout=120))


def test_serializes_to_an_importable_path_and_plain_kwargs(hourly_stream, tmp_path):
    trigger = PartitionWatermarkTrigger(
        table_options(hourly_stream, str(tmp_path / "t")), "dt=2026-11-20/hour=00", 5.0, 60.0
    )
    path, kwargs = trigger.serialize()
    module, _, name = path.rpartition(".")
    rebuilt = getattr(importlib.import_module(module), name)(**kwargs)
    assert rebuilt.serialize() == (path, kwargs)


def test_fires_when_committable_or_stalled_and_writes_nothing(hourly_stream, tmp_path):
    table = table_options(hourly_stream, str(tmp_path / "t"))
    before = sorted(p.name for p in tmp_path.iterdir())
    event = first_event(PartitionWatermarkTrigger(table, "dt=2026-11-20/hour=00", 0.1))
    assert event["committable"] and event["partition"] == "dt=2026-11-20/hour=00"
    stalled = first_event(
        PartitionWatermarkTrigger(table, "dt=2026-11-20/hour=03", 0.2, stall_timeout=0.5)
    )
    assert stalled["stalled"] and "stalled or idle" in stalled["reason"]
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_a_waiting_trigger_logs_what_it_sees_when_that_changes_not_every_poll(
    hourly_stream, tmp_path
):
    """A triggerer holds a thousand of these: a line per poll each would be 33 lines a
    second of the same words."""
    trigger = PartitionWatermarkTrigger(
        table_options(hourly_stream, str(tmp_path / "t")), "dt=2026-11-20/hour=03", 0.05
    )
    looks = []

    async def wait_a_while():
        async def count_looks():
            while True:
                looks[:] = [p.looks for p in pollers()]
                await asyncio.sleep(0.01)

        counter = asyncio.create_task(count_looks())
        try:
            async for event in trigger.run():
                raise AssertionError(f"hour 03 is pending, yet: {event.payload}")
        finally:
            counter.cancel()

    with capture_logs() as logged, contextlib.suppress(TimeoutError):
        asyncio.run(asyncio.wait_for(wait_a_while(), timeout=1.5))
    said = [e for e in logged if "waiting" in str(e.get("positional_args", e["event"]))]
    assert len(looks) == 1 and looks[0] >= 10 and len(said) == 1, (looks, logged)
    assert pollers() == []  # the trigger left when it was cancelled, and its poller stopped


def test_the_waiting_triggers_of_a_table_share_one_poller_and_each_fires_alone(
    tmp_path, monkeypatch
):
    """Twelve deferred sensors of one table in one triggerer: one look per interval for
    all of them, the watermark's lag sent once per look, and the partition the watermark
    passes fires while the others wait on."""
    log = SyntheticLog(tmp_path / "stream", entries=1_000, partitions=10)
    log.write()  # watermark 07:30 on its first day: hours 07 to 09 wait
    table = hourly_table(str(log.staging), str(log.checkpoint))
    triggers = [
        PartitionWatermarkTrigger(table, hourly_partition(7 + i % 3), 0.2) for i in range(12)
    ]
    lags = []
    monkeypatch.setattr(
        TableMetrics, "watermark_lag", lambda self, ms, every=0.0: lags.append((ms, every))
    )

    async def first(trigger):
        async for event in trigger.run():
            return event.payload

    async def triggerer():
        tasks = [asyncio.create_task(first(t)) for t in triggers]
        while not pollers() or pollers()[0].looks < 3:
            await asyncio.sleep(0.02)
        (poller,) = pollers()
        waiting = poller.subscribers
        watermark = int((FIRST_HOUR + timedelta(hours=8.5)).timestamp() * 1000)
        write_checkpoint_batch(log.checkpoint, log.batches, watermark)  # past 08:00
        fired = await asyncio.gather(*tasks[0::3])
        await asyncio.sleep(1.0)  # five more intervals
        pending = [t for t in tasks if not t.done()]
        still, looks = poller.subscribers, poller.looks
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        while pollers():
            await asyncio.sleep(0.01)
        return fired, waiting, len(pending), still, looks

    with capture_logs() as logged:
        fired, waiting, pending, still, looks = asyncio.run(
            asyncio.wait_for(triggerer(), timeout=60)
        )
    assert waiting == 12 and pending == 8 and still == 8
    assert all(e["committable"] and e["partition"] == hourly_partition(7) for e in fired)
    assert len(lags) == looks and {every for _, every in lags} == {0.1}
    lines = [str(e.get("positional_args", e["event"])) for e in logged]
    # Each logged what it first saw, then the hour-07 ones their event, the others that
    # the watermark moved: 24 lines however many looks.
    assert len(lines) == 24 and sum("passed the commit time" in line for line in lines) == 4
