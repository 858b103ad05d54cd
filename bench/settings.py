"""What one benchmark run is asked to do: its scale, repetitions and directories.

Every suite reads the same settings, so a smoke run (``--scale 0.05``) shrinks every
workload in proportion and stays comparable in shape with the full-size run.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_SCRATCH = Path(os.environ.get("FSCOMMIT_BENCH_SCRATCH", "/tmp/fscommit-bench"))
DEFAULT_RESULTS = REPO / "bench" / "results"
# Spark runs on two cores: the machine the targets are stated for.
SPARK_MASTER = "local[2]"


@dataclass(frozen=True)
class BenchSettings:
    """One run's knobs; ``scale`` multiplies file counts, entries and partitions."""

    scale: float = 1.0
    reps: int = 3
    scratch: Path = DEFAULT_SCRATCH
    results: Path = DEFAULT_RESULTS

    def scaled(self, full_size: int, minimum: int = 1) -> int:
        """``full_size`` at this run's scale, never below ``minimum``."""
        return max(minimum, round(full_size * self.scale))

    def directory(self, *parts: str) -> Path:
        """A scratch directory (created): big inputs and outputs never go into the repo."""
        path = self.scratch.joinpath(*parts)
        path.mkdir(parents=True, exist_ok=True)
        return path


def python() -> str:
    """The interpreter of this environment (it has pyspark, pyarrow and duckdb)."""
    return sys.executable
