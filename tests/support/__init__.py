"""What the tests run against: real Spark streams, metastore, S3 and Airflow servers,
and the helpers that build and check tables. Fault injection is the only place for fakes."""
