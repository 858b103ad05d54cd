"""The task of a broken table's DAG fails with the problems of its spec file."""

from __future__ import annotations

import pytest

from airflow_provider_fscommit.operators.broken_spec import BrokenSpecOperator
from airflow_provider_fscommit.version_compat import AirflowException


def test_the_task_fails_naming_every_problem():
    from airflow.sdk import DAG

    problems = ["f.yaml: dag.retries: bad", "f.yaml: bogus: unknown table option 'bogus'"]
    with DAG("d", schedule=None):
        task = BrokenSpecOperator(task_id="broken_spec", problems=problems)
    with pytest.raises(AirflowException, match=r"f\.yaml: dag\.retries: bad\nf\.yaml: bogus"):
        task.execute({})
