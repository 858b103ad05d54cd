"""Deprecated: use :mod:`airflow_provider_fscommit.operators.committable_partitions`.

``CommittablePartitionsOperator`` moved there when the operator modules were named after
their operators; this path keeps working, with a warning, for the DAGs that import it.
"""

from __future__ import annotations

import warnings

from airflow.exceptions import AirflowProviderDeprecationWarning

from airflow_provider_fscommit.operators.committable_partitions import CommittablePartitionsOperator

warnings.warn(
    "airflow_provider_fscommit.operators.discover is deprecated; import "
    "CommittablePartitionsOperator from "
    "airflow_provider_fscommit.operators.committable_partitions",
    AirflowProviderDeprecationWarning,
    stacklevel=2,
)

__all__ = ["CommittablePartitionsOperator"]
