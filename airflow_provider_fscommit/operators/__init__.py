"""Airflow operators: compaction and commit tasks, thin shells over the core."""
