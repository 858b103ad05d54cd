"""The provider's metrics: sent through Airflow's own ``Stats``, where Airflow users look.

A platform team watches StatsD (or OpenTelemetry, per the deployment's ``[metrics]``
settings) and alerts on it; the status page tells the same only to whoever opens it. So
the tasks and triggers that learn how a table stands report it here, in the ``fscommit.``
namespace (after Airflow's own ``statsd_prefix``), and nothing is sent when metrics are off.

Each metric is sent twice, as Airflow sends its own (``ti.finish`` with its tags, and
``ti.finish.<dag_id>.<task_id>.<state>``): under its name with the table (and the policy)
as tags, for backends that take tags (DogStatsD, InfluxDB-style StatsD, OpenTelemetry),
and under its name followed by ``.<table>`` (``.<policy>``), for a plain StatsD whose
names are all it keeps. The values come from what the core returned (a run summary, a
discovery, a check); nothing is measured here.

A metric never fails a task or a trigger: an error while sending is logged and dropped.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from airflow_provider_fscommit.core.commit.committer import CommitTimings
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.status.discovery import Discovery
from airflow_provider_fscommit.version_compat import Stats

log = logging.getLogger(__name__)

NAMESPACE = "fscommit"
# What a StatsD name may hold (Airflow's own check): the table is one dotless segment.
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")
# This process's waiting partitions by table, and when each table's lag was last sent.
_WAITING: dict[str, set[str]] = {}
_LAST_LAG: dict[str, float] = {}


def table_name(spec: TableSpec) -> str:
    """The table's name in every metric: the metastore table when the spec names one (what
    the people alerting call the table), else the last folder of the published table, else
    of the staging table. Read from the spec alone, so a sensor, a compaction and a commit
    of the table agree, and it changes only when those settings do. Characters a StatsD
    name cannot hold, the dot included (it separates the name's levels), become ``_``.
    """
    for name in (spec.metastore_table, spec.table_path, spec.staging_path):
        if name:
            segment = name if name == spec.metastore_table else name.rstrip("/").split("/")[-1]
            safe = _UNSAFE.sub("_", segment).strip("_")
            if safe:
                return safe
    return "table"


class TableMetrics:
    """The metrics of one table, as its tasks and triggers send them."""

    def __init__(self, spec: TableSpec) -> None:
        self.table = table_name(spec)

    def watermark_lag(self, watermark_ms: int | None, every: float = 0.0) -> None:
        """``watermark.lag_seconds``: how far the stream's safe watermark is behind the
        clock (nothing before the watermark has left 0: the stream has not started).

        Sent again at every look, as the lag grows while the watermark stands still; the
        waiting partitions of a table in one triggerer share their looks, so it is sent
        at most once per ``every`` seconds and table, however many of them wait.
        """
        if not watermark_ms:
            return
        now = time.monotonic()
        if now - _LAST_LAG.get(self.table, -every) < every:
            return
        _LAST_LAG[self.table] = now
        lag = (time.time() * 1000 - watermark_ms) / 1000
        self._send(Stats.gauge, "watermark.lag_seconds", round(lag, 3))

    def waiting(self, partition: str, waits: bool) -> None:
        """``partitions.waiting``: how many of the table's partitions wait in this process
        (a triggerer's deferred sensors), sent when one starts or stops waiting."""
        table = _WAITING.setdefault(self.table, set())
        if (partition in table) == waits:
            return
        (table.add if waits else table.discard)(partition)
        self._send(Stats.gauge, "partitions.waiting", len(table))

    def stalled(self) -> None:
        """``stalls``: a wait that ended because the stream stalled."""
        self._send(Stats.incr, "stalls", 1)

    def compaction(self, summary: Mapping[str, Any]) -> None:
        """The compaction figures of a run that published something (its summary's
        totals): ``compaction.{files_in,files_out,bytes_in,bytes_out,rows}`` counters and
        the ``compaction.duration`` timer. A run with nothing to compact sends nothing, or
        idle runs would drag the duration's percentiles to zero."""
        if not summary.get("files_in"):
            return
        for name in ("files_in", "files_out", "bytes_in", "bytes_out", "rows"):
            self._send(Stats.incr, f"compaction.{name}", int(summary[name]))
        self._send(Stats.timing, "compaction.duration", timedelta(seconds=summary["seconds"]))

    def commit(self, timings: CommitTimings) -> None:
        """``commit.duration`` per policy (the policy as a tag), and ``partition.freshness``
        per partition committed for the first time."""
        for policy, seconds in timings.policy_seconds.items():
            self._send(Stats.timing, "commit.duration", timedelta(seconds=seconds), policy=policy)
        for seconds in timings.freshness_s.values():
            self._send(Stats.timing, "partition.freshness", timedelta(seconds=seconds))

    def discovery(self, found: Discovery) -> None:
        """What a whole table's discovery found: ``partitions.committable`` (never
        committed yet), ``partitions.error``, ``partitions.oldest_committable_age_seconds``
        (0 when none is waiting)."""
        self._send(Stats.gauge, "partitions.committable", found.uncommitted)
        self._send(Stats.gauge, "partitions.error", found.errors)
        since = found.oldest_committable_ms
        age = 0.0 if since is None else max(0.0, (found.now_ms - since) / 1000)
        self._send(Stats.gauge, "partitions.oldest_committable_age_seconds", age)

    def _send(self, emit: Any, name: str, value: Any, **tags: str) -> None:
        """``emit`` the metric under both names (see the module); errors are only logged."""
        stat = f"{NAMESPACE}.{name}"
        try:
            emit(stat, value, tags={"table": self.table, **tags})
            emit(".".join([stat, self.table, *(_UNSAFE.sub("_", v) for v in tags.values())]), value)
        except Exception:  # a metric must never fail the task or the trigger
            log.warning("metric %s of table %s not sent", stat, self.table, exc_info=True)
