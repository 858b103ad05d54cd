"""The provider registry Airflow reads through the ``apache_airflow_provider`` entry point."""

from __future__ import annotations

from typing import Any

from airflow_provider_fscommit import __version__


def get_provider_info() -> dict[str, Any]:
    """Describe the provider to ``airflow providers list`` and the providers manager."""
    return {
        "package-name": "airflow-provider-fscommit",
        "name": "Partition commit for Spark streaming tables (fscommit)",
        "description": (
            "Flink-style partition commit for Spark Structured Streaming output: "
            "watermark sensors read the query checkpoint, a SparkSubmit job compacts "
            "committed small files, commit policies publish the partition."
        ),
        "versions": [__version__],
    }
