"""Airflow sensors: waiting for a partition's watermark, in poke, reschedule or deferred mode."""
