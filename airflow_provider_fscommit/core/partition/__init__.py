"""Partitions and their time: Hive paths, time extraction, formatters, commit triggers."""
