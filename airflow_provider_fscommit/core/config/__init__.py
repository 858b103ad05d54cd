"""Configuration: the table spec, every option's key and default, durations and sizes."""
