"""Every difference between the Airflow lines this provider runs on (3.0 to 3.3), in one place.

As Airflow's own providers do (``providers/*/version_compat.py``), the rest of the package
imports the names that moved between lines from here and asks no version itself. What a
newer line adds degrades to what the older line offers:

- ``BaseHook`` comes from ``airflow.sdk`` from 3.1 on, from ``airflow.hooks.base`` on 3.0;
- ``AirflowException``, ``AirflowSkipException`` and ``CronDataIntervalTimetable`` are the
  Task SDK's from 3.2 on, the core's (``airflow.exceptions``, ``airflow.timetables``)
  before (the example DAGs import the timetable from here);
- one DAG run per partition: ``CronPartitionTimetable`` (runs named by a partition key,
  no data interval) from 3.2 on, ``CronDataIntervalTimetable`` before; 3.2 writes a run's
  key from its UTC instant, 3.3 on the timetable's clock (``partition_timetable``,
  ``partition_key_zone``);
- ``mask_secret`` is in ``airflow.sdk.log`` from 3.0.6 on, in the Task SDK's secrets
  masker before;
- partitioned asset events: one event per committed partition's key (``add_partitions``)
  from 3.3 on; before, one plain asset event whose ``extra`` lists the partitions (on 3.2
  it carries the run's key);
- a downstream DAG scheduled on a rollup of the table's partitioned asset events
  (``RollupMapper``, ``DayWindow``) from 3.3 on; before, none (``daily_rollup_timetable``);
- ``Stats`` (the metrics) through the common.compat provider, which finds it where each line
  keeps it; from ``airflow.stats`` with a common.compat provider too old to (the Spark
  provider requires only 1.23);
- the commit-status page's entry in the UI's *Browse* menu (``external_views``) from 3.1
  on; on 3.0 the page is reached by its URL, ``/fscommit/``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pendulum
from airflow import __version__ as _airflow_version
from packaging.version import Version

from airflow_provider_fscommit.core.partition.partition_key import PARTITION_KEY_FORMAT

AIRFLOW_VERSION = Version(Version(_airflow_version).base_version)
AIRFLOW_V_3_1_PLUS = Version("3.1.0") <= AIRFLOW_VERSION
AIRFLOW_V_3_2_PLUS = Version("3.2.0") <= AIRFLOW_VERSION
AIRFLOW_V_3_3_PLUS = Version("3.3.0") <= AIRFLOW_VERSION

if AIRFLOW_V_3_1_PLUS:
    from airflow.sdk import BaseHook
else:
    from airflow.hooks.base import BaseHook

if AIRFLOW_V_3_2_PLUS:
    from airflow.sdk import CronDataIntervalTimetable, CronPartitionTimetable
    from airflow.sdk.exceptions import AirflowException, AirflowSkipException
else:
    from airflow.exceptions import AirflowException, AirflowSkipException
    from airflow.timetables.interval import CronDataIntervalTimetable

try:
    from airflow.providers.common.compat.sdk import Stats
except ImportError:  # a common.compat provider before Stats: the core's, on 3.0 to 3.2
    from airflow.stats import Stats

try:
    from airflow.sdk.log import mask_secret
except ImportError:  # 3.0.0 to 3.0.5
    from airflow.sdk.execution_time.secrets_masker import mask_secret

#: What this Airflow can show of partitioned asset events, for the compatibility table.
PARTITIONED_ASSET_EVENTS = AIRFLOW_V_3_3_PLUS
#: Whether a DAG can run once per partition key (``CronPartitionTimetable``).
PARTITIONED_RUNS = AIRFLOW_V_3_2_PLUS
#: Whether a DAG can be scheduled on a rollup of partitioned asset events.
PARTITION_ROLLUPS = AIRFLOW_V_3_3_PLUS
#: Whether plugins can add entries to the UI's navigation (``external_views``).
UI_MENU_ENTRIES = AIRFLOW_V_3_1_PLUS


def partition_timetable(cron: str, zone: pendulum.Timezone) -> Any:
    """The timetable of one run per partition, each starting on ``cron`` in ``zone``.

    From 3.2 a ``CronPartitionTimetable`` whose run at a tick commits the partition of the
    tick before (``run_offset=-1``), named by its key (``PARTITION_KEY_FORMAT``): catch-up,
    ``airflow backfill create`` and clearing work on keys. Before, the data-interval
    timetable: the run of 01:00 covers [01:00, 02:00).
    """
    if PARTITIONED_RUNS:
        return CronPartitionTimetable(
            cron, timezone=zone, run_offset=-1, key_format=PARTITION_KEY_FORMAT
        )
    return CronDataIntervalTimetable(cron, timezone=zone)


def partition_key_zone(zone: pendulum.Timezone) -> pendulum.Timezone:
    """The clock a run's partition key is written on by a timetable in ``zone``.

    3.3 formats the key on the timetable's clock; 3.2 formats the tick's UTC instant
    (``_format_key`` without a zone), so a Shanghai table's run of its 03:00 hour is keyed
    ``…T19:00:00`` of the day before there: the run still commits the right hour.
    """
    return zone if AIRFLOW_V_3_3_PLUS else pendulum.UTC


def announce_partitions(outlet_event: Any, keys: Sequence[str], extra: Mapping[str, Any]) -> None:
    """Emit the table asset's event for the partitions committed by this task.

    From Airflow 3.3 the event carries the committed partitions' ``keys`` (their times:
    ``core.partition.partition_key``), so a DAG scheduled with ``PartitionedAssetTimetable``
    runs once per key and a rollup mapper reads them; before, it is one plain asset event
    (on 3.2 it inherits the run's key) and consumers read ``extra["partitions"]``. With no
    key (partitions without a time) the event inherits the run's key, if any.
    """
    if PARTITIONED_ASSET_EVENTS and keys:
        outlet_event.add_partitions(list(keys))
    outlet_event.extra = dict(extra)


def daily_rollup_timetable(asset: Any, zone: pendulum.Timezone) -> Any | None:
    """One run a day once all 24 hourly partitions of ``asset`` are announced (3.3+), else None.

    The events' keys are the hours' starts on the partitions' clock in Airflow's default
    form (``core.partition.partition_key``), which ``StartOfDayMapper`` reads as they are;
    ``DayWindow`` holds the day's run until its 24th hour is announced.
    """
    if not PARTITION_ROLLUPS:
        return None
    from airflow.sdk import DayWindow, PartitionedAssetTimetable, RollupMapper, StartOfDayMapper

    rollup = RollupMapper(upstream_mapper=StartOfDayMapper(timezone=zone), window=DayWindow())
    return PartitionedAssetTimetable(assets=asset, default_partition_mapper=rollup)


def ui_menu_entries(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A plugin's ``external_views``: ``entries`` where the UI shows them, else none."""
    return entries if UI_MENU_ENTRIES else []


__all__ = [
    "AIRFLOW_VERSION",
    "AIRFLOW_V_3_1_PLUS",
    "AIRFLOW_V_3_2_PLUS",
    "AIRFLOW_V_3_3_PLUS",
    "PARTITIONED_ASSET_EVENTS",
    "PARTITIONED_RUNS",
    "PARTITION_ROLLUPS",
    "UI_MENU_ENTRIES",
    "AirflowException",
    "AirflowSkipException",
    "BaseHook",
    "CronDataIntervalTimetable",
    "Stats",
    "announce_partitions",
    "daily_rollup_timetable",
    "mask_secret",
    "partition_key_zone",
    "partition_timetable",
    "ui_menu_entries",
]
