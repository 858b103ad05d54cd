"""What Spark wrote: its metadata logs, the checkpoint, the file sink log, the staging table."""
