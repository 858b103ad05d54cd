"""The provider registry Airflow reads through the ``apache_airflow_provider`` entry point."""

from __future__ import annotations

from typing import Any

from airflow_provider_fscommit import __version__

INTEGRATION = "Partition commit (fscommit)"


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
        "integrations": [{"integration-name": INTEGRATION, "tags": ["software"]}],
        # No "connection-types": each hook declares the connection type it uses, but those
        # (spark, spark_connect, hive_metastore, aws, http, iceberg) are the Spark, Hive,
        # Amazon, HTTP and Iceberg providers' own; registering them here would claim them.
        "hooks": _modules(
            "hooks", "aws", "commit", "compaction", "glue", "http_report", "iceberg", "metastore"
        ),
        "operators": _modules(
            "operators",
            "broken_spec",
            "clean_staging",
            "commit",
            "committable_partitions",
            "compact",
            "partition_expire",
        ),
        "sensors": _modules("sensors", "completeness", "watermark"),
        "triggers": _modules("triggers", "completeness", "watermark"),
        "plugins": [
            {
                "name": "fscommit",
                "plugin-class": "airflow_provider_fscommit.plugins.fscommit.FsCommitPlugin",
            }
        ],
        "config": {
            "fscommit": {
                "description": "The commit-status page of the Airflow UI (Browse, Partition "
                "commit), served by the api-server at /fscommit/.",
                "options": {
                    "table_specs": {
                        "description": "The tables the page shows: their table spec files "
                        "(YAML or JSON, as the DAGs and `fscommit --spec` read), "
                        "comma-separated; glob patterns allowed.",
                        "version_added": None,
                        "type": "string",
                        "example": "/opt/airflow/dags/events.yaml,/opt/airflow/tables/*.yaml",
                        "default": "",
                    },
                    "stall_timeout": {
                        "description": "Show a stream as stalled when its watermark has not "
                        "moved for this long.",
                        "version_added": None,
                        "type": "string",
                        "example": "2 h",
                        "default": "30 min",
                    },
                },
            }
        },
    }


def _modules(package: str, *names: str) -> list[dict[str, Any]]:
    """One integration's entry listing ``package``'s modules."""
    return [
        {
            "integration-name": INTEGRATION,
            "python-modules": [f"airflow_provider_fscommit.{package}.{name}" for name in names],
        }
    ]
