"""``BrokenSpecOperator``: the one task of a table whose spec file is broken.

The DAG factory gives such a table a DAG of its id, so the table stays visible in the UI
with its problems; its task fails with them if the DAG is triggered, so a run of it never
looks like a commit that worked.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from airflow.sdk import BaseOperator

from airflow_provider_fscommit.version_compat import AirflowException


class BrokenSpecOperator(BaseOperator):
    """Fails with its spec file's problems (``FILE: option: message`` each)."""

    ui_color = "#f4a6a6"

    def __init__(self, *, problems: Sequence[str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.problems = list(problems)

    def execute(self, context: Any) -> None:
        raise AirflowException("the table's spec file is broken:\n" + "\n".join(self.problems))
