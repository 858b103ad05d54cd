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
    directory: str = "",
) -> CompactionPlan | None:
    """The next plan for ``partition``, or None when everything committed is published.

    Its outputs go to ``directory`` under the partition's (that of its latest rewrite).

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
    plan_id, units = _units(seq, groups, file_format)
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
        directory=directory,
    )


def rewrite_directory(seq: int) -> str:
    """The directory a rewrite publishes into, under the partition's: visible (path readers
    find its files, Spark's partition discovery skips a name without ``=``) and never
    reused, as sequence numbers are not."""
    return f"rewrite-{seq:05d}"


def plan_rewrite(
    partition: str,
    published: list[StagedFile],
    committed: list[StagedFile],
    settled: set[str],
    *,
    seq: int,
    target_file_size: int,
    codec: str,
    sink_latest_batch: int | None,
    watermark_ms: int | None,
    created_ms: int,
    file_format: FileFormat,
) -> CompactionPlan:
    """A fragmented partition compacted again (:mod:`.fragmentation`): its ``published``
    files and the staged files not yet published, into a directory of the plan's own.

    The outputs are ⌈bytes / target⌉ files with the same number of rows each, written by
    one task (rows are dealt out, not whole files packed: first-fit packing of files near
    half the target would leave the partition as fragmented as before); the units divide
    the inputs in order, by bytes, only so the plan records what each output came from.
    """
    new = sorted((f for f in committed if f.uri not in settled), key=lambda f: f.uri)
    inputs = sorted(published, key=lambda f: f.uri) + new
    total = sum(f.size for f in inputs)
    count = min(len(inputs), max(1, -(-total // target_file_size)))
    groups: list[list[StagedFile]] = [[] for _ in range(count)]
    done = 0
    for staged in inputs:
        # The group whose share of the bytes this file starts in (never past the last).
        groups[min(count - 1, done * count // max(total, 1))].append(staged)
        done += staged.size
    if file_format is FileFormat.ORC:
        codec = orc_codec_of(inputs[0].uri)
    plan_id, units = _units(seq, [(codec, g) for g in groups if g], file_format)
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
        directory=rewrite_directory(seq),
        replaces=tuple(f.uri for f in published),
    )


def _units(
    seq: int, groups: list[tuple[str, list[StagedFile]]], file_format: FileFormat
) -> tuple[str, tuple[CompactionUnit, ...]]:
    """A new plan id and the units of ``groups`` (codec, inputs), their outputs named as
    Spark names its files, with the plan's sequence number and id in the name."""
    plan_id = uuid.uuid4().hex[:12]
    units = tuple(
        CompactionUnit(
            index=i,
            inputs=tuple(group),
            output=f"part-{seq:05d}-{i:05d}-{plan_id}.c000.{_suffix(file_format, codec)}",
        )
        for i, (codec, group) in enumerate(groups)
    )
    return plan_id, units


def _suffix(file_format: FileFormat, codec: str) -> str:
    """An output's extensions as Spark names them (``snappy.parquet``, ``csv.gz``)."""
    if file_format is FileFormat.PARQUET:
        return f"{CODEC_EXTENSIONS[codec]}parquet"
    if file_format is FileFormat.ORC:
        return "orc" if codec == "uncompressed" else f"{codec}.orc"
    return file_format.extension + LINE_CODECS[codec]
