"""The Airflow-free core: what a partition is, when it may be committed, what Spark wrote.

A package per concept, and in each a module per concept named as in Flink's filesystem
connector (partition spec, time extractor, commit trigger, bin packing, planner, committer,
...). The packages are layers, each importing only those below it: base modules (errors,
faults, compat, loader), storage, formats and partition, config, spark, compaction, ledger,
status, commit, maintenance. ARCHITECTURE.md at the repository root says what each holds
and why it sits where it does; ``.importlinter`` holds the contracts a test keeps, and that
nothing here imports Airflow or the shells. The Spark job, the command line and the Airflow
operators all call into this package, so they judge partitions identically.
"""
