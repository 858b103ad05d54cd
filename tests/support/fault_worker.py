"""One compaction and commit run of a table, in a process of its own (fault trials).

``python tests/support/fault_worker.py SPEC_JSON``: recover, plan, execute the units in this
process (the same ``compact_units`` Spark's executors run: the trials test the protocol,
not Spark's scheduling), commit, publish, then run the commit policies. ``FSCOMMIT_FAULT``
kills it at a step boundary; the trial loop also kills it at random moments.
``FSCOMMIT_TEST_LEASE_TTL_S`` shortens the table lock's lease, so that concurrent runs
lose it to each other and the commit point alone must keep them apart.
"""

from __future__ import annotations

import os
import sys

from airflow_provider_fscommit.core.commit.committer import PartitionCommitter
from airflow_provider_fscommit.core.commit.policy_factory import create_policies
from airflow_provider_fscommit.core.commit.publisher import CompactionPublisher
from airflow_provider_fscommit.core.compaction.compactor import compact_units
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.ledger import lock


def main(spec_json: str) -> int:
    if "FSCOMMIT_TEST_LEASE_TTL_S" in os.environ:
        lock.DEFAULT_TTL_S = float(os.environ["FSCOMMIT_TEST_LEASE_TTL_S"])
    spec = TableSpec.from_json(spec_json)
    summary = CompactionPublisher(spec).run(compact_units)
    failed = [o for o in summary.outcomes if o.state == "failed"]
    if failed:
        print(f"{failed[0].partition}: {failed[0].error}", file=sys.stderr)
        return 1
    PartitionCommitter(spec, create_policies(spec)).commit([o.partition for o in summary.outcomes])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
