"""The ``glue`` policy: add or update the partition in the AWS Glue Data Catalog.

An adapter over :class:`~airflow_provider_fscommit.core.catalogs.glue_table.GlueTable`,
which says how (Glue's batch calls, in its chunks, refusals named and never dropped).
"""

from __future__ import annotations

from airflow_provider_fscommit.core.catalogs.glue_table import GlueClientFactory, GlueTable
from airflow_provider_fscommit.core.commit.catalog import CatalogPolicy


class GlueCommitPolicy(CatalogPolicy):
    """Commits partitions to one table of a Glue Data Catalog, in batches.

    :param client_factory: makes a boto3 Glue client (credentials, region, endpoint).
    :param catalog_id: the catalog's AWS account id (None: the caller's own).
    """

    def __init__(
        self,
        client_factory: GlueClientFactory,
        database: str,
        table: str,
        catalog_id: str | None = None,
    ) -> None:
        super().__init__(GlueTable(client_factory, database, table, catalog_id))
