"""A local Hive metastore for tests, the demo and laptops (production uses its own)."""
