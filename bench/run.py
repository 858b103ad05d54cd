"""``python -m bench``: run the benchmark suites and write ``bench/results/``.

    python -m bench                      # everything, full size, 3 repetitions
    python -m bench --scale 0.05 --reps 2  # a smoke run of the same shape
    python -m bench --suites checkpoint  # one suite; the others' results are kept
    python -m bench --suites compaction --workloads a-orc  # one workload; the others are kept

Suites run one after the other, one benchmarked process at a time, so they do not compete
with each other for the two cores.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from airflow_provider_fscommit.jobs.class_archive import DIR_ENV as CLASS_ARCHIVE_DIR
from bench import report
from bench.checkpoint_scale import run_checkpoint_scale
from bench.compaction import run_compaction
from bench.engines import ENGINES
from bench.factory import run_factory
from bench.iceberg import run_iceberg
from bench.layout import run_layout
from bench.ledger_scale import run_ledger_scale
from bench.machine import describe_machine, load_average
from bench.metastore import run_metastore
from bench.object_store import run_object_store
from bench.overview import run_overview
from bench.profiling import run_profiles
from bench.settings import DEFAULT_RESULTS, DEFAULT_SCRATCH, BenchSettings
from bench.wait import RUNS, WINDOW_S, run_poll, run_wait
from bench.workloads import WORKLOADS

SUITES = (
    "compaction",
    "checkpoint",
    "metastore",
    "iceberg",
    "profile",
    "object-store",
    "wait",
    "poll",
    "factory",
    "overview",
    "ledger-scale",
    "layout",
)


def _names(choices: Sequence[str]) -> Callable[[str], list[str]]:
    def parse(text: str) -> list[str]:
        names = [n.strip() for n in text.split(",") if n.strip()]
        unknown = sorted(set(names) - set(choices))
        if unknown:
            raise argparse.ArgumentTypeError(f"unknown {unknown}; choose from {list(choices)}")
        return names

    return parse


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="shrink every workload (0-1]")
    parser.add_argument("--reps", type=int, default=3, help="repetitions per measurement")
    parser.add_argument(
        "--scratch",
        type=Path,
        default=DEFAULT_SCRATCH,
        help=f"inputs and outputs (default {DEFAULT_SCRATCH})",
    )
    parser.add_argument(
        "--results", type=Path, default=DEFAULT_RESULTS, help="where results.json and RESULTS.md go"
    )
    parser.add_argument("--suites", type=_names(SUITES), default=list(SUITES))
    parser.add_argument("--workloads", type=_names(tuple(WORKLOADS)), default=list(WORKLOADS))
    parser.add_argument("--engines", type=_names(tuple(ENGINES)), default=list(ENGINES))
    parser.add_argument(
        "--wait-window",
        type=int,
        metavar="SECONDS",
        help=f"the wait suite's measured window per configuration (default {WINDOW_S} s, scaled)",
    )
    parser.add_argument(
        "--wait-runs",
        type=_names(RUNS),
        default=list(RUNS),
        help="the wait suite's configurations to run; the others' results are kept",
    )
    args = parser.parse_args(argv)  # fmt: skip
    if not 0 < args.scale <= 1 or args.reps < 1:
        parser.error("--scale must be in (0, 1] and --reps at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    settings = BenchSettings(args.scale, args.reps, args.scratch.resolve(), args.results)
    # fscommit's spark-submits start their drivers from the bench's own class archive, as a
    # worker host's runs do from its cache (jobs/class_archive.py); naive Spark's do not.
    os.environ.setdefault(CLASS_ARCHIVE_DIR, str(settings.directory("jvm-class-archive")))
    runners: dict[str, Callable[[], Any]] = {
        "compaction": lambda: run_compaction(settings, args.workloads, args.engines),
        "checkpoint": lambda: run_checkpoint_scale(settings),
        "metastore": lambda: run_metastore(settings),
        "iceberg": lambda: run_iceberg(settings),
        "profile": lambda: run_profiles(settings),
        "object-store": lambda: run_object_store(settings),
        "wait": lambda: run_wait(settings, args.wait_window, args.wait_runs),
        "poll": lambda: run_poll(settings),
        "factory": lambda: run_factory(settings),
        "overview": lambda: run_overview(settings),
        "ledger-scale": lambda: run_ledger_scale(settings),
        "layout": lambda: run_layout(settings, args.workloads),
    }
    document = report.load(settings.results)
    document["machine"] = describe_machine()
    for suite in args.suites:
        print(f"== {suite}", flush=True)
        started, load_before = datetime.now(UTC), load_average()
        results = runners[suite]()
        ran = {
            "scale": settings.scale,
            "reps": settings.reps,
            "started": started.isoformat(timespec="seconds"),
            "load_before": load_before,
            "load_after": load_average(),
        }
        if suite in ("compaction", "layout"):
            results = _merge_workloads(document["suites"].get(suite), results, ran)
        if suite == "wait":
            results = _merge_runs(document["suites"].get(suite), results, ran)
        document["suites"][suite] = {"settings": ran, "results": results}
        report.save(settings.results, document)
    print(f"results: {settings.results / 'RESULTS.md'}")
    return 0


def _merge_runs(
    previous: dict[str, Any] | None, results: dict[str, Any], ran: dict[str, Any]
) -> dict[str, Any]:
    """The wait suite's configurations just run, each with the settings it ran under, and
    the others as they were (each keeps its own: the code under test changes between)."""
    kept = dict(previous["results"]["runs"]) if previous else {}
    if previous:
        for run in kept.values():
            run.setdefault("settings", previous["settings"])
    kept |= {name: run | {"settings": ran} for name, run in results["runs"].items()}
    return results | {"runs": {name: kept[name] for name in RUNS if name in kept}}


def _merge_workloads(
    previous: dict[str, Any] | None, results: dict[str, Any], ran: dict[str, Any]
) -> dict[str, Any]:
    """The workloads just run, with the settings they ran under, and the others as they were.

    Workloads take minutes to hours each, so one (a new one such as ``a-orc``, or one
    whose engine changed) is rerun alone; each keeps its own scale, repetitions and load
    average, since runs at different times saw different load on this shared machine.
    """
    merged = dict(previous["results"]) if previous else {}
    merged |= {name: result | {"settings": ran} for name, result in results.items()}
    return {name: merged[name] for name in WORKLOADS if name in merged}
