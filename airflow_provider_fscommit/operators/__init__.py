"""Airflow operators: compaction and commit tasks, thin shells over the core."""

from __future__ import annotations

import warnings


def warn_moved(old_module: str, operator: type) -> None:
    """Warn that ``old_module`` is deprecated, as Airflow's providers do when a module
    moves: the operator's new module is named after it, the old path keeps working."""
    from airflow.exceptions import AirflowProviderDeprecationWarning

    warnings.warn(
        f"{old_module} is deprecated; import {operator.__name__} from {operator.__module__}",
        AirflowProviderDeprecationWarning,
        stacklevel=3,
    )
