"""The engines compared on each workload, and how each is started.

Each engine compacts every committable partition of a workload's manifest into one output
directory laid out like the published table (``<out>/dt=…/hour=…/``), in a process of its
own (see ``measure.py``):

* ``floor-read`` / ``floor-copy``: the I/O floor, reading the input bytes, and copying them
  into one file per partition (``sendfile``; not a table, so not verified);
* ``pyarrow``: ``pq.read_table`` of a partition's files, ``pq.write_table`` (ORC:
  ``pyarrow.orc``'s, one file at a time), with the input's codec, one process, as a
  script would do it;
* ``duckdb``: ``COPY (SELECT * FROM read_parquet([...])) TO …`` per partition; Parquet
  only, DuckDB has no ORC writer (``Engine.unsupported``);
* ``naive-spark``: ``spark.read.<format>(files).coalesce(1).write`` per partition, in one
  spark-submit (``jobs/naive_spark.py``);
* ``fscommit``: our compaction job, run by ``fscommit compact``: the application, Spark
  conf, ``--py-files`` zip and idle check of ``jobs/launch.py`` that the operator's
  ``CompactionHook`` submits too, through spark-submit;
* ``fscommit-connect``: the same command with ``--spark-remote``: the protocol in the
  client process, the units on a Spark Connect server (``local[2]``) that the suite starts
  once and keeps running, as a deployment would; the server is not part of the measured
  process tree (its JVM is shared by every run, like a cluster's);
* ``duckdb-sorted`` / ``fscommit-connect-sorted``: the same two with the rows sorted by
  ``s, ts`` (``ORDER BY``, ``--sort-by``), on workloads (a) and (b) (issue #47).

Hive-style directory names are not turned into columns by pyarrow or DuckDB
(``partitioning=None``, ``hive_partitioning=false``): the partition values live in the
path, as in the table Spark and fscommit write.

In-process engines run as ``python -m bench.engines ENGINE MANIFEST OUT`` and report the
seconds of their work alone; the parent also times the whole process.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from bench.measure import Measurement, print_result
from bench.settings import SPARK_MASTER, python
from bench.spark import submit_command
from bench.workloads import WorkloadInput

_COPY_CHUNK = 64 * 1024 * 1024
_READ_CHUNK = 1024 * 1024


@dataclass(frozen=True)
class Engine:
    """How to run one engine and read its in-job time from what it printed."""

    name: str
    label: str
    command: Callable[[WorkloadInput, Path], list[str]]
    in_job_seconds: Callable[[Measurement], float]
    writes_table: bool = True
    needs_connect_server: bool = False
    # Formats the engine cannot compact, with the reason RESULTS.md gives for leaving it out.
    unsupported: Mapping[str, str] = field(default_factory=dict)
    # The workloads it is compared on (None: all of them).
    workloads: frozenset[str] | None = None

    def left_out(self, staged: WorkloadInput) -> str | None:
        """Why the engine does not run on ``staged`` (RESULTS.md says it), or None."""
        if staged.format in self.unsupported:
            return self.unsupported[staged.format]
        if self.workloads is not None and staged.workload not in self.workloads:
            return f"compared on workloads {', '.join(sorted(self.workloads))} only (issue #47)"
        return None


def _in_process(name: str) -> Callable[[WorkloadInput, Path], list[str]]:
    def command(staged: WorkloadInput, out: Path) -> list[str]:
        return [python(), "-m", "bench.engines", name, str(staged.manifest), str(out)]

    return command


def _reported_seconds(measurement: Measurement) -> float:
    return float(measurement.report()["seconds"])


def _fscommit_command(staged: WorkloadInput, out: Path) -> list[str]:
    return fscommit_command(staged.staging, staged.checkpoint, str(out))


def fscommit_command(staging: str, checkpoint: str, table: str) -> list[str]:
    """``fscommit compact`` of every committable hour of a workload into ``table``."""
    # Imported here: the in-process engines run this module, and the CLI's imports
    # (about 0.1 s) must not count in their whole-process times.
    from fscommit_dev.tables import hourly_table, table_flags

    options = hourly_table(staging, checkpoint, table_path=table)
    fscommit = str(Path(python()).parent / "fscommit")
    return [fscommit, "compact", *table_flags(options), "--spark-master", SPARK_MASTER, "--json"]


# The sorted compactions' order: a user id, then the event time (bench/workloads.py).
SORTED_BY = "s,ts"
# Issue #47 compares sorted compaction on these workloads.
SORTED_WORKLOADS = frozenset({"a", "b"})

# Set by the compaction suite while its Spark Connect server runs.
REMOTE_ENV = "FSCOMMIT_BENCH_SPARK_REMOTE"


def _fscommit_connect_command(staged: WorkloadInput, out: Path) -> list[str]:
    command = fscommit_command(staged.staging, staged.checkpoint, str(out))
    return [*command, "--spark-remote", os.environ[REMOTE_ENV]]


def _fscommit_connect_sorted_command(staged: WorkloadInput, out: Path) -> list[str]:
    return [*_fscommit_connect_command(staged, out), "--sort-by", SORTED_BY]


def fscommit_seconds(measurement: Measurement) -> float:
    """The job's own work: its run (``seconds``) and its read-ahead
    (``read_ahead_seconds``: the dry run that reads what it plans from, while a
    spark-submit's executors start or as a Connect client's look for work), counted
    although a spark-submit does not wait for it; every partition must publish."""
    result = json.loads(measurement.stdout)
    failed = [p for p in result["partitions"] if p["state"] != "published"]
    if failed:
        raise RuntimeError(f"fscommit did not publish {failed[:2]}")
    return float(result["seconds"]) + float(result["read_ahead_seconds"])


def _naive_spark_command(staged: WorkloadInput, out: Path) -> list[str]:
    return submit_command("naive_spark", [str(staged.manifest), str(out), staged.format])


# Checked with DuckDB 2.0.0 here; the community extension `orc` (duckdb.org/community_
# extensions/extensions/orc) only reads ORC, and ORC is not among the core extensions.
_DUCKDB_NO_ORC = (
    'DuckDB cannot write ORC: `COPY … (FORMAT orc)` fails with "Copy Function with name '
    'orc does not exist" (DuckDB 2.0.0), and its only ORC extension (community `orc`) '
    "reads ORC but does not write it"
)


ENGINES: dict[str, Engine] = {
    e.name: e
    for e in (
        Engine("floor-read", "I/O floor: read", _in_process("floor-read"), _reported_seconds,
               writes_table=False),
        Engine("floor-copy", "I/O floor: copy", _in_process("floor-copy"), _reported_seconds,
               writes_table=False),
        Engine("pyarrow", "pyarrow, one process", _in_process("pyarrow"), _reported_seconds),
        Engine("duckdb", "DuckDB COPY", _in_process("duckdb"), _reported_seconds,
               unsupported={"orc": _DUCKDB_NO_ORC}),
        Engine("naive-spark", "naive Spark (coalesce(1))", _naive_spark_command,
               _reported_seconds),
        Engine("fscommit", "fscommit compact", _fscommit_command, fscommit_seconds),
        Engine("fscommit-connect", "fscommit (Spark Connect)", _fscommit_connect_command,
               fscommit_seconds, needs_connect_server=True),
        Engine("duckdb-sorted", "DuckDB COPY … ORDER BY s, ts", _in_process("duckdb-sorted"),
               _reported_seconds, unsupported={"orc": _DUCKDB_NO_ORC},
               workloads=SORTED_WORKLOADS),
        Engine("fscommit-connect-sorted", "fscommit (Spark Connect), --sort-by s,ts",
               _fscommit_connect_sorted_command, fscommit_seconds, needs_connect_server=True,
               workloads=SORTED_WORKLOADS),
    )
}  # fmt: skip


def floor_read(staged: WorkloadInput, out: Path) -> None:
    """Read every input byte once, as any engine must."""
    buffer = bytearray(_READ_CHUNK)
    for partition in staged.partitions:
        for path in partition.files:
            with open(path, "rb", buffering=0) as handle:
                while handle.readinto(buffer):
                    pass


def floor_copy(staged: WorkloadInput, out: Path) -> None:
    """Append each partition's input bytes to one file, in the kernel (``sendfile``)."""
    for partition in staged.partitions:
        target = out / partition.path / "data.bin"
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(target, "wb") as sink:
            for path in partition.files:
                with open(path, "rb") as source:
                    while os.sendfile(sink.fileno(), source.fileno(), None, _COPY_CHUNK):
                        pass


