"""One poller per table in an event loop: the waiting partitions subscribe, and sleep.

A triggerer holds a thousand waiting partitions of twenty tables. Polling each partition
on its own meant a thousand wake-ups, a thousand hops to a worker thread and a thousand
verdicts every interval, to learn what twenty looks at the tables tell: 1.5 times what
Airflow spends on holding as many triggers that do nothing. A :class:`TablePoller` is one
asyncio task per table spec, S3 settings and event loop that, while anyone subscribes,
looks at the table once per interval (the shortest its subscribers asked for) in one
worker thread, judges every subscribed partition there with the subscriber's own stall
timeout and process-time fallback (:func:`~.partition_wait.check_partition`, so a
deferred wait and a poking one judge alike), and wakes only the subscribers whose verdict
changed: new words, committable or stalled. A subscriber that is not woken costs nothing.

Keyed by the event loop: ``airflow dags test`` runs each deferred trigger in a loop of
its own, and a task of one loop cannot wake a waiter of another. Keyed by the S3 settings:
the look runs under them (the thread is the poller's, not a subscriber's, so they are set
there), and another identity may see another table. A newcomer is judged at once, from a
look younger than half the interval if there is one (:meth:`.TableWatch.recent`), and the
poller stops, and leaves the registry, when its last subscriber leaves.

Everything but the look runs on the loop: subscribers' queues are filled there, never
from the thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Union

from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.status.partition_wait import PartitionCheck, check_partition
from airflow_provider_fscommit.core.storage.object_store import S3Settings, use_s3_settings

log = logging.getLogger(__name__)

# What a look hands a subscriber: its verdict, or the error its verdict raised.
Update = Union[PartitionCheck, BaseException]
_Key = tuple[str, Union[S3Settings, None], asyncio.AbstractEventLoop]


class PollerStopped(RuntimeError):
    """The poller of a subscription stopped while the subscription still waited (its event
    loop is shutting down)."""


@dataclass(frozen=True)
class Terms:
    """What one waiting partition asks of each look."""

    partition: str
    interval_s: float
    stall_timeout: timedelta | None = None
    process_time_fallback: timedelta | None = None


class Subscription:
    """One waiting partition's place at its table's poller: :meth:`next` waits for the next
    verdict that differs from the last one; :meth:`close` leaves (idempotent, and safe from
    any thread or after the loop stopped)."""

    def __init__(self, poller: TablePoller, terms: Terms) -> None:
        self.poller = poller
        self.terms = terms
        self._updates: asyncio.Queue[Update] = asyncio.Queue()
        self._said: str | None = None  # the reason of the last verdict handed over
        self.closed = False

    async def next(self) -> PartitionCheck:
        """The next changed verdict (the first one at once); raises what judging raised."""
        update = await self._updates.get()
        if isinstance(update, BaseException):
            raise update
        return update

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.poller._leave(self)

    def __enter__(self) -> Subscription:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _hand(self, update: Update) -> bool:
        """Queue ``update`` if it is news (on the loop); True when it ends the wait."""
        if isinstance(update, BaseException):
            self._updates.put_nowait(update)
            return True
        final = update.committable or update.stalled
        if final or update.reason != self._said:
            self._said = update.reason
            self._updates.put_nowait(update)
        return final


class TablePoller:
    """The looks at one table in one event loop for whoever subscribes; see the module."""

    def __init__(
        self,
        key: _Key,
        spec: TableSpec,
        settings: S3Settings | None,
        on_look: Callable[[int | None], None] | None,
    ) -> None:
        self.key = key
        self.spec = spec
        self.settings = settings
        self.loop = key[2]
        self.looks = 0  # looks taken in the worker thread (a newcomer's included)
        self._on_look = on_look
        self._subscribers: dict[Subscription, None] = {}  # in the order they came
        self._unjudged: dict[Subscription, None] = {}
        self._wake = asyncio.Event()
        # The poller belongs to no subscriber: its task runs in a context of its own, not
        # in the first subscriber's (a triggerer binds each trigger's log context there).
        self._task: asyncio.Task[None] = contextvars.Context().run(
            self.loop.create_task, self._run(), name=f"fscommit table poller {key[0][:60]}"
        )

    @property
    def subscribers(self) -> int:
        return len(self._subscribers)

    @property
    def interval_s(self) -> float:
        """The shortest interval a subscriber asked for."""
        return min((s.terms.interval_s for s in self._subscribers), default=0.0)

    @property
    def stopped(self) -> bool:
        return self._task.done()

    def _join(self, subscription: Subscription) -> None:
        self._subscribers[subscription] = None
        self._unjudged[subscription] = None
        self._wake.set()

    def _leave(self, subscription: Subscription) -> None:
        self._subscribers.pop(subscription, None)
        self._unjudged.pop(subscription, None)
        if not self._subscribers:
            self._stop()

    def _stop(self) -> None:
        """Out of the registry now (a newcomer gets a new poller), and the task cancelled."""
        with _LOCK:
            if _POLLERS.get(self.key) is self:
                del _POLLERS[self.key]
        if self._task.done():
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self.loop:
            self._task.cancel()
        else:  # left from another thread, or after the loop stopped
            with contextlib.suppress(RuntimeError):  # the loop is closed: so is the task
                self.loop.call_soon_threadsafe(self._task.cancel)

    async def _run(self) -> None:
        last_look = None  # loop time of the last look at every subscriber
        try:
            while self._subscribers:
                self._wake.clear()
                now = self.loop.time()
                if last_look is None or now >= last_look + self.interval_s:
                    batch = list(self._subscribers)
                    last_look = now
                else:  # newcomers only, at once
                    batch = list(self._unjudged)
                if batch:
                    await self._look(batch)
                if self._subscribers and not self._unjudged:
                    wait = last_look + self.interval_s - self.loop.time()
                    if wait > 0:
                        with contextlib.suppress(asyncio.TimeoutError):
                            await asyncio.wait_for(self._wake.wait(), wait)
        finally:
            with _LOCK:
                if _POLLERS.get(self.key) is self:
                    del _POLLERS[self.key]
            for subscription in list(self._subscribers):  # nobody waits for nothing
                subscription._hand(PollerStopped(f"the poller of {self.spec.staging_path} stopped"))
            self._subscribers.clear()

    async def _look(self, batch: list[Subscription]) -> None:
        """One look in the worker thread, each verdict handed over here, on the loop."""
        for subscription in batch:
            self._unjudged.pop(subscription, None)
        terms = [s.terms for s in batch]
        max_age = timedelta(seconds=self.interval_s / 2)
        verdicts = await asyncio.to_thread(self._judge, terms, max_age)
        self.looks += 1
        watermark = None
        for subscription, verdict in zip(batch, verdicts):
            if isinstance(verdict, PartitionCheck):
                watermark = verdict.watermark_ms
            if subscription in self._subscribers and subscription._hand(verdict):
                # Its wait is over: judged no more, whenever its owner leaves.
                self._subscribers.pop(subscription, None)
        if self._on_look is not None and any(isinstance(v, PartitionCheck) for v in verdicts):
            try:
                self._on_look(watermark)
            except Exception:  # a metric must never stop the looks
                log.warning("on_look of %s failed", self.spec.staging_path, exc_info=True)

    def _judge(self, terms: list[Terms], max_age: timedelta) -> list[Update]:
        """Every verdict of a look (in the worker thread): the first one looks at the
        table, the others judge from that look (it is younger than ``max_age``)."""
        verdicts: list[Update] = []
        with use_s3_settings(self.settings):
            for term in terms:
                try:
                    verdicts.append(
                        check_partition(
                            self.spec,
                            term.partition,
                            term.stall_timeout,
                            term.process_time_fallback,
                            max_age=max_age,
                        )
                    )
                except Exception as error:  # this partition's wait fails, not the others'
                    verdicts.append(error)
        return verdicts


_POLLERS: dict[_Key, TablePoller] = {}
_LOCK = threading.Lock()


def subscribe(
    spec: TableSpec,
    terms: Terms,
    *,
    settings: S3Settings | None = None,
    on_look: Callable[[int | None], None] | None = None,
) -> Subscription:
    """Wait for ``terms.partition`` of ``spec``'s table at the running loop's poller of the
    table under ``settings`` (started for the first subscriber). ``on_look`` is called on
    the loop with the watermark after each look (the first subscriber's is kept: the
    table's metrics, sent once per look rather than once per waiting partition)."""
    loop = asyncio.get_running_loop()
    key: _Key = (spec.to_json(), settings, loop)
    with _LOCK:
        poller = _POLLERS.get(key)
        if poller is None:
            poller = _POLLERS[key] = TablePoller(key, spec, settings, on_look)
    subscription = Subscription(poller, terms)
    poller._join(subscription)
    return subscription


def pollers() -> list[TablePoller]:
    """The pollers of this process, every loop's."""
    with _LOCK:
        return list(_POLLERS.values())
