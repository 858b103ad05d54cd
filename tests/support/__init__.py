"""What the tests alone run against: Airflow's services and PostgreSQL, the browser, the
compatibility venvs and the wheel, fault injection (the only place for fakes), and the
helpers that check compacted tables. What the tests share with the benchmarks and the
demo (real Spark streams, the metastore, the S3 and Spark Connect servers, an Airflow
home) is in ``fscommit_dev``."""
