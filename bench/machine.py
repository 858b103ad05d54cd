"""The machine and software a result was measured on, named in every report.

Numbers mean little without it: two cores or sixteen, a loaded machine or an idle one,
which Spark, pyarrow and DuckDB. The load average is recorded at the start and the end
of each suite, because this machine is shared with test runs.
"""

from __future__ import annotations

import os
import platform
import subprocess
from pathlib import Path
from typing import Any

import psutil


def describe_machine() -> dict[str, Any]:
    import duckdb
    import pyarrow
    import pyspark

    return {
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "ram_gib": round(psutil.virtual_memory().total / 2**30, 1),
        "os": _os_name(),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "java": _java_version(),
        "spark": pyspark.__version__,
        "spark_jars": _spark_jar_version(Path(pyspark.__file__).parent / "jars"),
        "pyarrow": pyarrow.__version__,
        "duckdb": duckdb.__version__,
    }


def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def _cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def _os_name() -> str:
    release = Path("/etc/os-release")
    if release.exists():
        for line in release.read_text().splitlines():
            if line.startswith("PRETTY_NAME="):
                return line.split("=", 1)[1].strip('"')
    return platform.platform()


def _java_version() -> str:
    result = subprocess.run(["java", "-version"], capture_output=True, text=True, check=False)
    lines = (result.stderr or result.stdout).splitlines()
    return lines[0] if lines else "unknown"


def _spark_jar_version(jars: Path) -> str:
    """The version of the Spark jars spark-submit runs (pyspark's Python may differ)."""
    cores = sorted(jars.glob("spark-core_*.jar"))
    return cores[0].stem.split("-", 2)[-1] if cores else "unknown"
