"""A table that has been committing hourly for a long time, made in seconds.

What a routine run costs is measured on it (the ledger-scale test and benchmark): one
stream, ``hours`` hourly partitions, every one published and committed, then one new hour.

- Staging: one small, real Parquet file per hour (a Spark part-file name), the sink log in
  Spark's format (batch ``0`` lists them all, ``file://`` URIs) and a checkpoint whose
  watermark has passed every hour's commit time (``dt=…/hour=…``, 1 h delay).
- The published table: each hour's file published as one output, its ledger records as
  the compaction and the success-file policy write them (a plan, its commit record, a
  policy commit), in the per-partition layout a release before the table state wrote:
  the first run under the current code upgrades it.
- :meth:`AgedTable.add_hour`: the stream's next batch, two files of the next hour, and a
  watermark that makes it committable (:meth:`AgedTable.add_batch`: late files of an
  hour instead).

The records are written through the ledger's own API (no run executes), so a table of
8,760 hours takes seconds rather than 8,760 compactions.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from airflow_provider_fscommit.core.compaction.planner import plan_partition
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.ledger.ledger import CommitLedger
from airflow_provider_fscommit.core.spark.staging import StagedFile
from fscommit_dev.synthetic_log import (
    FIRST_HOUR,
    StreamFolders,
    hourly_partition,
    write_checkpoint_batch,
    write_log_file,
)
from fscommit_dev.tables import hourly_table

_ROWS = 20


@dataclass(frozen=True)
class AgedTable(StreamFolders):
    """``hours`` committed hourly partitions under ``root`` (staging, checkpoint, table).

    ``logged_root``: the staging URI the sink log and the plans name (default: the local
    staging directory's); ``s3a://bucket/prefix/staging`` makes a table to upload as it
    is, as S3A would have written it.
    """

    hours: int
    logged_root: str | None = None

    @property
    def table(self) -> Path:
        return self.root / "table"

    def spec(self, **options: Any) -> TableSpec:
        """The hourly table's spec, committed with a success file (no metastore needed)."""
        return TableSpec.from_options(
            hourly_table(
                str(self.staging),
                str(self.checkpoint),
                table_path=str(self.table),
                **{"sink.partition-commit.policy.kind": "success-file"},
                **options,
            )
        )

    @staticmethod
    def partition(hour: int) -> str:
        return hourly_partition(hour)

    def write(self) -> None:
        """Make the staged stream and the committed table (anew)."""
        shutil.rmtree(self.root, ignore_errors=True)
        sample = self.root / "sample.parquet"
        sample.parent.mkdir(parents=True)
        pq.write_table(
            pa.table({"id": pa.array(range(_ROWS), pa.int64())}), sample, compression="snappy"
        )
        staged = [self._stage(sample, hour, 0) for hour in range(self.hours)]
        (self.staging / "_spark_metadata").mkdir()
        write_log_file(self.staging / "_spark_metadata" / "0", (_log_line(s) for _, s in staged))
        write_checkpoint_batch(self.checkpoint, 0, self._watermark(self.hours))
        (self.checkpoint / "metadata").write_text(json.dumps({"id": "aged-table"}))
        spec = self.spec()
        ledger = CommitLedger(str(self.table))
        for hour, (path, staged_file) in enumerate(staged):
            self._committed(spec, ledger, self.partition(hour), path, staged_file)

    def add_hour(self) -> str:
        """The stream's next batch: two files of the next hour, now committable."""
        return self.add_batch(self.hours, files=2)

    def add_batch(self, hour: int, files: int = 1) -> str:
        """The stream's next batch (batch 1): ``files`` new files of ``hour`` (late data
        for an hour already committed), with a watermark that passed the next hour."""
        sample = self.root / "sample.parquet"
        staged = [self._stage(sample, hour, part) for part in range(1, files + 1)]
        write_log_file(self.staging / "_spark_metadata" / "1", (_log_line(s) for _, s in staged))
        write_checkpoint_batch(self.checkpoint, 1, self._watermark(self.hours + 1))
        return self.partition(hour)

    def _stage(self, sample: Path, hour: int, part: int) -> tuple[Path, StagedFile]:
        """A staged file of ``hour``: where it is, and as the sink log names it."""
        relative = f"{self.partition(hour)}/part-{part:05d}-{hour:08d}-aged.c000.snappy.parquet"
        path = self.staging / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        os.link(sample, path)
        root = self.logged_root or f"file://{self.staging}"  # Spark leaves '=' as it is
        return path, StagedFile(f"{root}/{relative}", path.stat().st_size)

    def _committed(
        self,
        spec: TableSpec,
        ledger: CommitLedger,
        partition: str,
        path: Path,
        staged: StagedFile,
    ) -> None:
        """One hour's records as a compaction and its commit policies leave them."""
        plan = plan_partition(
            partition,
            [staged],
            set(),
            seq=0,
            target_file_size=spec.compaction_file_size,
            auto_compaction=True,
            codec="snappy",
            sink_latest_batch=0,
            watermark_ms=self._watermark(self.hours),
            created_ms=self._watermark(self.hours),
        )
        assert plan is not None
        output = self.table / partition / plan.units[0].output
        output.parent.mkdir(parents=True, exist_ok=True)
        os.link(path, output)
        ledger.write_plan(plan)
        committed_ms = self._watermark(self.hours)
        ledger.write_commit(
            plan,
            {
                "seq": 0,
                "plan_id": plan.plan_id,
                "committed_ms": committed_ms,
                "rows": _ROWS,
                "outputs": [{"name": output.name, "rows": _ROWS, "bytes": staged.size}],
            },
        )
        (output.parent / "_SUCCESS").write_text("{}")
        ledger.write_policy_commit(
            partition,
            {
                "files": 1,
                "bytes": staged.size,
                "rows": _ROWS,
                "watermark_ms": committed_ms,
                "max_batch_id": 0,
                "compaction_seq": 0,
                "committed_at_ms": committed_ms,
                "format": "parquet",
            },
        )

    def _watermark(self, hours: int) -> int:
        """A minute past the commit time of hour ``hours`` (its end plus the 1 h delay)."""
        at = FIRST_HOUR + timedelta(hours=hours + 1, minutes=1)
        return int(at.timestamp() * 1000)


def _log_line(staged: StagedFile) -> str:
    return json.dumps(
        {
            "path": staged.uri,
            "size": staged.size,
            "isDir": False,
            "modificationTime": 1_735_689_600_000,
            "blockReplication": 1,
            "blockSize": 33554432,
            "action": "add",
        },
        separators=(",", ":"),
    )
