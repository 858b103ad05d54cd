"""
### A table's DAGs per spec file

Every spec file in `specs/` (beside this file) is one table and its DAGs: the hourly
commit of `fscommit_hourly.py` (wait for the watermark, compact, commit), scheduled once
per partition, and `<dag_id>_maintenance`, hourly by default: its sweep publishes late data
and finishes unfinished commits, and it expires partitions and cleans staging only when
the spec asks. Settings from the file's `dag:` section. Add a table by adding a file;
`fscommit validate dags/specs` checks a folder and says what each table will run.

A broken spec file hides no other table: its problems are logged at ERROR by the DAG
processor, and its table's DAG is replaced by one tagged `fscommit-broken-spec` that
names them and commits nothing.
"""

from __future__ import annotations

from airflow_provider_fscommit.factory import partition_commit_dags

globals().update(partition_commit_dags("specs/"))
