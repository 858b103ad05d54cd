"""The catalogs a table's partitions are committed to, one module per catalog client.

Flink's ``TableMetaStoreFactory.TableMetaStore``: one interface, :class:`CatalogTable`
(``catalog_table``), over each client: a Hive metastore over Thrift with its partition
events (``metastore_table``), the AWS Glue Data Catalog (``glue_table``), an Apache
Iceberg table of a pyiceberg catalog with its schema mapping and catalog loading
(``iceberg_table``, ``iceberg_schema``). What every Hive-style catalog holds of a
partition is decided once (``hive_partition``). The commit policies are thin adapters
over these; the hooks, the completeness sensor and its trigger read through them.

It sits below ``commit`` (the policies) and above ``publish`` (a published partition is
what a catalog is given) and ``status`` (the completeness it carries).
"""
