"""The compaction plan (Flink's ``CompactionUnit`` of ``CompactMessages``): a partition's
inputs grouped into the output files they become.

A plan is a plain JSON document: it is written to the ledger *before* anything is executed
(the write-ahead intent) and the Spark job executes exactly what it says. The types live
apart from the planner that makes them: the ledger records plans and the job runs them,
and neither needs to know how a plan is made.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from airflow_provider_fscommit.core.formats.file_format import FileFormat
from airflow_provider_fscommit.core.spark.staging import StagedFile


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
    format: FileFormat = FileFormat.PARQUET
    # Where the outputs go, under the partition's published directory ("": in it).
    directory: str = ""
    # A rewrite's inputs that are the partition's published files (their URIs): the plan
    # replaces them with its outputs, in a directory of its own (see :mod:`.fragmentation`).
    replaces: tuple[str, ...] = ()

    @property
    def inputs(self) -> list[StagedFile]:
        return [f for unit in self.units for f in unit.inputs]

    @property
    def staged_inputs(self) -> list[StagedFile]:
        """The inputs the sink log committed (a rewrite's published files left out)."""
        replaced = set(self.replaces)
        return [f for f in self.inputs if f.uri not in replaced]

    @property
    def rewrites(self) -> bool:
        return bool(self.replaces)

    @property
    def bytes(self) -> int:
        return sum(unit.bytes for unit in self.units)

    def to_dict(self) -> dict[str, Any]:
        return {
            "partition": self.partition,
            "seq": self.seq,
            "plan_id": self.plan_id,
            "codec": self.codec,
            "format": self.format.value,
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
        } | {  # older releases read a plan without them: published in the partition directory
            k: v for k, v in (("directory", self.directory), ("replaces", list(self.replaces))) if v
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
            format=FileFormat(document.get("format", "parquet")),  # older ledgers: Parquet
            directory=document.get("directory", ""),
            replaces=tuple(document.get("replaces", ())),
            units=tuple(
                CompactionUnit(
                    index=u["index"],
                    output=u["output"],
                    inputs=tuple(StagedFile(f["uri"], f["size"]) for f in u["inputs"]),
                )
                for u in document["units"]
            ),
        )
