"""Spark applications the benchmarks submit: input generation, baselines, verification."""
