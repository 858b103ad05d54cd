"""Long compactions show how far they are: a bar on a terminal, a line per partition in logs."""

from __future__ import annotations

import io
import os
import pty
import re
import subprocess
import threading

import pytest

from airflow_provider_fscommit.cli.progress import Progress
from fscommit_dev.tables import hourly_table, table_flags
from tests.support.compaction import FSCOMMIT, committable


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_on_a_terminal_the_bar_is_redrawn_under_each_finished_partition():
    terminal = Terminal()
    progress = Progress(terminal)
    progress.planned(4)
    progress.partition_done("dt=2026-11-20/hour=00 compacted")
    assert progress.bar().startswith("[" + "#" * 7 + "." * 23 + "] 1/4  0:0")
    progress.close()
    screen = terminal.getvalue()
    # Each redraw clears the bar's line first; the partition's line then stays above it.
    assert "\r\x1b[Kdt=2026-11-20/hour=00 compacted\n\r\x1b[K[#######" in screen
    assert screen.endswith("1/4  0:00\n")


def test_in_a_log_each_partition_is_one_plain_line():
    log = io.StringIO()
    progress = Progress(log)
    progress.starting()
    progress.planned(2)
    progress.partition_done("dt=2026-11-20/hour=00 compacted")
    progress.partition_done("dt=2026-11-20/hour=01 FAILED: boom")
    progress.close()
    assert log.getvalue() == (
        "starting the Spark application...\n"
        "planned 2 partition(s); compacting...\n"
        "[1/2] dt=2026-11-20/hour=00 compacted\n"
        "[2/2] dt=2026-11-20/hour=01 FAILED: boom\n"
    )


@pytest.mark.slow
def test_fscommit_compact_in_a_terminal_shows_the_bar_then_the_summary(hourly_stream, tmp_path):
    ready = committable(hourly_stream.staging, hourly_stream.checkpoint)
    table = str(tmp_path / "table")
    options = hourly_table(hourly_stream.staging, hourly_stream.checkpoint, table_path=table)
    controller, terminal = pty.openpty()
    screen = bytearray()

    def read_screen() -> None:
        while True:
            try:
                chunk = os.read(controller, 4096)
            except OSError:  # the terminal's other side closed: the command is done
                return
            if not chunk:
                return
            screen.extend(chunk)

    reader = threading.Thread(target=read_screen)
    reader.start()
    try:
        done = subprocess.run(
            [
                FSCOMMIT,
                "compact",
                *table_flags(options),
                "--spark-master",
                "local[2]",
            ],
            stdout=subprocess.PIPE,
            stderr=terminal,
            text=True,
            timeout=600,
        )
    finally:
        os.close(terminal)
        reader.join(timeout=30)
        os.close(controller)
    shown = screen.decode()
    assert done.returncode == 0, shown
    total = len(ready)
    assert f"planned {total} partition(s)" in shown
    assert f"[{'#' * 30}] {total}/{total}" in shown
    assert len(re.findall(r"dt=\S+ published: \d+ file\(s\) -> \d+, \d+ rows, ", shown)) == total
    assert "file(s) in" in done.stdout
