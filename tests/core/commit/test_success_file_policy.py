"""The success-file policy: a JSON commit record in the partition directory, rewritten on
late data, under the name the spec gives."""

from __future__ import annotations

import json
from pathlib import Path

from airflow_provider_fscommit.core.commit.success_file_policy import SuccessFileCommitPolicy
from fscommit_dev.metastore.client import metastore_table_spec
from tests.support.metastore_calls import context


def test_the_marker_holds_the_commit_record_and_late_data_rewrites_it(tmp_path):
    spec = metastore_table_spec(tmp_path / "table", "unused")
    policy = SuccessFileCommitPolicy("_DONE")
    policy.commit(context(spec, "2026-11-20", "03", rows=10))
    marker = Path(spec.table_path, "dt=2026-11-20/hour=03", "_DONE")
    assert json.loads(marker.read_text()) == {
        "partition": "dt=2026-11-20/hour=03",
        "files": 1,
        "bytes": 100,
        "rows": 10,
        "watermark_ms": 5,
        "max_batch_id": 7,
        "compaction_seq": None,
        "committed_at_ms": 9,
        "format": None,
    }
    policy.commit(context(spec, "2026-11-20", "03", rows=12))
    assert json.loads(marker.read_text())["rows"] == 12
    # Written atomically: no temporary file is left beside the marker.
    assert [p.name for p in marker.parent.iterdir()] == ["_DONE"]
