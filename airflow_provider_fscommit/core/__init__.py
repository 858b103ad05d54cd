"""The Airflow-free core: what a partition is, when it may be committed, what Spark wrote.

Each module holds one concept, named as in Flink's filesystem connector (partition spec,
time extractor, commit trigger, ...). The Spark job, the command line and the Airflow
operators all call into this package, so they judge partitions identically.
"""
