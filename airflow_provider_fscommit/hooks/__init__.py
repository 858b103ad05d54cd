"""Airflow hooks, one per system a commit talks to, each owning its connection.

``compaction`` (Spark, through the Spark provider's hooks), ``metastore`` (the Hive
metastore), ``aws`` (S3 settings for the core's storage calls) and ``http_report`` (the
``http-report`` endpoint); ``commit`` runs the table's policy chain over the last three.
Each uses the connection type of the provider that defines it and registers none.
"""
