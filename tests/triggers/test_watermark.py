"""The trigger only waits, serializes to plain kwargs and fires once."""

from __future__ import annotations

import asyncio
import importlib

from airflow_provider_fscommit.triggers.watermark import PartitionWatermarkTrigger
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
