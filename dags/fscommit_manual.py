"""
### Commit one partition, by hand

Trigger this DAG from the UI (*Trigger DAG*) with the partition to commit: one value per
partition key of the table. The form checks the values before anything runs: a value
with `..`, `/`, `\\`, quotes or a NUL byte, a key the table does not have, or a missing
key is refused with the reason.

- **policies**: which commit policies to run (default: the table's).
- **dry_run**: only show the compaction plan in the *compact* task's log; commit nothing.

The partition must be committable (its watermark passed); otherwise *compact* fails
saying so, and nothing is written. Committing a committed partition again changes nothing.
"""

from __future__ import annotations

import os
from pathlib import Path

import pendulum
from airflow.sdk import DAG, Param, task

from airflow_provider_fscommit.core.config.options import PolicyKind
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.operators.commit import PartitionCommitOperator
from airflow_provider_fscommit.operators.compact import PartitionCompactOperator

SPEC_FILE = os.environ.get(
    "FSCOMMIT_TABLE_SPEC", str(Path(__file__).with_name("fscommit_table.yaml"))
)
TABLE = TableSpec.from_file(SPEC_FILE)
# The AWS connection of a table on S3 (unset: the workers' own AWS identity).
AWS_CONN_ID = os.environ.get("FSCOMMIT_AWS_CONN_ID") or None

# A value is one path segment's worth of plain text: no traversal, separators or quotes.
SAFE_VALUE = r"^(?!.*\.\.)[^/\\'\"`\x00]{1,128}$"

with DAG(
    dag_id="fscommit_manual",
    schedule=None,
    start_date=pendulum.datetime(2026, 11, 1, tz="UTC"),
    catchup=False,
    render_template_as_native_obj=True,
    params={
        "partition": Param(
            {key: "" for key in TABLE.partition_keys},
            type="object",
            title="Partition",
            description=f"One value per partition key: {', '.join(TABLE.partition_keys)}",
            properties={
                key: {"type": "string", "pattern": SAFE_VALUE} for key in TABLE.partition_keys
            },
            required=list(TABLE.partition_keys),
            additionalProperties=False,
        ),
        "policies": Param(
            [str(kind) for kind in TABLE.policy_kind],
            type="array",
            title="Commit policies",
            items={"type": "string", "enum": [kind.value for kind in PolicyKind]},
            minItems=1,
            uniqueItems=True,
        ),
        "dry_run": Param(False, type="boolean", title="Dry run: plan only"),
    },
    doc_md=__doc__,
    tags=["fscommit"],
):
    compact = PartitionCompactOperator(
        task_id="compact",
        table=TABLE,
        partitions="{{ params.partition }}",
        dry_run="{{ params.dry_run }}",
        aws_conn_id=AWS_CONN_ID,
    )

    @task.short_circuit(task_id="unless_dry_run")
    def unless_dry_run(dry_run: bool) -> bool:
        """Skip the commit of a dry run: it only shows the plan."""
        return not dry_run

    commit = PartitionCommitOperator(
        task_id="commit",
        table={
            **TABLE.to_dict(),
            "policy_kind": "{{ params.policies | join(',') }}",
        },
        partitions="{{ params.partition }}",
        aws_conn_id=AWS_CONN_ID,
    )
    compact >> unless_dry_run("{{ params.dry_run }}") >> commit
