"""Deprecated: use :mod:`airflow_provider_fscommit.operators.partition_expire`.

``PartitionExpireOperator`` moved there when the operator modules were named after their
operators; this path keeps working, with a warning, for the DAGs that import it.
"""

from __future__ import annotations

import warnings

from airflow.exceptions import AirflowProviderDeprecationWarning

from airflow_provider_fscommit.operators.partition_expire import PartitionExpireOperator

warnings.warn(
    "airflow_provider_fscommit.operators.expiration is deprecated; import "
    "PartitionExpireOperator from "
    "airflow_provider_fscommit.operators.partition_expire",
    AirflowProviderDeprecationWarning,
    stacklevel=2,
)

__all__ = ["PartitionExpireOperator"]
