"""Flink-style partition commit for Spark Structured Streaming tables, driven by Airflow.

The Airflow-free semantics live in :mod:`airflow_provider_fscommit.core`; the Airflow
integration (hooks, operators, sensors, triggers) and the command line are thin shells
around it, so a partition is judged the same way wherever it is looked at.
"""

__version__ = "0.1.0"
