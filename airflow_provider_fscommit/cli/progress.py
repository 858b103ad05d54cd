"""Progress of a compaction run on stderr: partitions published out of planned.

On a terminal a bar is redrawn in place under the lines of the partitions already done,
so a long run shows how far it is and how long it has taken; in a log or a pipe (Airflow,
CI) each partition gets one ``[done/total]`` line instead, since a carriage return there
only makes noise.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

BAR_WIDTH = 30
CLEAR_LINE = "\r\x1b[K"


class Progress:
    """Reports a run's partitions as the compaction application publishes them."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self._stream = stream or sys.stderr
        self._tty = self._stream.isatty()
        self._started = time.monotonic()
        self._total = 0
        self._done = 0

    def starting(self) -> None:
        """Say why nothing happens for a while: the JVM starts before any planning."""
        self._write("starting the Spark application...\n")

    def planned(self, total: int) -> None:
        self._total = total
        self._write(f"planned {total} partition(s); compacting...\n")
        self._draw_bar()

    def partition_done(self, line: str) -> None:
        """One partition finished (published, up to date or failed), described by ``line``."""
        self._done += 1
        if self._tty:
            self._write(f"{CLEAR_LINE}{line}\n")
            self._draw_bar()
        else:
            self._write(f"[{self._done}/{self._total}] {line}\n")

    def close(self) -> None:
        """Leave the terminal's cursor on a fresh line after the bar."""
        if self._tty and self._total:
            self._write("\n")

    def bar(self) -> str:
        """``[#########.....]  3/12  0:42``: the share done and the time since the start."""
        filled = BAR_WIDTH * self._done // self._total if self._total else 0
        minutes, seconds = divmod(int(time.monotonic() - self._started), 60)
        return (
            f"[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {self._done}/{self._total}  "
            f"{minutes}:{seconds:02d}"
        )

    def _draw_bar(self) -> None:
        if self._tty and self._total:
            self._write(f"{CLEAR_LINE}{self.bar()}")

    def _write(self, text: str) -> None:
        self._stream.write(text)
        self._stream.flush()
