"""``python -m bench.soak``: a production day, compressed (issue 59).

    python -m bench.soak --tables 8 --minutes 20 --seed 1        # the bench run, every fault
    python -m bench.soak --tables 2 --minutes 5 --faults triggerer,task   # a quick look

One Airflow deployment (PostgreSQL; scheduler, triggerer, api-server and dag-processor
with the LocalExecutor), the loopback Hive metastore, a Spark Connect server for the
compactions and one Spark application running a live streaming query per table, with
the DAG factory's DAGs made from specs ``fscommit init`` wrote; the faults struck on a
seeded schedule, each part restarted as a supervisor would; the checks at the end and the
freshness, resources and metastore calls measured (``fscommit_dev/soak/``). It is not a
suite of ``python -m bench``: it is one deployment running for its minutes, not processes
timed one at a time. Its results join the others in ``results.json`` and RESULTS.md
(one entry per size, seed and faults, each with when it ran), and every partition's
figures go to ``results/soak-<run>.json``.

The exit status is 1 when a check failed (each failure is printed, naming the partition
and the rule), 0 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench import machine, report
from bench.machine import describe_machine, load_average
from bench.settings import DEFAULT_RESULTS, DEFAULT_SCRATCH
from fscommit_dev.soak.faults import KINDS
from fscommit_dev.soak.run import run_soak
from fscommit_dev.soak.tables import SoakSettings


def _faults(text: str) -> tuple[str, ...]:
    kinds = tuple(k.strip() for k in text.split(",") if k.strip())
    unknown = sorted(set(kinds) - set(KINDS))
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown {unknown}; choose from {list(KINDS)}")
    return kinds


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.soak", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--tables", type=int, default=8, help="live tables (default 8)")
    parser.add_argument("--minutes", type=float, default=20, help="minutes of rows (default 20)")
    parser.add_argument(
        "--seed", type=int, default=1, help="the faults' order and moments, the rows"
    )
    parser.add_argument(
        "--faults",
        type=_faults,
        default=KINDS,
        help=f"comma-separated, in any order (default all: {','.join(KINDS)}); '' for none",
    )
    parser.add_argument("--sweep-minutes", type=int, default=2, help="dag.sweep (default 2)")
    parser.add_argument("--poke-seconds", type=int, default=5, help="dag.poke_interval (default 5)")
    parser.add_argument(
        "--scratch",
        type=Path,
        default=DEFAULT_SCRATCH,
        help=f"the run's files (default {DEFAULT_SCRATCH})",
    )
    parser.add_argument("--results", type=Path, default=DEFAULT_RESULTS)
    args = parser.parse_args(argv)
    if args.tables < 1 or args.minutes <= 0:
        parser.error("--tables must be at least 1 and --minutes positive")
    return args


def run_name(settings: SoakSettings) -> str:
    """The key of a run in the results: its size, seed and faults."""
    faults = len(settings.faults)
    return f"{settings.tables}x{settings.minutes:g}min-seed{settings.seed}-{faults}faults"


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    settings = SoakSettings(
        tables=args.tables,
        minutes=args.minutes,
        seed=args.seed,
        faults=args.faults,
        sweep_minutes=args.sweep_minutes,
        poke_seconds=args.poke_seconds,
    )
    base = args.scratch.resolve() / "soak" / run_name(settings)
    shutil.rmtree(base, ignore_errors=True)
    started, load_before = datetime.now(UTC), load_average()
    try:
        document = run_soak(base, settings)
    finally:
        print(f"soak: the run's files and logs are in {base}")
    ran = {
        "started": started.isoformat(timespec="seconds"),
        "load_before": load_before,
        "load_after": load_average(),
        "base": str(base),
    }
    save(args.results, run_name(settings), document, ran)
    failures = document["violations"]
    for v in failures:
        print(f"FAILED {v['rule']}: {v['table']} {v['partition']}: {v['detail']}")
    print(f"soak: {len(failures)} check failures; results in {args.results / 'RESULTS.md'}")
    return 1 if failures else 0


def soak_machine() -> dict[str, Any]:
    """The machine as the other suites name it (``bench/machine.py``); without the bench
    extra's DuckDB (the soak does not need it) every other entry."""
    try:
        return describe_machine()
    except ImportError:
        import platform

        import psutil
        import pyarrow
        import pyspark

        return {
            "cpu": machine._cpu_model(),
            "cores": os.cpu_count(),
            "ram_gib": round(psutil.virtual_memory().total / 2**30, 1),
            "os": machine._os_name(),
            "kernel": platform.release(),
            "python": platform.python_version(),
            "java": machine._java_version(),
            "spark": pyspark.__version__,
            "pyarrow": pyarrow.__version__,
        }


def save(results: Path, name: str, document: dict[str, Any], ran: dict[str, Any]) -> None:
    """The run's summary into results.json's ``soak`` suite (other runs kept), its
    partitions into ``soak-<name>.json``; RESULTS.md regenerated."""
    results.mkdir(parents=True, exist_ok=True)
    detail = {k: document[k] for k in ("partitions", "tables", "faults")}
    (results / f"soak-{name}.json").write_text(json.dumps(detail, indent=1) + "\n")
    summary = {k: v for k, v in document.items() if k != "partitions"} | {"settings_ran": ran}
    whole = report.load(results)
    summary["machine"] = soak_machine()
    whole.setdefault("machine", summary["machine"])
    suite = whole["suites"].setdefault("soak", {"settings": ran, "results": {"runs": {}}})
    suite["settings"] = ran
    suite["results"]["runs"][name] = summary
    report.save(results, whole)


if __name__ == "__main__":
    sys.exit(main())
