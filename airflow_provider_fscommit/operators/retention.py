"""Deprecated: use :mod:`airflow_provider_fscommit.operators.clean_staging`.

``CleanStagingOperator`` moved there when the operator modules were named after their
operators; this path keeps working, with a warning, for the DAGs that import it.
"""

from airflow_provider_fscommit.operators import warn_moved
from airflow_provider_fscommit.operators.clean_staging import CleanStagingOperator

warn_moved(__name__, CleanStagingOperator)

__all__ = ["CleanStagingOperator"]
