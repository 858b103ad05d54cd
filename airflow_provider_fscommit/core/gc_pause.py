"""Python's cycle collector paused while a step makes an object per partition.

A year-old table's routine run decodes 8,760 summaries from the table state's checkpoint
and checks each against the sink log's count. None of these objects is part of a cycle,
but each is one the collector tracks: the allocations trigger dozens of young
collections and, as they age, a full one, which walks every object of the process (all
its imports: ~30 ms of a run here, more in an Airflow worker). Paused, the step's objects
are collected once when it ends, in a young collection. Nothing is lost: cyclic garbage
made meanwhile waits for the next collection.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_LOCK = threading.Lock()
# Steps inside a pause (nested, or in other threads), and whether the collector ran
# before the first of them: the last to end restores it, so a process that disabled the
# collector itself keeps it disabled.
_paused = 0
_was_enabled = False


@contextmanager
def gc_paused() -> Iterator[None]:
    """The collector paused for the block (and every block that overlaps it)."""
    global _paused, _was_enabled
    with _LOCK:
        if _paused == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _paused += 1
    try:
        yield
    finally:
        with _LOCK:
            _paused -= 1
            if _paused == 0 and _was_enabled:
                gc.enable()
