"""``CleanStagingOperator``: its age is checked when the DAG is parsed, not when it runs.

What it deletes is tested with the core that it and the command share, in
tests/core/maintenance/test_retention.py.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from airflow_provider_fscommit.core.errors import ConfigError
from airflow_provider_fscommit.operators.clean_staging import CleanStagingOperator
from fscommit_dev.tables import hourly_table


def test_the_age_is_a_duration_or_the_dag_does_not_parse(tmp_path):
    table = hourly_table(str(tmp_path / "staging"), str(tmp_path / "checkpoint"))
    week = CleanStagingOperator(task_id="clean", table=table, older_than="7 d")
    assert week.older_than == timedelta(days=7)
    with pytest.raises(ConfigError, match="older_than: cannot parse duration 'a week'"):
        CleanStagingOperator(task_id="clean", table=table, older_than="a week")
