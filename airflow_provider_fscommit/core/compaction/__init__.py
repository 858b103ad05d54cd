"""Compaction: bin packing, the plan and its planner (Flink's ``CompactCoordinator``) and the
compactor (Flink's ``CompactOperator``): the Spark-side merge of small files. It knows no
ledger; ``publish.publisher`` runs it exactly once."""
