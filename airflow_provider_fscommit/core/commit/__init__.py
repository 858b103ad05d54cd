"""Partition commit: the policies (Flink's ``PartitionCommitPolicy``), their factory and the
committer that runs the chain (Flink's ``PartitionCommitter``)."""