def pyarrow_rewrite(staged: WorkloadInput, out: Path) -> None:
    """Read a partition's files into one table and write it with the input's codec.

    ``pyarrow.orc.read_table`` reads one file, so an ORC partition is read file by file and
    concatenated: what a script without ``pyarrow.dataset`` would do.
    """
    import pyarrow as pa
    import pyarrow.orc as po
    import pyarrow.parquet as pq

    for partition in staged.partitions:
        target = out / partition.path / f"part-00000.{staged.codec}.{staged.format}"
        target.parent.mkdir(parents=True, exist_ok=True)
        if staged.format == "orc":
            table = pa.concat_tables(po.read_table(f) for f in partition.files)
            po.write_table(table, target, compression=staged.codec)
        else:
            table = pq.read_table(list(partition.files), partitioning=None)
            pq.write_table(table, target, compression=staged.codec)


def duckdb_copy(staged: WorkloadInput, out: Path, order_by: str | None = None) -> None:
    import duckdb

    connection = duckdb.connect()
    for partition in staged.partitions:
        target = out / partition.path / "part-00000.snappy.parquet"
        target.parent.mkdir(parents=True, exist_ok=True)
        files = ", ".join(_sql_string(f) for f in partition.files)
        connection.execute(
            f"COPY (SELECT * FROM read_parquet([{files}], hive_partitioning = false)"
            f"{f' ORDER BY {order_by}' if order_by else ''}) "
            f"TO {_sql_string(str(target))} (FORMAT parquet, COMPRESSION snappy)"
        )
    connection.close()


def duckdb_copy_sorted(staged: WorkloadInput, out: Path) -> None:
    """DuckDB's COPY with ``ORDER BY s, ts``: the yardstick of a sorted compaction."""
    duckdb_copy(staged, out, order_by=SORTED_BY.replace(",", ", "))


def _sql_string(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


_IN_PROCESS: dict[str, Callable[[WorkloadInput, Path], None]] = {
    "floor-read": floor_read,
    "floor-copy": floor_copy,
    "pyarrow": pyarrow_rewrite,
    "duckdb": duckdb_copy,
    "duckdb-sorted": duckdb_copy_sorted,
}


def main() -> None:
    """``python -m bench.engines ENGINE MANIFEST OUT``: run one in-process engine once."""
    name, manifest, out = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    engine = _IN_PROCESS[name]
    staged = WorkloadInput.load(manifest)
    if name.startswith("duckdb"):
        import duckdb  # noqa: F401 - imported before the clock starts, like the others
    elif name == "pyarrow":
        import pyarrow.orc
        import pyarrow.parquet  # noqa: F401
    started = time.monotonic()
    engine(staged, out)
    print_result({"seconds": time.monotonic() - started})


if __name__ == "__main__":
    main()
