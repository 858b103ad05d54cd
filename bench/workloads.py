"""The compaction workloads of issue #6 and their input, generated once by Spark itself.

(a) 12 hour partitions x 200 files of ~100 KB with every type family;
(b) the same rows in 4x more, 4x smaller files;
(c) one partition of ~1 GB in 5,000 files, to show that memory stays bounded;
(d) a sweep's shape, not in the issue: the bytes of (a) over 240 hour partitions of 10
    files, to show what the number of partitions (Spark tasks) costs;
(a-orc) issue #15: the rows of (a), written as ORC by the same query, to compare engines
    on the other columnar format Spark's file sink writes. Its codec is zstd, Spark's
    default for ORC, so it is what a sink left at its defaults produces.

Input is a real file sink's output (``bench/jobs/generate.py``), so the compaction job can
read it; it is cached under the scratch directory by its shape and reused by later runs.
The *manifest* lists, per committable partition, the files the sink log committed: every
engine compacts exactly those files, and the I/O floor reads and copies exactly those bytes.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.status.committable import PartitionState, TableStatusReader
from bench.measure import check, run_measured
from bench.settings import BenchSettings
from bench.spark import spark_env, submit_command

START = "2026-11-20T00:00:00Z"
# Calibrated on Spark 4.3 with the typed rows of jobs/generate.py: ~67 bytes per row at
# 1,500 rows per file (snappy), so 1,500 rows make a ~100 KB file.
_ROWS_PER_100KB = 1500


@dataclass(frozen=True)
class Workload:
    """A workload's shape at full size; :meth:`files_per_hour` applies the scale.

    ``format`` and ``codec`` are what the file sink writes (``spark.sql.<format>.
    compression.codec``): the engines rewrite with the same codec, so an output's size
    and time compare with the input's.
    """

    name: str
    title: str
    hours: int
    base_files: int
    file_multiplier: int
    rows_per_file: int
    min_files: int
    format: str = "parquet"
    codec: str = "snappy"

    def files_per_hour(self, settings: BenchSettings) -> int:
        return settings.scaled(self.base_files, self.min_files) * self.file_multiplier


WORKLOADS: dict[str, Workload] = {
    "a": Workload("a", "12 hours x 200 files of ~100 KB, every type family", 12, 200, 1,
                  _ROWS_PER_100KB, 2),
    "b": Workload("b", "the same rows in 4x more, 4x smaller files", 12, 200, 4,
                  _ROWS_PER_100KB // 4, 2),
    "c": Workload("c", "one partition of ~1 GB in 5,000 files", 1, 5000, 1,
                  2 * _ROWS_PER_100KB, 8),
    "d": Workload("d", "a sweep: 240 hours x 10 files of ~100 KB", 240, 10, 1,
                  _ROWS_PER_100KB, 2),
    "a-orc": Workload("a-orc", "the rows of (a) written as ORC (zstd)", 12, 200, 1,
                      _ROWS_PER_100KB, 2, format="orc", codec="zstd"),
}  # fmt: skip


def hourly_spec(staging: str, checkpoint: str, table_path: str | None = None) -> TableSpec:
    """The spec fscommit runs the workloads with: hourly, committable an hour later."""
    return TableSpec.from_options(
        {
            "staging_path": staging,
            "checkpoint_path": checkpoint,
            "partition_keys": "dt,hour",
            "timestamp_pattern": "$dt $hour:00:00",
            "delay": "1 h",
            "table_path": table_path,
        }
    )


@dataclass(frozen=True)
class StagedPartition:
    """One committable partition: its path and the committed files (local paths)."""

    path: str
    files: tuple[str, ...]
    bytes: int


@dataclass(frozen=True)
class WorkloadInput:
    """A generated workload: the file sink's directories and what each engine compacts."""

    workload: str
    base: Path
    rows: int
    partitions: tuple[StagedPartition, ...]

    @property
    def staging(self) -> str:
        return str(self.base / "staging")

    @property
    def checkpoint(self) -> str:
        return str(self.base / "checkpoint")

    @property
    def format(self) -> str:
        return WORKLOADS[self.workload].format

    @property
    def codec(self) -> str:
        return WORKLOADS[self.workload].codec

    @property
    def manifest(self) -> Path:
        return self.base / "manifest.json"

    @property
    def bytes(self) -> int:
        return sum(p.bytes for p in self.partitions)

    @property
    def files(self) -> int:
        return sum(len(p.files) for p in self.partitions)

    def table_spec(self, table_path: str | None = None) -> TableSpec:
        return hourly_spec(self.staging, self.checkpoint, table_path)

    def describe(self) -> dict[str, Any]:
        return {
            "workload": self.workload,
            "title": WORKLOADS[self.workload].title,
            "format": self.format,
            "codec": self.codec,
            "partitions": len(self.partitions),
            "files": self.files,
            "bytes": self.bytes,
            "rows": self.rows,
            "mean_file_bytes": round(self.bytes / max(self.files, 1)),
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "workload": self.workload,
            "base": str(self.base),
            "rows": self.rows,
            "partitions": [
                {"path": p.path, "files": list(p.files), "bytes": p.bytes} for p in self.partitions
            ],
        }

    @classmethod
    def load(cls, manifest: Path) -> WorkloadInput:
        document = json.loads(manifest.read_text())
        return cls(
            workload=document["workload"],
            base=Path(document["base"]),
            rows=document["rows"],
            partitions=tuple(
                StagedPartition(p["path"], tuple(p["files"]), p["bytes"])
                for p in document["partitions"]
            ),
        )


