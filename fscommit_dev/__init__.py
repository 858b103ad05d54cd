"""Development tooling: what the demo, the tests and the benchmarks run against.

Kept out of the provider's wheel (``setup.cfg`` packages ``airflow_provider_fscommit`` only,
and ``tests/test_packaging.py`` checks the wheel), so a user's Airflow never gets a demo or
a loopback metastore launcher. It lives at the repository's root, importable from a
checkout, because the tests and the benchmarks both use it and neither may import the
other's helpers.
"""
