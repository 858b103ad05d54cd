"""What one process knows about a table between looks, shared by everyone who looks.

A triggerer holds many waiting partitions of the same tables, and an api-server renders
the status page of the same tables again and again; each look used to read the table from
scratch, and a year-old stream's sink log holds a million entries. A :class:`TableWatch`
keeps the readers that make looks incremental: the checkpoint's parsed batch files
(:class:`CheckpointReader`) and the parsed sink log (:class:`TableStatusReader`), one per
table options and S3 identity in this process, for at most :data:`MAX_WATCHED_TABLES`
tables (the least recently looked at is forgotten, and costs one full read when looked
at again). The readers are not thread-safe: hold ``lock`` while using them.

A watch also keeps its last look at the table (:meth:`TableWatch.recent`): a thousand
waiting partitions of twenty tables each polling every 30 s would otherwise look at each
table fifty times per interval, to learn the same thing. Reusing a look younger than half
the poll interval makes the work per table and interval, whatever the number of waiting
partitions, and delays no verdict by more than that half interval.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, TypeVar

from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.spark.checkpoint import CheckpointReader
from airflow_provider_fscommit.core.spark.sink_log import FileSinkLog
from airflow_provider_fscommit.core.status.committable import TableStatusReader
from airflow_provider_fscommit.core.storage.object_store import S3Settings, current_settings

MAX_WATCHED_TABLES = 16
T = TypeVar("T")


class TableWatch:
    """One table's readers in this process; use them with ``lock`` held."""

    def __init__(self, spec: TableSpec) -> None:
        self.spec = spec
        self.lock = threading.Lock()
        self.checkpoint = CheckpointReader(spec.checkpoint_path)
        self._sink_log: FileSinkLog | None = None
        self._status: TableStatusReader | None = None
        self._recent: dict[str, tuple[float, Any]] = {}

    def recent(self, kind: str, max_age_s: float, look: Callable[[], T]) -> T:
        """``look()``'s answer, or the answer of the ``kind`` look taken less than
        ``max_age_s`` seconds ago (0: always a new look). A look that raises is not kept."""
        now = time.monotonic()
        kept = self._recent.get(kind)
        if kept is not None and now - kept[0] < max_age_s:
            return kept[1]
        answer = look()
        self._recent[kind] = (now, answer)
        return answer

    def sink_log(self) -> FileSinkLog:
        """The sink log, for a look at whether it is there (never read in full here)."""
        if self._sink_log is None:
            self._sink_log = FileSinkLog(self.spec.staging_path)
        return self._sink_log

    def status_reader(self) -> TableStatusReader:
        """The incremental reader of the whole table (sink log and checkpoint)."""
        if self._status is None:
            self._status = TableStatusReader(self.spec, self.checkpoint)
        return self._status


_WATCHES: OrderedDict[tuple[str, S3Settings], TableWatch] = OrderedDict()
_WATCHES_LOCK = threading.Lock()


def table_watch(spec: TableSpec) -> TableWatch:
    """This process's watch of ``spec``'s table under the S3 settings in effect (a watch
    keeps the filesystems it opened, so another identity gets its own)."""
    key = (spec.to_json(), current_settings())
    with _WATCHES_LOCK:
        watch = _WATCHES.get(key)
        if watch is None:
            watch = _WATCHES[key] = TableWatch(spec)
            while len(_WATCHES) > MAX_WATCHED_TABLES:
                _WATCHES.popitem(last=False)
        _WATCHES.move_to_end(key)
        return watch
