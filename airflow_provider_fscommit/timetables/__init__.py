"""Timetables: when a table's DAG runs, and which partition a run commits."""
