"""``fscommit compact``: run the compaction application from a terminal, with progress."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from airflow_provider_fscommit.cli.progress import Progress
from airflow_provider_fscommit.core.commit.publisher import (
    CompactionPublisher,
    CompactionState,
    PartitionOutcome,
)
from airflow_provider_fscommit.core.compaction.plan import CompactionPlan
from airflow_provider_fscommit.core.config.quantities import format_size
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.jobs.compact import (
    PLANNED_PREFIX,
    PROGRESS_PREFIX,
    RESULT_PREFIX,
)
from airflow_provider_fscommit.jobs.connect import ConnectCompaction
from airflow_provider_fscommit.jobs.launch import (
    CompactionSubmission,
    SparkInstallation,
    run_here_if_idle,
)

NOTHING_COMMITTABLE = 3  # exit status: nothing to do yet, try again later


@dataclass(frozen=True)
class SparkOptions:
    """How to run the compaction application (the CLI's Spark flags)."""

    master: str = "local[*]"
    spark_submit: str | None = None
    spark_home: str | None = None  # the cluster's Spark (default: $SPARK_HOME)
    conf: dict[str, str] = field(default_factory=dict)
    codec: str = "snappy"
    remote: str | None = None  # a Spark Connect server: no spark-submit


def run_compact(
    spec: TableSpec,
    partitions: Sequence[str] | None,
    spark: SparkOptions,
    *,
    dry_run: bool,
    as_json: bool,
) -> int:
    """Plan (dry run) or run the compaction; prints progress, then a summary."""
    if dry_run:
        preview = CompactionPublisher(spec, spark.codec).preview(partitions)
        document = preview.to_dict()
        print(json.dumps(document, indent=2) if as_json else render_plans(document))
        selected = [*preview.plans, *preview.settled]
        return NOTHING_COMMITTABLE if nothing_committable(partitions, selected) else 0
    result = submit_compaction(spec, partitions, spark, show_progress=not as_json)
    if result is None:
        return 1
    print(json.dumps(result, indent=2) if as_json else render_summary(result))
    if nothing_committable(partitions, result["partitions"]):
        return NOTHING_COMMITTABLE
    return 1 if any(p["state"] == CompactionState.FAILED for p in result["partitions"]) else 0


def nothing_committable(partitions: Sequence[str] | None, selected: Sequence[Any]) -> bool:
    """No partition named and none committable: not an error, but not done either."""
    if partitions is None and not selected:
        print(
            "fscommit: nothing committable yet: no partition's commit time is behind the "
            "watermark (see fscommit status)",
            file=sys.stderr,
        )
        return True
    return False


def submit_compaction(
    spec: TableSpec,
    partitions: Sequence[str] | None,
    spark: SparkOptions,
    *,
    show_progress: bool,
) -> dict[str, Any] | None:
    """Run the compaction application; None (after printing why) when it did not finish."""
    idle = run_here_if_idle(spec, partitions, spark.codec)
    if idle is not None:
        return idle
    if spark.remote:
        result = _on_connect(spec, partitions, spark, show_progress)
    else:
        result = _submitted(spec, partitions, spark, show_progress)
    if result is not None and "error" in result:
        print(f"fscommit: error: {result['error']}", file=sys.stderr)
        return None
    return result


def _submitted(
    spec: TableSpec, partitions: Sequence[str] | None, spark: SparkOptions, show_progress: bool
) -> dict[str, Any] | None:
    """One spark-submit application, followed through its output lines.

    Its command line is the launcher's description of the run, with the flags' master
    and spark-submit: this runs without Airflow's connections, so not through its hook.
    """
    installation = SparkInstallation.locate(spark.spark_home, spark.spark_submit)
    with tempfile.TemporaryDirectory(prefix="fscommit-") as scratch:
        submission = CompactionSubmission.prepare(
            spec, partitions, scratch, codec=spark.codec, conf=spark.conf, spark=installation
        )
        command = submission.command(installation.spark_submit, spark.master)
        env = {**os.environ, **submission.env}  # as the Spark provider's hook adds them
        log_path = os.path.join(scratch, "spark-submit.log")
        result = _follow(command, env, log_path, show_progress)
        if result is None:
            with open(log_path, errors="replace") as log:
                tail = log.read()[-4000:]
            print(f"fscommit: error: the compaction application failed:\n{tail}", file=sys.stderr)
    return result


def _on_connect(
    spec: TableSpec, partitions: Sequence[str] | None, spark: SparkOptions, show_progress: bool
) -> dict[str, Any]:
    """The protocol in this process, the units on the Spark Connect server."""
    assert spark.remote is not None
    runner = ConnectCompaction(spark.remote, spark.codec)
    progress = Progress() if show_progress else None

    def done(outcome: PartitionOutcome) -> None:
        if progress:
            progress.partition_done(_outcome_line(outcome.to_dict()))

    def planned(plans: list[CompactionPlan]) -> None:
        if progress:
            progress.planned(len(plans))

    if progress:
        progress.starting()
    try:
        return runner.run(spec, partitions, uuid.uuid4().hex, done, planned)
    finally:
        if progress:
            progress.close()


def _follow(
    command: list[str], env: dict[str, str], log_path: str, show_progress: bool
) -> dict[str, Any] | None:
    """Run spark-submit, showing each partition as it is published; returns the result."""
    result = None
    progress = Progress() if show_progress else None
    if progress:
        progress.starting()
    with open(log_path, "w") as log:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=log, text=True, env=env)
        assert process.stdout is not None
        for line in process.stdout:
            if line.startswith(PLANNED_PREFIX):
                if progress:
                    progress.planned(len(json.loads(line[len(PLANNED_PREFIX) :])))
            elif line.startswith(PROGRESS_PREFIX):
                if progress:
                    progress.partition_done(_outcome_line(json.loads(line[len(PROGRESS_PREFIX) :])))
            elif line.startswith(RESULT_PREFIX):
                result = json.loads(line[len(RESULT_PREFIX) :])
            else:
                log.write(line)
        process.wait()
    if progress:
        progress.close()
    return result


def _outcome_line(outcome: dict[str, Any]) -> str:
    if outcome["state"] == CompactionState.FAILED:
        return f"{outcome['partition']} FAILED: {outcome['error']}"
    return (
        f"{outcome['partition']} {outcome['state']}: {outcome['files_in']} file(s) -> "
        f"{outcome['files_out']}, {outcome['rows']} rows, {format_size(outcome['bytes_out'])}"
    )


def render_plans(document: dict[str, Any]) -> str:
    lines = []
    for plan in document["plans"]:
        inputs = sum(len(u["inputs"]) for u in plan["units"])
        size = sum(f["size"] for u in plan["units"] for f in u["inputs"])
        lines.append(
            f"{plan['partition']}: {inputs} file(s), {size} bytes -> {len(plan['units'])} "
            "output file(s)"
        )
    lines += [f"{p}: up to date" for p in document["up_to_date"]]
    return "\n".join(lines) or "nothing committable to compact"


def render_summary(result: dict[str, Any]) -> str:
    """Totals, and the failures again (each partition was shown as it finished)."""
    lines = [_outcome_line(p) for p in result["partitions"] if p["state"] == CompactionState.FAILED]
    lines.append(
        f"{result['files_in']} file(s) in, {result['files_out']} out; {result['rows']} rows; "
        f"{result['seconds']} s in the application"
    )
    return "\n".join(lines)
