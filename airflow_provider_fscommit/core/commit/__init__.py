"""Partition commit: the publisher that compacts and publishes exactly once, the policies
(Flink's ``PartitionCommitPolicy``), their factory and the committer that runs the chain
(Flink's ``PartitionCommitter``)."""
