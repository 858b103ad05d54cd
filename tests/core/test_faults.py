"""Fault points: FSCOMMIT_FAULT=<point> kills the process group there, or stalls it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from airflow_provider_fscommit.core.faults import (
    EXPIRE_FAULT_POINTS,
    FAULT_ENV,
    FAULT_POINTS,
    REWRITE_FAULT_POINTS,
    STALL_ENV,
    fault_point,
)

PASS_POINTS = """
from airflow_provider_fscommit.core.faults import fault_point
for point in ("after-plan", "after-unit", "after-policies"):
    fault_point(point)
    print("passed", point, flush=True)
"""


def run(env: dict[str, str]) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in (FAULT_ENV, STALL_ENV)}
    return subprocess.run(
        [sys.executable, "-c", PASS_POINTS],
        env=clean | env,
        start_new_session=True,  # as the tests start the application: a group of its own
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_named_point_kills_the_whole_process_group_on_the_spot():
    killed = run({FAULT_ENV: "after-unit"})
    assert killed.returncode == -signal.SIGKILL
    assert killed.stdout == "passed after-plan\n"


def test_without_the_variable_or_with_another_point_every_point_passes():
    for env in ({}, {FAULT_ENV: "during-publish"}):
        passed = run(env)
        assert passed.returncode == 0, passed.stderr
        assert passed.stdout.splitlines() == [
            "passed after-plan",
            "passed after-unit",
            "passed after-policies",
        ]


def test_a_stall_waits_at_the_point_instead_of_dying(monkeypatch):
    monkeypatch.setenv(FAULT_ENV, "after-commit-record")
    monkeypatch.setenv(STALL_ENV, "0.3")
    started = time.monotonic()
    fault_point("after-commit-record")
    assert time.monotonic() - started >= 0.3


def test_point_names_are_unique():
    points = FAULT_POINTS + EXPIRE_FAULT_POINTS + REWRITE_FAULT_POINTS
    assert len(set(points)) == len(points)
