"""``GlueHook``: the AWS Glue Data Catalog clients the ``glue`` policy uses.

In a DAG, ``aws_conn_id`` names an Airflow AWS connection and the Amazon provider's
``AwsBaseHook`` resolves it exactly as Airflow's own Glue operators do (keys, a profile,
an assumed role, the connection's ``endpoint_url`` and ``region_name``), masking the
secret in task logs. Without a connection (the default, and the command line) boto3's
standard chain applies: the environment (``AWS_DEFAULT_REGION``, ``AWS_ENDPOINT_URL``),
a profile, an instance role or web identity. The core takes a factory, not a client
(``get_conn`` is that factory), so a chain without ``glue`` never builds one. boto3 and the
Amazon provider are the ``glue`` extra's, imported only when a client is made.
"""

from __future__ import annotations

from typing import Any

from airflow_provider_fscommit.core.catalogs.glue_table import GlueClientFactory, GlueTable
from airflow_provider_fscommit.core.errors import import_extra
from airflow_provider_fscommit.version_compat import BaseHook

#: botocore retries a throttled or failed call itself too, in its standard mode.
RETRIES = {"mode": "standard", "max_attempts": 5}
#: What the ``glue`` extra's missing message says needs it.
USED_BY = "the glue policy (the AWS Glue Data Catalog)"


class GlueHook(BaseHook):
    """Glue clients of one AWS identity, made only when the ``glue`` policy asks.

    Uses the Amazon provider's ``aws`` connection type (it defines it).

    :param aws_conn_id: AWS connection of the catalog (None: the standard AWS chain).
    """

    conn_name_attr = "aws_conn_id"
    default_conn_name = "aws_default"
    conn_type = "aws"
    hook_name = "AWS Glue Data Catalog (partition commit)"

    def __init__(self, aws_conn_id: str | None = None) -> None:
        super().__init__()
        self.aws_conn_id = aws_conn_id

    def get_conn(self) -> Any:
        """A new boto3 Glue client."""
        config = import_extra("botocore.config", "glue", USED_BY).Config(retries=RETRIES)
        if self.aws_conn_id is None:
            return import_extra("boto3", "glue", USED_BY).client("glue", config=config)
        base_aws = import_extra("airflow.providers.amazon.aws.hooks.base_aws", "glue", USED_BY)
        return base_aws.AwsBaseHook(
            aws_conn_id=self.aws_conn_id, client_type="glue", config=config
        ).conn

    def get_table(self, database: str, table: str, catalog_id: str | None = None) -> GlueTable:
        """``database.table`` in the catalog of ``catalog_id`` (None: the identity's own
        account); a client is made only when it is asked something."""
        return GlueTable(self.get_conn, database, table, catalog_id)

    def get_table_parameters(
        self, database: str, table: str, catalog_id: str | None = None
    ) -> dict[str, str]:
        """``database.table``'s parameters in the catalog of ``catalog_id`` (None: the
        identity's own account), e.g. the completeness a commit run published; one error
        naming the table, or the refused credentials."""
        return self.get_table(database, table, catalog_id).read_table_parameters()


def glue_client_factory(aws_conn_id: str | None) -> GlueClientFactory:
    """``GlueHook(aws_conn_id).get_conn``, for callers holding only the id."""
    return GlueHook(aws_conn_id).get_conn
