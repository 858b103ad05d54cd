"""Deprecated: use :mod:`airflow_provider_fscommit.operators.clean_staging`.

``CleanStagingOperator`` moved there when the operator modules were named after their
operators; this path keeps working, with a warning, for the DAGs that import it.
"""

from __future__ import annotations

import warnings

from airflow.exceptions import AirflowProviderDeprecationWarning

from airflow_provider_fscommit.operators.clean_staging import CleanStagingOperator

warnings.warn(
    "airflow_provider_fscommit.operators.retention is deprecated; import "
    "CleanStagingOperator from "
    "airflow_provider_fscommit.operators.clean_staging",
    AirflowProviderDeprecationWarning,
    stacklevel=2,
)

__all__ = ["CleanStagingOperator"]
