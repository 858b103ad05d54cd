"""The ``success-file`` policy: a marker file in the published partition directory.

Its content is a small JSON commit record (readers that only test for the file are
unaffected); it is written atomically, and rewritten when late data is committed.
"""

from __future__ import annotations

import json

from airflow_provider_fscommit.core.commit.policy import PartitionCommitPolicy
from airflow_provider_fscommit.core.config.options import PolicyKind
from airflow_provider_fscommit.core.publish.published import CommitContext
from airflow_provider_fscommit.core.storage.filesystem import resolve_filesystem, write_atomically


class SuccessFileCommitPolicy(PartitionCommitPolicy):
    kind = PolicyKind.SUCCESS_FILE

    def __init__(self, file_name: str) -> None:
        self.file_name = file_name

    def commit(self, context: CommitContext) -> None:
        filesystem, root = resolve_filesystem(context.spec.require_table_path())
        record = {"partition": context.path, **context.summary.to_dict()}
        write_atomically(
            filesystem,
            f"{root.rstrip('/')}/{context.path}/{self.file_name}",
            json.dumps(record, indent=1, sort_keys=True).encode(),
        )
