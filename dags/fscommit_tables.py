"""
### One commit DAG per table

Every spec file in `specs/` (beside this file) is one table and one DAG: the hourly commit
of `fscommit_hourly.py` (wait for the watermark, compact, commit), scheduled once per
partition, with the settings of the file's `dag:` section. Add a table by adding a file;
check a folder before deploying it with `fscommit validate dags/specs`.

A broken spec file hides no other table: its problems are logged at ERROR by the DAG
processor, and its table's DAG is replaced by one tagged `fscommit-broken-spec` that
names them and commits nothing.
"""

from __future__ import annotations

from airflow_provider_fscommit.factory import partition_commit_dags

globals().update(partition_commit_dags("specs/"))
