"""One process's looks at one waiting partition: what each poll costs (issue 32).

``python bench/poll.py SPEC_JSON PARTITION POLLS`` (run as a script, so that the package
comes from ``PYTHONPATH``: this checkout's or the code before the change) prints one JSON
object: per poll the wall and CPU milliseconds, the resident memory the poll added at its
peak (``VmHWM`` reset before each poll through ``/proc/self/clear_refs``, minus the
``VmRSS`` it started from) and the filesystem calls it made, counted by wrapping every
``resolve_filesystem`` the package's modules hold. The first poll is the one a fresh
process (a new triggerer, a reschedule-mode poke) pays; the others are the steady state
of a long-lived waiter. Only the standard library and the package: nothing else of the
checkout is imported, whichever code is measured.
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


def _count_calls() -> list[str]:
    """Wrap every ``resolve_filesystem`` the loaded package modules hold; the list grows
    by one entry per filesystem call (``list``, ``info``, ``open``)."""
    import pyarrow.fs as pafs

    calls: list[str] = []

    class Counting(pafs.FileSystemHandler):
        def __init__(self, inner: pafs.FileSystem) -> None:
            self.inner = inner

        def __eq__(self, other: object) -> bool:
            return isinstance(other, Counting) and self.inner.equals(other.inner)

        def __ne__(self, other: object) -> bool:
            return not self == other

        def get_type_name(self) -> str:
            return "counting"

        def normalize_path(self, path: str) -> str:
            return self.inner.normalize_path(path)

        def get_file_info(self, paths: list[str]) -> list[pafs.FileInfo]:
            calls.extend("info" for _ in paths)
            return self.inner.get_file_info(paths)

        def get_file_info_selector(self, selector: pafs.FileSelector) -> list[pafs.FileInfo]:
            calls.append("list")
            return self.inner.get_file_info(selector)

        def open_input_stream(self, path: str) -> Any:
            calls.append("open")
            return self.inner.open_input_stream(path)

        def open_input_file(self, path: str) -> Any:
            calls.append("open")
            return self.inner.open_input_file(path)

        # A wait writes nothing: whatever would write is refused, so the count is complete.
        def _writes(self, *args: Any) -> Any:
            raise PermissionError("bench/poll.py: a poll must not write")

        create_dir = delete_dir = delete_dir_contents = delete_root_dir_contents = _writes
        delete_file = move = copy_file = open_output_stream = open_append_stream = _writes

    def wrap(resolve: Any) -> Any:
        def counted(uri: str) -> tuple[pafs.FileSystem, str]:
            filesystem, path = resolve(uri)
            return pafs.PyFileSystem(Counting(filesystem)), path

        return counted

    for name, module in list(sys.modules.items()):
        if name.startswith("airflow_provider_fscommit") and hasattr(module, "resolve_filesystem"):
            module.resolve_filesystem = wrap(module.resolve_filesystem)
    return calls


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
                "calls": {op: calls[made:].count(op) for op in ("list", "info", "open")},
                "committable": check.committable,
            }
        )
    return {"package": airflow_provider_fscommit.__file__, "looks": looks}


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], sys.argv[2], int(sys.argv[3]))))
