"""Fault injection for the crash-safety tests, and nothing else.

Each step boundary of compaction, publishing and committing calls :func:`fault_point`. When the
environment variable ``FSCOMMIT_FAULT`` names that point, the whole process group (the
spark-submit application: JVM, driver and Python workers) is SIGKILLed on the spot, the
way a lost machine or an OOM kill ends a job. The tests start the application in a
session of its own: its process group is the session's, while pyspark's Python workers
run in a group of their own inside it, so both groups are killed. Nothing sets the
variable in production.
"""

from __future__ import annotations

import os
import signal
import time

FAULT_ENV = "FSCOMMIT_FAULT"
# Stall at the point for this many seconds instead of dying (a hung disk, a slow machine):
# for the tests that must act while a step is under way, e.g. kill a Spark Connect server
# whose tasks are in the middle of their units.
STALL_ENV = "FSCOMMIT_FAULT_STALL_S"
FAULT_POINTS = (
    "after-plan",  # intents written, nothing executed
    "during-unit",  # a unit's hidden output is half written
    "after-unit",  # one unit's hidden output is complete
    "after-units",  # every hidden output is complete, no commit record yet
    "after-commit-record",  # the commit point is durable, outputs still hidden
    "during-publish",  # some outputs renamed to their visible names, not all
    "after-policy",  # the first commit policy ran (e.g. the metastore has the partition)
    "after-policies",  # every policy ran (the success file exists), no ledger record yet
)
# A rewrite's own step boundary (the compaction and commit ones above it passes too).
REWRITE_FAULT_POINTS = (
    "during-retire",  # the policies committed the rewrite; some replaced files deleted
)
# Partition expiration's step boundaries (``fscommit expire --apply``), apart from the
# compaction and commit ones above that a compaction run passes.
EXPIRE_FAULT_POINTS = (
    "after-expire-drop",  # expired partitions left the metastore, their files remain
    "after-expire-delete",  # one expired partition's files are deleted, not yet recorded
)

# The ledger's upgrade to the table state (``ledger.upgrade``), on a table's first run
# under a release that keeps one.
UPGRADE_FAULT_POINTS = (
    "during-upgrade",  # every partition's records read, the table state not created yet
)


def fault_point(name: str) -> None:
    if os.environ.get(FAULT_ENV) != name:
        return
    if os.environ.get(STALL_ENV):
        time.sleep(float(os.environ[STALL_ENV]))
    else:
        os.killpg(os.getsid(0), signal.SIGKILL)
        os.killpg(os.getpgrp(), signal.SIGKILL)
