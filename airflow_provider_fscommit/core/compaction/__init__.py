"""Compaction: bin packing, the plan and its planner (Flink's ``CompactCoordinator``) and the
compactor (Flink's ``CompactOperator``): the Spark-side merge of small files, with the
output layout (``layout``), the readers of its inputs (``readers``) and a plan's schema read
on the driver (``plan_schema``). It knows no ledger; ``publish.publisher`` runs it exactly
once."""
