"""The trigger only waits, serializes to plain kwargs and fires once."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
from datetime import timedelta

from structlog.testing import capture_logs

from airflow_provider_fscommit.core.status.partition_wait import check_partition
from airflow_provider_fscommit.triggers import watermark
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


def test_a_waiting_trigger_logs_what_it_sees_when_that_changes_not_every_poll(
    hourly_stream, tmp_path, monkeypatch
):
    """A triggerer holds a thousand of these: a line per poll each would be 33 lines a
    second of the same words."""
    trigger = PartitionWatermarkTrigger(
        table_options(hourly_stream, str(tmp_path / "t")), "dt=2026-11-20/hour=03", 0.05
    )
    polls = []

    def counted(*args, **kwargs):
        polls.append(kwargs["max_age"])
        return check_partition(*args, **kwargs)

    monkeypatch.setattr(watermark, "check_partition", counted)

    async def wait_a_while():
        async for event in trigger.run():
            raise AssertionError(f"hour 03 is pending, yet: {event.payload}")

    with capture_logs() as logged, contextlib.suppress(TimeoutError):
        asyncio.run(asyncio.wait_for(wait_a_while(), timeout=1.5))
    said = [e for e in logged if "waiting" in str(e.get("positional_args", e["event"]))]
    assert len(polls) >= 10 and len(said) == 1, logged
    assert set(polls) == {timedelta(seconds=0.025)}  # looks shared for half an interval
