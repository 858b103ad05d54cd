"""The trigger of a deferred ``TableCompletenessSensor``: it only waits.

It reads the catalog table's parameters in a worker thread (a Thrift or AWS call must not
block the triggerer's event loop), writes nothing, and fires once: the table is complete
through the time waited for, or the catalog refused (a missing table, refused
credentials). It logs what it sees when that changes, not every poll.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from airflow.triggers.base import BaseTrigger, TriggerEvent

from airflow_provider_fscommit.core.errors import FsCommitError
from airflow_provider_fscommit.hooks.completeness import CompletenessTable


class TableCompletenessTrigger(BaseTrigger):
    """Fires when the catalog table is complete through ``through_ms``, or refuses.

    :param table: the :class:`CompletenessTable` as plain fields (it travels through the
        database; connections are resolved in the triggerer, only their ids are stored).
    :param through_ms: the partition time waited for (epoch ms UTC).
    :param poll_interval: seconds between looks.
    """

    def __init__(self, table: dict[str, Any], through_ms: int, poll_interval: float = 60.0) -> None:
        super().__init__()
        self.table = CompletenessTable(**table).to_kwargs()
        self.through_ms = through_ms
        self.poll_interval = poll_interval

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return (
            f"{type(self).__module__}.{type(self).__qualname__}",
            {
                "table": self.table,
                "through_ms": self.through_ms,
                "poll_interval": self.poll_interval,
            },
        )

    async def run(self) -> AsyncIterator[TriggerEvent]:
        table = CompletenessTable(**self.table)
        said = None
        while True:
            try:
                published = await asyncio.to_thread(table.read_completeness)
            except FsCommitError as exc:
                yield TriggerEvent({"complete": False, "message": str(exc)})
                return
            complete, message = published.reaches(self.through_ms, table.name)
            if complete:
                yield TriggerEvent({"complete": True, "message": message})
                return
            if message != said:  # what changed, not the same line every poll
                self.log.info("%s", message)
                said = message
            await asyncio.sleep(self.poll_interval)
