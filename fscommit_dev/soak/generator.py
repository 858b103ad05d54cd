"""The rows the soak's streams receive, and the record of every one of them.

A thread writes one JSON file per table every few seconds (under a hidden name, then
renamed, so a query never reads one half-written): rows whose event time is the wall
clock less up to two seconds. A table with late rows now and then also gets a row for a
minute three to five minutes old, which its DAG run has usually committed already: the
stateless query writes it into that partition and only the table's sweep can publish it.
The skewed table gets ten times the rows, nearly all on one key.

Every row written is recorded (table, id, event time, partition, when it was written,
late or not): the checks compare the sink log, the ledger, the published files and the
metastore with it, and the freshness of a partition counts from its last row's arrival.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from fscommit_dev.soak.tables import SoakTable


@dataclass(frozen=True)
class WrittenRow:
    table: str
    id: int
    ts_ms: int
    partition: str  # dt=…/hour=…/minute=…
    written_ms: int
    late: bool


def partition_of(ts_ms: int) -> str:
    """The partition the query derives from an event time (UTC wall clock)."""
    moment = datetime.fromtimestamp(ts_ms / 1000, UTC)
    return f"dt={moment:%Y-%m-%d}/hour={moment:%H}/minute={moment:%M}"


def partition_start_ms(partition: str) -> int:
    """The start of a partition's minute, as the spec's time extractor reads it (UTC)."""
    values = dict(part.split("=", 1) for part in partition.split("/"))
    moment = datetime.strptime(
        f"{values['dt']} {values['hour']}:{values['minute']}", "%Y-%m-%d %H:%M"
    ).replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)


class RowGenerator:
    """Feeds every table until stopped; :attr:`rows` is everything written."""

    def __init__(
        self, tables: list[SoakTable], file_seconds: float, seed: int, record: Path
    ) -> None:
        self.tables = tables
        self.file_seconds = file_seconds
        self.random = random.Random(seed)
        self.record = record
        self.rows: list[WrittenRow] = []
        self.late_rows_on = True
        self._next_id = {t.name: 0 for t in tables}
        self._files = {t.name: 0 for t in tables}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="soak-rows", daemon=True)

    def start(self) -> RowGenerator:
        self._thread.start()
        return self

    def stop(self) -> None:
        """No more rows (the watermark stops where the last rows put it)."""
        self._stop.set()
        self._thread.join(timeout=60)

    def write_round(self) -> None:
        """One file per table, now."""
        now_ms = int(time.time() * 1000)
        written: list[WrittenRow] = []
        for table in self.tables:
            rows = self._rows(table, now_ms)
            self._write(table, rows)
            written += rows
        self.rows += written
        with self.record.open("a") as out:
            out.writelines(json.dumps(asdict(r)) + "\n" for r in written)

    def _loop(self) -> None:
        while not self._stop.is_set():
            started = time.monotonic()
            self.write_round()
            self._stop.wait(max(0.0, self.file_seconds - (time.monotonic() - started)))

    def _rows(self, table: SoakTable, now_ms: int) -> list[WrittenRow]:
        rows = []
        for _ in range(table.rows_per_file):
            rows.append(self._row(table, now_ms - self.random.randint(0, 2000), now_ms, False))
        if table.late and self.late_rows_on and self.random.random() < 0.1:
            rows.append(
                self._row(table, now_ms - self.random.randint(180_000, 300_000), now_ms, True)
            )
        return rows

    def _row(self, table: SoakTable, ts_ms: int, now_ms: int, late: bool) -> WrittenRow:
        self._next_id[table.name] += 1
        return WrittenRow(
            table.name, self._next_id[table.name], ts_ms, partition_of(ts_ms), now_ms, late
        )

    def _write(self, table: SoakTable, rows: Iterable[WrittenRow]) -> None:
        lines = []
        for r in rows:
            skewed_key = "hot" if table.skewed and r.id % 10 else f"k{r.id % 7}"
            ts = datetime.fromtimestamp(r.ts_ms / 1000, UTC).isoformat(timespec="milliseconds")
            lines.append(json.dumps({"id": r.id, "ts": ts, "k": skewed_key, "v": r.id * 0.5}))
        index = self._files[table.name]
        self._files[table.name] += 1
        path = table.input_dir / f"rows-{index:06d}.json"
        hidden = path.with_name(f".{path.name}")
        hidden.write_text("\n".join(lines) + "\n")
        hidden.rename(path)