# The generating query repartitions millions of wide rows in the driver's JVM (local
# mode): with the default 1 GB heap, workload (c)'s 15 million rows ran out of memory.
GENERATE_CONF = {"spark.driver.memory": "6g"}


# Bumped when the generated rows change, so a cached input of the old rows is not reused:
# 2, nulls spread over every hour (jobs/generate.py).
_GENERATION = "g2"


def prepare(workload: Workload, settings: BenchSettings) -> WorkloadInput:
    """The workload's input at this scale, generated by a streaming query unless cached."""
    files = workload.files_per_hour(settings)
    rows = files * workload.hours * workload.rows_per_file
    shape = f"{workload.name}-{files}x{workload.rows_per_file}"
    base = settings.scratch / "workloads" / f"{shape}-{_GENERATION}"
    manifest = base / "manifest.json"
    if manifest.exists():
        return WorkloadInput.load(manifest)
    shutil.rmtree(base, ignore_errors=True)
    base.mkdir(parents=True)
    config = {
        "base": str(base),
        "files": files,
        "rows": rows,
        "hours": workload.hours,
        "start": START,
        "seed_files": 8,
        "format": workload.format,
        "codec": workload.codec,
    }
    log = base / "generate.log"
    print(f"  generating workload {workload.name}: {files} files x {workload.hours} hour(s)")
    measurement = run_measured(
        submit_command("generate", [json.dumps(config)], GENERATE_CONF), log, env=spark_env()
    )
    check(measurement, f"generating workload {workload.name}", log)
    generated = WorkloadInput(workload.name, base, rows, ())
    staged = _committable_partitions(generated)
    if len(staged) != workload.hours:
        raise RuntimeError(
            f"workload {workload.name}: {len(staged)} committable partitions, expected "
            f"{workload.hours}; see {log}"
        )
    generated = WorkloadInput(workload.name, base, rows, staged)
    manifest.write_text(json.dumps(generated.to_dict()))
    return generated


def _committable_partitions(generated: WorkloadInput) -> tuple[StagedPartition, ...]:
    """Committable partitions and their committed files, as fscommit itself sees them."""
    reader = TableStatusReader(generated.table_spec())
    status = reader.read(find_orphans=False)
    ready = [p.staged.path for p in status.in_state(PartitionState.COMMITTABLE)]
    files = reader.staging.committed_files(status.snapshot, set(ready))
    return tuple(
        StagedPartition(
            path=partition,
            files=tuple(sorted(_local_path(f.uri) for f in files[partition])),
            bytes=sum(f.size for f in files[partition]),
        )
        for partition in sorted(ready)
    )


def _local_path(uri: str) -> str:
    """A sink log URI (``file:///…``, percent-encoded) as a local path."""
    return unquote(urlsplit(uri).path)
