"""One compaction and commit run of a table, in a process of its own (fault trials).

``python tests/support/fault_worker.py SPEC_JSON``: recover, plan, execute the units in this
process (the same ``compact_units`` Spark's executors run: the trials test the protocol,
not Spark's scheduling), commit, publish, then run the commit policies. ``FSCOMMIT_FAULT``
kills it at a step boundary; the trial loop also kills it at random moments.
``FSCOMMIT_TEST_LEASE_TTL_S`` shortens the table lock's lease, so that concurrent runs
lose it to each other and the commit point alone must keep them apart.
``FSCOMMIT_TEST_METASTORE_PORT`` is the loopback metastore of a spec's metastore policy.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from airflow_provider_fscommit.core.commit.committer import PartitionCommitter
from airflow_provider_fscommit.core.commit.policy_factory import create_policies
from airflow_provider_fscommit.core.compaction.compactor import compact_units
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.ledger import lock
from airflow_provider_fscommit.core.publish.publisher import CompactionPublisher


def _metastore_client():
    import hmsclient

    return hmsclient.HMSClient(
        host="127.0.0.1", port=int(os.environ["FSCOMMIT_TEST_METASTORE_PORT"])
    )


def run_worker(spec: str, fault: str | None = None, kill_after: float | None = None) -> int:
    """Run this worker on ``spec`` in a process group of its own (killed at ``fault``, or
    ``kill_after`` seconds in); its exit code."""
    env = {k: v for k, v in os.environ.items() if k != "FSCOMMIT_FAULT"}
    if fault:
        env["FSCOMMIT_FAULT"] = fault
    process = subprocess.Popen(
        [sys.executable, __file__, spec],
        env=env,
        start_new_session=True,
        cwd=Path(__file__).resolve().parents[2],  # the repository
    )
    if kill_after is not None:
        try:
            return process.wait(timeout=kill_after)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
    return process.wait(timeout=300)


def main(spec_json: str) -> int:
    if "FSCOMMIT_TEST_LEASE_TTL_S" in os.environ:
        lock.DEFAULT_TTL_S = float(os.environ["FSCOMMIT_TEST_LEASE_TTL_S"])
    spec = TableSpec.from_json(spec_json)
    summary = CompactionPublisher(spec).run(compact_units)
    failed = [o for o in summary.outcomes if o.state == "failed"]
    if failed:
        print(f"{failed[0].partition}: {failed[0].error}", file=sys.stderr)
        return 1
    metastore = _metastore_client if "FSCOMMIT_TEST_METASTORE_PORT" in os.environ else None
    committer = PartitionCommitter(spec, create_policies(spec, metastore))
    committer.commit([o.partition for o in summary.outcomes])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
