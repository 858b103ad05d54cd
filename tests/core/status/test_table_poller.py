"""One poller per table and event loop: one look per interval, whoever waits on it.

On a synthetic log and checkpoint in Spark's format (``fscommit_dev/synthetic_log.py``):
watermark 07:30 on the first day, so hour 06 is committable and hours 07 to 09 wait. The
looks are counted on the filesystem (the checkpoint's ``commits/`` listings), never timed.
"""

from __future__ import annotations

import asyncio
import threading
from datetime import timedelta

import pytest

from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.errors import PartitionTimeError
from airflow_provider_fscommit.core.spark import checkpoint, sink_log
from airflow_provider_fscommit.core.status.table_poller import Terms, pollers, subscribe
from airflow_provider_fscommit.core.status.table_watch import table_watch
from airflow_provider_fscommit.core.storage.object_store import S3Settings, use_s3_settings
from fscommit_dev.counting_fs import counting
from fscommit_dev.synthetic_log import (
    FIRST_HOUR,
    SyntheticLog,
    hourly_partition,
    write_checkpoint_batch,
)
from fscommit_dev.tables import hourly_table

INTERVAL = 0.2
OTHER_IDENTITY = S3Settings(endpoint_url="http://127.0.0.1:9")  # a local table never uses it


@pytest.fixture
def log(tmp_path) -> SyntheticLog:
    written = SyntheticLog(tmp_path / "stream", entries=1_000, partitions=10)
    written.write()
    return written


def spec_of(log: SyntheticLog, **options) -> TableSpec:
    return TableSpec.from_options(hourly_table(str(log.staging), str(log.checkpoint), **options))


def move_watermark(log: SyntheticLog, hours: float) -> None:
    """A new committed batch whose watermark is ``hours`` after the first hour."""
    watermark = int((FIRST_HOUR + timedelta(hours=hours)).timestamp() * 1000)
    write_checkpoint_batch(log.checkpoint, log.batches, watermark)


async def quiet_for(subscription, intervals: int = 5) -> bool:
    """Whether ``subscription`` is handed nothing for ``intervals`` intervals."""
    try:
        await asyncio.wait_for(subscription.next(), INTERVAL * intervals)
    except asyncio.TimeoutError:
        return True
    return False


def test_many_waiting_partitions_of_a_table_share_one_look_per_interval(log, monkeypatch):
    spec = spec_of(log)
    looked: list[int] = []
    patience = timedelta(hours=2)  # each asks since when the watermark stands: shared too

    async def wait_many():
        subscriptions = [
            subscribe(
                spec, Terms(hourly_partition(7 + i % 3), INTERVAL, patience), on_look=looked.append
            )
            for i in range(30)
        ]
        (poller,) = {s.poller for s in subscriptions}
        first = [await s.next() for s in subscriptions]
        started, looks = asyncio.get_running_loop().time(), poller.looks
        # Nothing changes: each waits, unwoken, while the poller keeps looking.
        unwoken = await asyncio.gather(*(quiet_for(s, 8) for s in subscriptions))
        elapsed = asyncio.get_running_loop().time() - started
        for subscription in subscriptions:
            subscription.close()
        return first, unwoken, poller.looks - looks, elapsed, poller.looks

    with counting(monkeypatch, checkpoint, sink_log) as seen:
        first, unwoken, looks, elapsed, total = asyncio.run(wait_many())
    assert {c.partition for c in first} == {hourly_partition(h) for h in (7, 8, 9)}
    assert not any(c.committable or c.stalled for c in first)
    assert all(c.reason.startswith("waiting: watermark 2025-01-01T07:30") for c in first)
    assert all(unwoken)
    listed = [p.rpartition("/")[2] for operation, p in seen if operation == "list"]
    # One look per interval, each listing the checkpoint once for thirty waiting partitions
    # (not thirty times; since when the watermark stands is answered from the look's
    # listings, once), and the watermark's lag sent once per look.
    assert 3 <= looks <= elapsed / INTERVAL + 2
    assert total <= listed.count("commits") < 2 * total and len(looked) == total
    assert listed.count("offsets") == listed.count("commits")
    assert set(looked) == {first[0].watermark_ms}
    assert pollers() == []


def test_a_partition_that_becomes_committable_fires_while_the_others_wait(log):
    spec = spec_of(log)

    async def wait():
        hours = {h: subscribe(spec, Terms(hourly_partition(h), INTERVAL)) for h in (7, 8, 9)}
        poller = hours[7].poller
        for subscription in hours.values():
            assert not (await subscription.next()).committable
        move_watermark(log, 8.5)  # past hour 07's commit time (08:00), not hour 08's
        seen = {h: await s.next() for h, s in hours.items()}
        left = poller.subscribers
        later = {h: await quiet_for(hours[h]) for h in (8, 9)}
        for subscription in hours.values():
            subscription.close()
        return seen, left, later, poller

    seen, left, later, poller = asyncio.run(wait())
    assert seen[7].committable and seen[7].partition == hourly_partition(7)
    assert "watermark 2025-01-01T08:30:00.000+00:00 passed" in seen[7].reason
    for hour in (8, 9):  # woken, as what they see changed, and waiting still
        assert not seen[hour].committable and "watermark 2025-01-01T08:30" in seen[hour].reason
    assert left == 2 and later == {8: True, 9: True} and poller.stopped


