"""Compaction: bin packing, the planner (Flink's ``CompactCoordinator``), the compactor
(Flink's ``CompactOperator``) and the publisher that runs them exactly once."""
