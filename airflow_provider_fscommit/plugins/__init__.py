"""The Airflow UI plugin: the commit-status page of the configured tables."""
