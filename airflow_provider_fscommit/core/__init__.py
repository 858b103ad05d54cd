"""The Airflow-free core: what a partition is, when it may be committed, what Spark wrote.

A package per concept (config, storage, formats, spark, partition, compaction, commit,
ledger, status), and in each a module per concept named as in Flink's filesystem connector
(partition spec, time extractor, commit trigger, bin packing, planner, committer, ...). The
Spark job, the command line and the Airflow operators all call into this package, so they
judge partitions identically.
"""
