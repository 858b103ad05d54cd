"""Every table at a glance: ``fscommit status --specs`` over 1 and 20 tables (issue 40).

What a monitoring script or an operator pays to see forty streams in one line each. Each
table is a synthetic stream of Spark's exact sink-log and checkpoint format
(:mod:`fscommit_dev.synthetic_log`: 10,000 files over 240 hourly partitions, ten days of
an hourly stream), read from the local disk, with an empty published table; the command
runs as a user runs it, a fresh process per repetition, the counts interleaved. Reported:
the process's wall time (interpreter and imports included, paid once per command), and
per table the difference between the two rows over the 19 tables added.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from airflow_provider_fscommit.cli.exit_codes import ExitCode
from bench.measure import run_measured, summarize
from bench.settings import REPO, BenchSettings, python
from fscommit_dev.synthetic_log import SyntheticLog

TABLE_COUNTS = (1, 20)
ENTRIES, PARTITIONS = 10_000, 240
#: ``status --specs`` reads every table: 0, or 4 when one needs attention (the synthetic
#: streams stopped when they were written, so they may read as stalled); 1 is an error.
READ = (ExitCode.OK, ExitCode.ATTENTION)


def run_overview(settings: BenchSettings) -> dict[str, Any]:
    """Each count ``reps`` times (at least 5: a run is seconds), repetition r rotating the
    order by r, so load on the shared machine falls on both rows alike."""
    entries, partitions = settings.scaled(ENTRIES, 100), settings.scaled(PARTITIONS, 10)
    tables = [_table(settings, i, entries, partitions) for i in range(max(TABLE_COUNTS))]
    runs: dict[int, list[float]] = {count: [] for count in TABLE_COUNTS}
    env = os.environ | {"PYTHONPATH": str(REPO)}
    for rep in range(max(5, settings.reps)):
        for count in TABLE_COUNTS[rep % 2 :] + TABLE_COUNTS[: rep % 2]:
            log = settings.directory("logs") / f"overview-{count}-{rep}.log"
            command = [str(Path(python()).parent / "fscommit"), "status", "--specs"]
            measurement = run_measured(
                [*command, *tables[:count], "--json"],
                log,
                env=env,
            )
            lines = json.loads(measurement.stdout or "{}").get("tables", [])
            if measurement.returncode not in READ or len(lines) != count:
                raise RuntimeError(f"status --specs of {count} gave {measurement}; see {log}")
            if any(line["error"] for line in lines):
                raise RuntimeError(f"an unreadable table in {lines}; see {log}")
            runs[count].append(measurement.wall_s)
    one, many = (min(runs[c]) for c in TABLE_COUNTS)
    results = {
        "entries": entries,
        "partitions": partitions,
        "tables": {str(count): {"wall_s": summarize(made)} for count, made in runs.items()},
        "per_table_s": round((many - one) / (TABLE_COUNTS[1] - TABLE_COUNTS[0]), 4),
    }
    for count in TABLE_COUNTS:
        print(f"  {count} tables: {min(runs[count]):.2f} s", flush=True)
    return results


def _table(settings: BenchSettings, index: int, entries: int, partitions: int) -> str:
    """One table: its synthetic stream (kept between runs) and its spec file."""
    root = settings.directory("overview", f"table-{index:02d}")
    log = SyntheticLog(root / "stream", entries, partitions)
    log.write()
    (root / "table").mkdir(exist_ok=True)
    spec = {
        "staging_path": str(log.staging),
        "checkpoint_path": str(log.checkpoint),
        "table_path": str(root / "table"),
        "partition_keys": "dt,hour",
        "partition.time-extractor.timestamp-pattern": "$dt $hour:00:00",
        "sink.partition-commit.delay": "1 h",
        "sink.partition-commit.policy.kind": "success-file",
    }
    path = root / f"events_{index:02d}.yaml"
    path.write_text(json.dumps(spec))  # JSON is YAML
    return str(path)
