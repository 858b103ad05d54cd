"""PySpark applications that spark-submit runs (the compaction job)."""
