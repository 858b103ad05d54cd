"""A production day, shortened: two live tables on one real Airflow deployment, two faults.

The soak of ``bench/soak.py`` (``fscommit_dev/soak/``) at the smallest size that still
shows something: two minute-partitioned streams of one Spark application (one skewed,
one with late rows for partitions already committed), their DAGs from specs ``fscommit
init`` wrote, a real scheduler, triggerer, api-server and dag-processor on the run's
PostgreSQL, compactions on the run's Spark Connect server, commits to the worker's
metastore. The triggerer and a running task's process are SIGKILLed on the seeded
schedule (the triggerer restarted). Every check of the soak must hold: each committable
partition committed exactly once (ledger, metastore, published rows equal to the sink
log's), none before its watermark, every late row published by the sweep, no task left
failed, nothing orphaned or lost. The bench run kills the scheduler, the Connect server
and the metastore too; here they are the run's shared servers, which other tests use.
"""

from __future__ import annotations

import pytest

from fscommit_dev.soak.run import run_soak
from fscommit_dev.soak.tables import SoakSettings

SETTINGS = SoakSettings(
    tables=2,
    minutes=2.0,
    seed=3,
    faults=("triggerer", "task"),
    sweep_minutes=1,
    drain_seconds=180,
)


@pytest.mark.slow
def test_two_live_tables_keep_every_check_across_a_killed_triggerer_and_task(
    postgres, connect_server, metastore, tmp_path
):
    document = run_soak(
        tmp_path / "soak", SETTINGS, postgres=postgres, connect=connect_server, metastore=metastore
    )

    failures = [
        f"{v['rule']}: {v['table']} {v['partition']}: {v['detail']}" for v in document["violations"]
    ]
    assert not failures, "\n".join(failures)
    # Both faults struck while the DAGs ran (the task one hit a compaction or a commit).
    struck = sorted(f["kind"] for f in document["faults"] if f["killed_ms"] and not f["missed"])
    assert struck == ["task", "triggerer"], document["faults"]
    # Meaningful: partitions committed on both tables, late rows among them, drained.
    counted = document["counted"]
    assert all(c["committed"] >= 2 for c in counted.values()), counted
    assert document["late_rows"] > 0
    assert document["drain_s"] is not None
    assert document["freshness"]["all"]["freshness_s"]["count"] >= 4
