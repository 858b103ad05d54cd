"""A local Hive metastore for tests, the demo and laptops (production uses its own):
``server`` starts and stops it; ``client`` and ``hive_sql`` are how the tests and the
benchmarks make tables in it and read them back."""
