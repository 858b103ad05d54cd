"""Benchmarks of fscommit (issue #6): compaction throughput against DuckDB, pyarrow, naive
Spark and the I/O floor; reading a 1M-entry sink log; committing to a real metastore.

``python -m bench`` runs everything and writes ``bench/results/``; see ``bench/README.md``.
"""
