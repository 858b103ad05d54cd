"""Airflow hooks: connections to the systems a commit talks to (Spark, the metastore)."""
