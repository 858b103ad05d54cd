"""Deprecated: use :mod:`airflow_provider_fscommit.operators.partition_expire`.

``PartitionExpireOperator`` moved there when the operator modules were named after their
operators; this path keeps working, with a warning, for the DAGs that import it.
"""

from airflow_provider_fscommit.operators import warn_moved
from airflow_provider_fscommit.operators.partition_expire import PartitionExpireOperator

warn_moved(__name__, PartitionExpireOperator)

__all__ = ["PartitionExpireOperator"]
