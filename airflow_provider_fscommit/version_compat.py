"""Every difference between the Airflow lines this provider runs on (3.0 to 3.3), in one place.

As Airflow's own providers do (``providers/*/version_compat.py``), the rest of the package
imports the names that moved between lines from here and asks no version itself. What a
newer line adds degrades to what the older line offers:

- ``BaseHook`` comes from ``airflow.sdk`` from 3.1 on, from ``airflow.hooks.base`` on 3.0;
- ``AirflowException``, ``AirflowSkipException`` and ``CronDataIntervalTimetable`` are the
  Task SDK's from 3.2 on, the core's (``airflow.exceptions``, ``airflow.timetables``)
  before (the example DAGs import the timetable from here);
- ``mask_secret`` is in ``airflow.sdk.log`` from 3.0.6 on, in the Task SDK's secrets
  masker before;
- partitioned asset events: one event per committed partition (``add_partitions``) from
  3.3 on; before, one plain asset event whose ``extra`` lists the partitions;
- the commit-status page's entry in the UI's *Browse* menu (``external_views``) from 3.1
  on; on 3.0 the page is reached by its URL, ``/fscommit/``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from airflow import __version__ as _airflow_version
from packaging.version import Version

AIRFLOW_VERSION = Version(Version(_airflow_version).base_version)
AIRFLOW_V_3_1_PLUS = Version("3.1.0") <= AIRFLOW_VERSION
AIRFLOW_V_3_2_PLUS = Version("3.2.0") <= AIRFLOW_VERSION
AIRFLOW_V_3_3_PLUS = Version("3.3.0") <= AIRFLOW_VERSION

if AIRFLOW_V_3_1_PLUS:
    from airflow.sdk import BaseHook
else:
    from airflow.hooks.base import BaseHook

if AIRFLOW_V_3_2_PLUS:
    from airflow.sdk import CronDataIntervalTimetable
    from airflow.sdk.exceptions import AirflowException, AirflowSkipException
else:
    from airflow.exceptions import AirflowException, AirflowSkipException
    from airflow.timetables.interval import CronDataIntervalTimetable

try:
    from airflow.sdk.log import mask_secret
except ImportError:  # 3.0.0 to 3.0.5
    from airflow.sdk.execution_time.secrets_masker import mask_secret

#: What this Airflow can show of partitioned asset events, for the compatibility table.
PARTITIONED_ASSET_EVENTS = AIRFLOW_V_3_3_PLUS
#: Whether plugins can add entries to the UI's navigation (``external_views``).
UI_MENU_ENTRIES = AIRFLOW_V_3_1_PLUS


def announce_partitions(
    outlet_event: Any, partitions: Sequence[str], extra: Mapping[str, Any]
) -> None:
    """Emit the table asset's event for ``partitions`` committed by this task.

    From Airflow 3.3 the event carries one partition key per committed partition, so a DAG
    scheduled with ``PartitionedAssetTimetable`` runs once per partition; before, it is one
    plain asset event and consumers read the partitions from ``extra["partitions"]``.
    """
    if PARTITIONED_ASSET_EVENTS:
        outlet_event.add_partitions(list(partitions))
    outlet_event.extra = dict(extra)


def ui_menu_entries(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A plugin's ``external_views``: ``entries`` where the UI shows them, else none."""
    return entries if UI_MENU_ENTRIES else []


__all__ = [
    "AIRFLOW_VERSION",
    "AIRFLOW_V_3_1_PLUS",
    "AIRFLOW_V_3_2_PLUS",
    "AIRFLOW_V_3_3_PLUS",
    "PARTITIONED_ASSET_EVENTS",
    "UI_MENU_ENTRIES",
    "AirflowException",
    "AirflowSkipException",
    "BaseHook",
    "CronDataIntervalTimetable",
    "announce_partitions",
    "mask_secret",
    "ui_menu_entries",
]
