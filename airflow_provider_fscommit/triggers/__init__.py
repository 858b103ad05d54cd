"""Airflow triggers for deferrable sensors; they only wait, and live in the installed package."""
