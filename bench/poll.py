"""One process's looks at one waiting partition: what each poll costs (issue 32).

``python bench/poll.py SPEC_JSON PARTITION POLLS`` (run as a script, so that the package
comes from ``PYTHONPATH``: this checkout's or the code before the change) prints one JSON
object: per poll the wall and CPU milliseconds, the resident memory the poll added at its
peak (``VmHWM`` reset before each poll through ``/proc/self/clear_refs``, minus the
``VmRSS`` it started from) and the filesystem calls it made, counted by wrapping every
``resolve_filesystem`` the package's modules hold in the tests' counting filesystem. The
first poll is the one a fresh process (a new triggerer, a reschedule-mode poke) pays; the
others are the steady state of a long-lived waiter. The package comes first on
``PYTHONPATH`` (this checkout's or the code before the change), the checkout after it
for ``fscommit_dev.counting_fs``.
"""

from __future__ import annotations

import json
import sys
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

_STATUS = Path("/proc/self/status")


def _kib(field: str) -> int:
    for line in _STATUS.read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    raise RuntimeError(f"{field} is not in {_STATUS}")


def _reset_peak() -> None:
    """Make VmHWM start again from VmRSS (Linux: write 5 to clear_refs)."""
    Path("/proc/self/clear_refs").write_text("5")


def _count_calls() -> list[tuple[str, str]]:
    """Wrap every ``resolve_filesystem`` the loaded package modules hold in the tests'
    counting filesystem; the list grows by one ``(operation, path)`` per call."""
    import pyarrow.fs as pafs

    from fscommit_dev.counting_fs import CountingHandler

    calls: list[tuple[str, str]] = []

    def wrap(resolve: Any) -> Any:
        def counted(uri: str) -> tuple[pafs.FileSystem, str]:
            filesystem, path = resolve(uri)
            handler = CountingHandler(filesystem)
            handler.calls = calls
            return pafs.PyFileSystem(handler), path

        return counted

    for name, module in list(sys.modules.items()):
        if name.startswith("airflow_provider_fscommit") and hasattr(module, "resolve_filesystem"):
            module.resolve_filesystem = wrap(module.resolve_filesystem)
    return calls


# What each counted operation is, as the report names it.
_KINDS = {"list": "list", "get_file_info": "info", "open_input_stream": "open",
          "open_input_file": "open"}  # fmt: skip


def main(spec_json: str, partition: str, polls: int) -> dict[str, Any]:
    import airflow_provider_fscommit
    from airflow_provider_fscommit.core.config.table_spec import TableSpec
    from airflow_provider_fscommit.core.status import partition_wait

    spec = TableSpec.from_options(json.loads(spec_json))
    calls = _count_calls()
    looks = []
    for _ in range(1 + polls):
        _reset_peak()
        rss, made = _kib("VmRSS"), len(calls)
        wall, cpu = time.perf_counter(), time.process_time()
        check = partition_wait.check_partition(spec, partition, stall_timeout=timedelta(days=1))
        looks.append(
            {
                "wall_ms": 1000 * (time.perf_counter() - wall),
                "cpu_ms": 1000 * (time.process_time() - cpu),
                "peak_added_mib": (_kib("VmHWM") - rss) / 1024,
                "calls": {
                    kind: [_KINDS.get(op) for op, _path in calls[made:]].count(kind)
                    for kind in ("list", "info", "open")
                },
                "committable": check.committable,
            }
        )
    return {"package": airflow_provider_fscommit.__file__, "looks": looks}


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], sys.argv[2], int(sys.argv[3]))))
