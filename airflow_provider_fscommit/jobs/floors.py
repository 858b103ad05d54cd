"""What the compaction job needs of the Python and pyarrow it runs on, checked at its start.

The driver and the executors run the cluster's own Python (``spark.pyspark.driver.python``
and ``spark.pyspark.python``, or ``PYSPARK_PYTHON``), which need not be the Airflow side's.
Below these floors the job would fail later, unit by unit, with messages about missing
names; it refuses at its start instead, before anything is planned or written. This module
imports nothing but the standard library and evaluates no annotation, so it runs on any
Python an executor has.
"""

from __future__ import annotations

import platform

PYTHON_FLOOR = (3, 9)
PYARROW_FLOOR = (15, 0)


def runtime(_: object = None) -> tuple[str, str | None]:
    """This process's Python and pyarrow versions (None: pyarrow is not installed)."""
    try:
        import pyarrow
    except ImportError:
        return platform.python_version(), None
    return platform.python_version(), pyarrow.__version__


def refusal(where: str, found: tuple[str, str | None]) -> str | None:
    """The one message refusing ``found`` on the ``where`` (driver, executors), or None."""
    python, pyarrow = found
    problems = []
    if _minor(python) < PYTHON_FLOOR:
        problems.append(f"Python {python} (the floor is {_dotted(PYTHON_FLOOR)})")
    if pyarrow is None:
        problems.append(f"no pyarrow (the floor is {_dotted(PYARROW_FLOOR)})")
    elif _minor(pyarrow) < PYARROW_FLOOR:
        problems.append(f"pyarrow {pyarrow} (the floor is {_dotted(PYARROW_FLOOR)})")
    if not problems:
        return None
    driver = where == "driver"
    conf = "spark.pyspark.driver.python" if driver else "spark.pyspark.python"
    return (
        f"the compaction job's {where} {'runs' if driver else 'run'} "
        f"{' with '.join(problems)}; point {conf} (or "
        f"PYSPARK_PYTHON) at a Python {_dotted(PYTHON_FLOOR)}+ of the cluster that has "
        f"pyarrow {_dotted(PYARROW_FLOOR)}+ installed; nothing was planned or written"
    )


def _minor(version: str) -> tuple[int, ...]:
    parts = []
    for part in version.split(".")[:2]:
        digits = "".join(c for c in part if c.isdigit())
        parts.append(int(digits or 0))
    return tuple(parts)


def _dotted(version: tuple[int, int]) -> str:
    return ".".join(map(str, version))
