"""How pytest-xdist deals the suite out to its workers: whole modules, longest first.

A module is one unit of work, so its module-scoped fixtures (a wheel, a deployment) are
set up once; session ones (the Spark session, the streams, the metastore) once per
worker. The compatibility suites are split further: each line (the parameter of their
module-scoped venv fixture) is a unit of its own, so the lines run beside each other.
(xdist's own ``xdist_group`` cannot say so: pytest 9 ignores the node id it rewrites.)
Units go out longest first, by the seconds ``tests/durations.json`` records, so a long
unit never starts last while the other workers run out of work: the suite takes about its
work divided among the workers, or its longest unit, whichever is more. A unit the
record does not know counts as short.

``--record-durations`` rewrites the record from the run it ends (each unit's setup, call
and teardown seconds, summed); refresh it when the suite's shape changes."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest
from xdist.scheduler import LoadScopeScheduling

DURATIONS = Path(__file__).resolve().parents[1] / "durations.json"
UNKNOWN_S = 10.0  # a unit not in the record (a new module): taken for a short one


# Modules whose tests are split into units by their (first) parameter: one per line.
SPLIT_BY_LINE = ("tests/compat/test_airflow_lines.py", "tests/compat/test_spark_lines.py")


def unit_of(nodeid: str) -> str:
    """The unit a test belongs to: its module, or in :data:`SPLIT_BY_LINE` its module and
    line (``tests/compat/test_airflow_lines.py[airflow3.2.2-py3.12]``)."""
    module, _, name = nodeid.partition("::")
    if module in SPLIT_BY_LINE and name.endswith("]"):
        return f"{module}[{name[name.index('[') + 1 : -1]}]"
    return module


def recorded() -> dict[str, float]:
    try:
        return json.loads(DURATIONS.read_text())
    except FileNotFoundError:
        return {}


class LongestFirstScheduling(LoadScopeScheduling):
    """xdist's scope scheduling with :func:`unit_of` as the scope, the longest unit first,
    and a worker's next unit sent only when it is down to its last test (the one it holds
    until it knows what follows): a unit queued behind a long one on a busy worker would
    leave another worker idle at the end."""

    _ordered = False

    def _split_scope(self, nodeid: str) -> str:
        return unit_of(nodeid)

    def _assign_work_unit(self, node) -> None:
        if not self._ordered:  # the queue is complete when the first unit goes out
            seconds = recorded()
            units = sorted(self.workqueue.items(), key=lambda u: -seconds.get(u[0], UNKNOWN_S))
            self.workqueue.clear()
            self.workqueue.update(units)
            self._ordered = True
        super()._assign_work_unit(node)

    def _reschedule(self, node) -> None:
        if node.shutting_down:
            return
        if not self.workqueue:
            node.shutdown()
        elif self._pending_of(self.assigned_work[node]) <= 1:
            self._assign_work_unit(node)


class UnitTimes:
    """Each unit's seconds over the run (setup, call and teardown of its tests, summed):
    printed at the end for the compatibility lines and the longest units, so every CI
    log shows where the time goes, and written to :data:`DURATIONS` when ``record``."""

    def __init__(self, record: bool) -> None:
        self.record = record
        self.seconds: dict[str, float] = defaultdict(float)

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.seconds[unit_of(report.nodeid)] += report.duration

    @pytest.hookimpl
    def pytest_terminal_summary(self, terminalreporter) -> None:
        if not self.seconds:  # nothing ran (--collect-only)
            return
        ordered = dict(sorted(self.seconds.items(), key=lambda item: -item[1]))
        compat = [u for u in ordered if u.startswith("tests/compat/")]
        shown = compat + [u for u in list(ordered)[:15] if u not in compat]
        terminalreporter.write_sep("=", "seconds per unit of work (compatibility lines first)")
        for unit in shown:
            terminalreporter.write_line(f"{ordered[unit]:8.1f} s  {unit}")
        if self.record:
            rounded = {u: round(s, 1) for u, s in ordered.items()}
            DURATIONS.write_text(json.dumps(rounded, indent=1) + "\n")
            terminalreporter.write_line(f"recorded in {DURATIONS}")