def test_a_cancelled_waiter_leaves_and_the_last_one_stops_the_poller(log):
    spec = spec_of(log)

    async def wait():
        async def waiter(hour: int, seen: list) -> None:
            with subscribe(spec, Terms(hourly_partition(hour), INTERVAL)) as subscription:
                while True:
                    seen.append(await subscription.next())

        seen7: list = []
        seen8: list = []
        first = asyncio.create_task(waiter(7, seen7))
        second = asyncio.create_task(waiter(8, seen8))
        while not (seen7 and seen8):
            await asyncio.sleep(INTERVAL / 10)
        (poller,) = pollers()
        first.cancel()  # the triggerer stops it, or its task times out
        await asyncio.gather(first, return_exceptions=True)
        looks = poller.looks
        alone = poller.subscribers
        move_watermark(log, 8.5)
        while len(seen8) < 2:
            await asyncio.sleep(INTERVAL / 10)
        still = poller.looks > looks and not poller.stopped and pollers() == [poller]
        second.cancel()
        await asyncio.gather(second, return_exceptions=True)
        while not poller.stopped:  # its task takes its cancellation
            await asyncio.sleep(INTERVAL / 10)
        return alone, still, len(seen7), seen8[-1], poller

    alone, still, said7, last8, poller = asyncio.run(wait())
    assert alone == 1 and still and said7 == 1
    assert "watermark 2025-01-01T08:30" in last8.reason and not last8.committable
    assert poller.stopped and poller.subscribers == 0 and pollers() == []


def test_each_table_identity_and_loop_gets_a_poller_of_its_own(log, tmp_path):
    other_log = SyntheticLog(tmp_path / "other", entries=1_000, partitions=10)
    other_log.write()
    spec, other = spec_of(log), spec_of(other_log)
    same = spec_of(log)  # an equal spec, another object

    async def wait():
        terms = Terms(hourly_partition(7), INTERVAL)
        subscriptions = [
            subscribe(spec, terms),
            subscribe(same, Terms(hourly_partition(8), INTERVAL)),
            subscribe(other, terms),
            subscribe(spec, terms, settings=OTHER_IDENTITY),
        ]
        for subscription in subscriptions:
            await subscription.next()
        distinct = len(pollers())
        in_thread = []
        thread = threading.Thread(target=lambda: in_thread.append(asyncio.run(loop_of_its_own())))
        thread.start()
        await asyncio.to_thread(thread.join)
        for subscription in subscriptions:
            subscription.close()
        return [s.poller for s in subscriptions], distinct, in_thread

    async def loop_of_its_own():
        with subscribe(spec, Terms(hourly_partition(7), INTERVAL)) as subscription:
            await subscription.next()
            return subscription.poller, len(pollers())

    owners, distinct, ((threads_poller, seen_there),) = asyncio.run(wait())
    assert owners[0] is owners[1] and len({id(p) for p in owners}) == 3 and distinct == 3
    assert threads_poller not in owners and seen_there == 4
    assert owners[3].settings == OTHER_IDENTITY

    def unseen():
        raise AssertionError("the poller looked under the other identity, so no new look")

    # The other identity's look ran under its settings: its own watch of the table holds it.
    with use_s3_settings(OTHER_IDENTITY):
        kept = table_watch(spec).recent("checkpoint", 3600, unseen)
    assert kept.watermark_ms == int((FIRST_HOUR + timedelta(hours=7.5)).timestamp() * 1000)
    assert pollers() == []


def test_a_stalled_stream_fires_stalled_for_those_with_a_stall_timeout(log):
    spec = spec_of(log)

    async def wait():
        patient = subscribe(spec, Terms(hourly_partition(7), INTERVAL))
        hasty = [
            subscribe(spec, Terms(hourly_partition(h), INTERVAL, timedelta(milliseconds=50)))
            for h in (8, 9)
        ]
        waiting = await patient.next()
        verdicts = []
        for subscription in hasty:
            verdict = await subscription.next()
            while not verdict.stalled:  # waiting until the watermark is 50 ms old
                verdict = await subscription.next()
            verdicts.append(verdict)
        left, unwoken = patient.poller.subscribers, await quiet_for(patient)
        for subscription in [patient, *hasty]:
            subscription.close()
        return waiting, verdicts, left, unwoken

    waiting, verdicts, left, unwoken = asyncio.run(wait())
    assert not waiting.stalled and not waiting.committable
    assert [v.partition for v in verdicts] == [hourly_partition(h) for h in (8, 9)]
    assert all(v.stalled and "stalled or idle" in v.reason for v in verdicts)
    assert left == 1 and unwoken


def test_a_partition_that_cannot_be_judged_fails_alone(log):
    spec = spec_of(log)

    async def wait():
        good = subscribe(spec, Terms(hourly_partition(7), INTERVAL))
        bad = subscribe(spec, Terms("dt=bad/hour=xx", INTERVAL))
        with pytest.raises(PartitionTimeError, match="cannot parse partition time"):
            await bad.next()
        judged = await good.next()
        left = good.poller.subscribers
        bad.close()
        good.close()
        return judged, left

    judged, left = asyncio.run(wait())
    assert not judged.committable and left == 1


def test_the_shortest_interval_of_the_subscribers_is_the_pollers():
    async def wait(spec):
        slow = subscribe(spec, Terms(hourly_partition(7), 30.0))
        fast = subscribe(spec, Terms(hourly_partition(8), 0.5))
        intervals = [slow.poller.interval_s]
        fast.close()
        intervals.append(slow.poller.interval_s)
        slow.close()
        return intervals

    spec = TableSpec.from_options(hourly_table("/nonexistent/s", "/nonexistent/c"))
    assert asyncio.run(wait(spec)) == [0.5, 30.0]
