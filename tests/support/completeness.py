"""A table's completeness published to a catalog, as a commit run publishes it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from airflow_provider_fscommit.core.config.quantities import epoch_ms
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.status.completeness import Completeness
from fscommit_dev.tables import hourly_table


def publish_completeness(policy: Any, tmp_path: Path, through_hour: int) -> None:
    """``policy``'s table complete through hour ``through_hour`` of 2026-11-20 (UTC): its
    parameters set by the catalog policy's ``update_table_parameters``, as the committer
    sets them after a commit run."""
    spec = TableSpec.from_options(hourly_table(str(tmp_path / "s"), str(tmp_path / "c")))
    through = epoch_ms(f"2026-11-20T{through_hour:02d}:00:00+00:00")
    parameters = Completeness(through + 3_600_000, through, through).table_parameters()
    policy.update_table_parameters(spec, parameters)
