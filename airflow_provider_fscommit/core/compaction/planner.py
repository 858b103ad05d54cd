"""The compaction planner (Flink's ``CompactCoordinator``): which files become which outputs.

The inputs of a partition are the files its sink log has committed that the ledger has not
published yet, sorted by path and bin-packed to the target file size. Unlike Flink, all
batches of a partition are compacted together, not one checkpoint at a time. The plan it
makes (:mod:`.plan`) is written to the ledger *before* anything is executed.
"""

from __future__ import annotations

import uuid

from airflow_provider_fscommit.core.compaction.bin_packing import pack
from airflow_provider_fscommit.core.compaction.plan import CompactionPlan, CompactionUnit
from airflow_provider_fscommit.core.formats.file_format import FileFormat, orc_codec_of
from airflow_provider_fscommit.core.formats.line_files import LINE_CODECS, codec_of
from airflow_provider_fscommit.core.spark.staging import StagedFile

# Spark's file name extensions per Parquet codec.
CODEC_EXTENSIONS = {"snappy": "snappy.", "gzip": "gz.", "zstd": "zstd.", "lz4": "lz4.", "none": ""}


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
    file_format: FileFormat = FileFormat.PARQUET,
) -> CompactionPlan | None:
    """The next plan for ``partition``, or None when everything committed is published.

    Without auto-compaction every input is its own unit (published as it is). ``codec``
    is the Parquet outputs'; ORC outputs keep their inputs' compression, and line files
    are concatenated, so only files of one codec share a unit.
    """
    inputs = sorted((f for f in committed if f.uri not in published), key=lambda f: f.uri)
    if not inputs:
        return None
    if file_format is FileFormat.ORC:
        codec = orc_codec_of(inputs[0].uri)
    by_codec: dict[str, list[StagedFile]] = {}
    for staged in inputs:
        key = codec_of(staged.uri) if file_format.is_lines else codec
        by_codec.setdefault(key, []).append(staged)
    groups = [
        (key, group)
        for key, files in by_codec.items()
        for group in (
            pack(files, lambda f: f.size, target_file_size)
            if auto_compaction
            else [[f] for f in files]
        )
    ]
    plan_id = uuid.uuid4().hex[:12]
    units = tuple(
        CompactionUnit(
            index=i,
            inputs=tuple(group),
            output=f"part-{seq:05d}-{i:05d}-{plan_id}.c000.{_suffix(file_format, key)}",
        )
        for i, (key, group) in enumerate(groups)
    )
    if file_format.is_lines:
        codec = next(iter(by_codec))  # a plan of mixed line codecs names the first
    return CompactionPlan(
        partition=partition,
        seq=seq,
        plan_id=plan_id,
        units=units,
        codec=codec,
        sink_latest_batch=sink_latest_batch,
        watermark_ms=watermark_ms,
        created_ms=created_ms,
        format=file_format,
    )


def _suffix(file_format: FileFormat, codec: str) -> str:
    """An output's extensions as Spark names them (``snappy.parquet``, ``csv.gz``)."""
    if file_format is FileFormat.PARQUET:
        return f"{CODEC_EXTENSIONS[codec]}parquet"
    if file_format is FileFormat.ORC:
        return "orc" if codec == "uncompressed" else f"{codec}.orc"
    return file_format.extension + LINE_CODECS[codec]
