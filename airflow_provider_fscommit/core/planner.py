"""The compaction planner (Flink's ``CompactCoordinator``): which files become which outputs.

The inputs of a partition are the files its sink log has committed that the ledger has not
published yet, sorted by path and bin-packed to the target file size. Unlike Flink, all
batches of a partition are compacted together, not one checkpoint at a time. A plan is a
plain JSON document: it is written to the ledger *before* anything is executed (the
write-ahead intent) and the Spark job executes exactly what it says.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from airflow_provider_fscommit.core.bin_packing import pack

# Spark's file name extensions per Parquet codec.
CODEC_EXTENSIONS = {"snappy": "snappy.", "gzip": "gz.", "zstd": "zstd.", "lz4": "lz4.", "none": ""}


@dataclass(frozen=True)
class StagedFile:
    """A committed file in staging, named by the URI its sink log records."""

    uri: str
    size: int


@dataclass(frozen=True)
class CompactionUnit:
    """Inputs that become one output file."""

    index: int
    inputs: tuple[StagedFile, ...]
    output: str

    @property
    def bytes(self) -> int:
        return sum(f.size for f in self.inputs)


@dataclass(frozen=True)
class CompactionPlan:
    """What one compaction of one partition publishes, as recorded in the ledger."""

    partition: str
    seq: int
    plan_id: str
    units: tuple[CompactionUnit, ...]
    codec: str
    sink_latest_batch: int | None
    watermark_ms: int | None
    created_ms: int

    @property
    def inputs(self) -> list[StagedFile]:
        return [f for unit in self.units for f in unit.inputs]

    @property
    def bytes(self) -> int:
        return sum(unit.bytes for unit in self.units)

    def to_dict(self) -> dict[str, Any]:
        return {
            "partition": self.partition,
            "seq": self.seq,
            "plan_id": self.plan_id,
            "codec": self.codec,
            "sink_latest_batch": self.sink_latest_batch,
            "watermark_ms": self.watermark_ms,
            "created_ms": self.created_ms,
            "units": [
                {
                    "index": u.index,
                    "output": u.output,
                    "inputs": [{"uri": f.uri, "size": f.size} for f in u.inputs],
                }
                for u in self.units
            ],
        }

    @classmethod
    def from_dict(cls, document: dict[str, Any]) -> CompactionPlan:
        return cls(
            partition=document["partition"],
            seq=document["seq"],
            plan_id=document["plan_id"],
            codec=document["codec"],
            sink_latest_batch=document["sink_latest_batch"],
            watermark_ms=document["watermark_ms"],
            created_ms=document["created_ms"],
            units=tuple(
                CompactionUnit(
                    index=u["index"],
                    output=u["output"],
                    inputs=tuple(StagedFile(f["uri"], f["size"]) for f in u["inputs"]),
                )
                for u in document["units"]
            ),
        )


def plan_partition(
    partition: str,
    committed: list[StagedFile],
    published: set[str],
    *,
    seq: int,
    target_file_size: int,
    auto_compaction: bool,
    codec: str,
    sink_latest_batch: int | None,
    watermark_ms: int | None,
    created_ms: int,
) -> CompactionPlan | None:
    """The next plan for ``partition``, or None when everything committed is published.

    Without auto-compaction every input is its own unit (published as it is).
    """
    inputs = sorted((f for f in committed if f.uri not in published), key=lambda f: f.uri)
    if not inputs:
        return None
    groups = (
        pack(inputs, lambda f: f.size, target_file_size)
        if auto_compaction
        else [[f] for f in inputs]
    )
    plan_id = uuid.uuid4().hex[:12]
    extension = CODEC_EXTENSIONS[codec]
    units = tuple(
        CompactionUnit(
            index=i,
            inputs=tuple(group),
            output=f"part-{seq:05d}-{i:05d}-{plan_id}.c000.{extension}parquet",
        )
        for i, group in enumerate(groups)
    )
    return CompactionPlan(
        partition=partition,
        seq=seq,
        plan_id=plan_id,
        units=units,
        codec=codec,
        sink_latest_batch=sink_latest_batch,
        watermark_ms=watermark_ms,
        created_ms=created_ms,
    )
