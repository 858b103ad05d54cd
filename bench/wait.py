"""Waiting partitions in a real triggerer (issue 32): what a thousand deferred sensors cost.

A real ``airflow triggerer`` (Airflow's own, SQLite metadata database in a throwaway home)
holds ``SENSORS`` deferred ``PartitionWatermarkSensor`` triggers over ``TABLES`` tables,
each polling every 30 s with the example DAG's stall timeout (2 h). The triggers are
what the sensor's ``defer()`` stores: one task instance each, in state ``deferred``, its
trigger built from the serialized task's arguments (running a thousand tasks only to
defer them would cost this 2-core machine half an hour and measure nothing more).

The tables' logs are synthetic, in Spark's exact format (``fscommit_dev/synthetic_log.py``): one
generated log and checkpoint backs every table (the tables differ in their published
path, so each is a table of its own to the readers), first with ``FULL_ENTRIES`` entries,
then with ``SMALL_ENTRIES``. The waited-for partitions are hours of 2030: pending on both.
Each configuration runs the triggerer for a warm-up and then a measured window: its CPU
(user + system of the triggerer and its trigger runner, as a share of one core) over the
window, above the same triggerer holding no trigger and above it holding as many triggers
that do nothing (the ``floor``: Airflow's own cost of that many deferred tasks), and its
peak RSS over the whole run.
The code before the change runs from ``git archive`` of ``BEFORE`` on ``PYTHONPATH``.

The ``poll`` suite (:func:`run_poll`) times single polls of one waiting partition on the
same logs, in a process of their own (``bench/poll.py``): milliseconds, the memory a poll
adds at its peak, and the filesystem calls it makes; under ``partition-time`` (against
``BEFORE``) and under ``process-time``, which needs the partition's files (against
``BEFORE_ONE_PARTITION``, whose look judged every partition).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from io import BytesIO
from pathlib import Path
from typing import Any

from bench.measure import TreeSampler
from bench.settings import REPO, BenchSettings
from fscommit_dev.airflow_env import AirflowEnv
from fscommit_dev.synthetic_log import SyntheticLog
from fscommit_dev.tables import hourly_table

# The last commit whose sensor read the whole sink log on every poll.
BEFORE = "5df38f0"
# The last commit whose look at one partition under process-time or idle-time judged every
# partition of the table (issue 38).
BEFORE_ONE_PARTITION = "f45676c"
FULL_ENTRIES, FULL_PARTITIONS = 1_000_000, 10_000
SMALL_ENTRIES, SMALL_PARTITIONS = 1_000, 10
SENSORS, TABLES = 1_000, 20
POLL_S = 30
POLLS = 20  # the polls after the first that the poll suite times
RUNS = ("idle", "floor", "after-large", "before-large", "after-small", "before-small")
WINDOW_S = 600
STALL_TIMEOUT = timedelta(hours=2)
DAG_ID = "fscommit_wait_bench"
DAG_FILE = f'''"""{SENSORS} deferrable sensors over {TABLES} tables (bench/wait.py)."""
import json
from datetime import timedelta
from pathlib import Path

import pendulum
from airflow.sdk import DAG

from airflow_provider_fscommit.sensors.watermark import PartitionWatermarkSensor

SHAPE = json.loads(Path(__file__).with_suffix(".json").read_text())

with DAG("{DAG_ID}", schedule=None, start_date=pendulum.datetime(2026, 1, 1, tz="UTC")):
    for task_id, (table, partition) in SHAPE.items():
        PartitionWatermarkSensor(
            task_id=task_id, table=table, partition=partition, deferrable=True,
            poke_interval={POLL_S}, stall_timeout=timedelta(seconds={STALL_TIMEOUT.seconds}),
        )
'''


def run_wait(
    settings: BenchSettings, window_s: int | None = None, runs: Sequence[str] = RUNS
) -> dict[str, Any]:
    """The configurations ``runs`` names (all of :data:`RUNS` by default), once each;
    ``window_s`` overrides the measured window (600 s)."""
    root = settings.directory("wait")
    sensors = settings.scaled(SENSORS, 20)
    tables = min(TABLES, sensors)
    warmup_s = settings.scaled(60, 20)
    window_s = window_s or settings.scaled(WINDOW_S, 60)
    current = root / "current"  # where every table's staging and checkpoint are
    shape = _shape(current, sensors, tables)
    waiting = _home(root / "airflow-waiting", shape)
    idle = _home(root / "airflow-idle", {})
    floor = _home(root / "airflow-floor", shape, floor=True) if "floor" in runs else idle
    before = _code_before(root / "before", BEFORE)
    print(
        f"wait: {sensors} deferred sensors over {tables} tables, polls every {POLL_S} s; "
        f"{warmup_s} s warm-up, {window_s} s measured",
        flush=True,
    )
    measured: dict[str, dict[str, Any]] = {}
    for name, home in (("idle", idle), ("floor", floor)):
        if name in runs:
            measured[name] = _measure(home, None, warmup_s, window_s, name)
    for size, (entries, partitions) in _logs(settings).items():
        codes = [(c, path) for c, path in (("after", None), ("before", before))
                 if f"{c}-{size}" in runs]  # fmt: skip
        if not codes:
            continue
        log = _place(root, current, size, entries, partitions)
        for code, pythonpath in codes:
            name = f"{code}-{size}"
            measured[name] = _measure(waiting, pythonpath, warmup_s, window_s, name)
            measured[name] |= {"entries": log.entries, "partitions": log.partitions}
    return {
        "sensors": sensors,
        "tables": tables,
        "poll_s": POLL_S,
        "warmup_s": warmup_s,
        "window_s": window_s,
        "runs": measured,
    }


def run_poll(settings: BenchSettings) -> dict[str, Any]:
    """What one poll of one waiting partition costs (``bench/poll.py``), in a fresh process
    per trigger, log size and code: its first poll, then ``POLLS`` more."""
    root = settings.directory("wait")
    current = root / "current"
    before = {
        "partition-time": _code_before(root / "before", BEFORE),
        "process-time": _code_before(root / "before-one-partition", BEFORE_ONE_PARTITION),
    }
    runs: dict[str, dict[str, Any]] = {}
    for size, (entries, partitions) in _logs(settings).items():
        log = _place(root, current, size, entries, partitions)
        for trigger, earlier in before.items():
            spec = hourly_table(str(log.staging), str(log.checkpoint)) | {
                "sink.partition-commit.trigger": trigger
            }
            pending = log.partition_path(partitions - 1)  # its hour is not over
            for code, path in (("after", REPO), ("before", earlier)):
                # partition-time keeps the names its earlier results have
                prefix = "" if trigger == "partition-time" else f"{trigger}-"
                name = f"{prefix}{code}-{size}"
                done = subprocess.run(
                    [sys.executable, str(REPO / "bench" / "poll.py"), json.dumps(spec), pending,
                     str(POLLS)],
                    env=os.environ | {"PYTHONPATH": f"{path}:{REPO}"},  # its package first
                    cwd=root,  # not this checkout, which would come first on sys.path
                    capture_output=True,
                    text=True,
                    timeout=1800,
                )  # fmt: skip
                assert done.returncode == 0, done.stderr[-3000:]
                result = json.loads(done.stdout)
                assert result["package"].startswith(str(path)), result["package"]
                runs[name] = {"entries": log.entries, "looks": result["looks"]}
                steady = sorted(look["wall_ms"] for look in result["looks"][1:])
                print(
                    f"  poll {name:<28} first {result['looks'][0]['wall_ms']:8.1f} ms, "
                    f"then median {steady[len(steady) // 2]:8.1f} ms",
                    flush=True,
                )
    return {"polls": POLLS, "runs": runs}


def _logs(settings: BenchSettings) -> dict[str, tuple[int, int]]:
    """Entries and partitions of the large and the small synthetic log."""
    return {
        "large": (settings.scaled(FULL_ENTRIES, 20_000), settings.scaled(FULL_PARTITIONS, 200)),
        "small": (SMALL_ENTRIES, SMALL_PARTITIONS),
    }


def _shape(current: Path, sensors: int, tables: int) -> dict[str, tuple[dict, str]]:
    """Task id → (table options, partition): hours of 2030, pending whatever the log."""
    first = datetime(2030, 1, 1, tzinfo=UTC)
    shape = {}
    for i in range(sensors):
        table = hourly_table(
            str(current / "staging"),
            str(current / "checkpoint"),
            table_path=str(current.parent / "tables" / f"t{i % tables:02d}"),
        )
        hour = first + timedelta(hours=i // tables)
        shape[f"t{i % tables:02d}_p{i // tables:03d}"] = (
            table,
            f"dt={hour:%Y-%m-%d}/hour={hour:%H}",
        )
    return shape


def _home(home: Path, shape: dict[str, tuple[dict, str]], floor: bool = False) -> AirflowEnv:
    """An Airflow home whose run of the bench DAG has a deferred task per sensor of ``shape``
    (with ``floor``, each deferred on a trigger that does nothing instead)."""
    marker = home / "shape.json"
    airflow = AirflowEnv(home, {"AIRFLOW__TRIGGERER__CAPACITY": str(len(shape) + 100)})
    if marker.exists() and json.loads(marker.read_text()) == json.loads(json.dumps(shape)):
        return airflow
    shutil.rmtree(home, ignore_errors=True)
    airflow.setup()
    if shape:
        (airflow.dags_folder / f"{DAG_ID}.json").write_text(json.dumps(shape))
        (airflow.dags_folder / f"{DAG_ID}.py").write_text(DAG_FILE)
        for command in (("dags", "reserialize"),):
            done = airflow.run(*command)
            assert done.returncode == 0, done.stderr[-3000:]
        deferred = subprocess.run(
            [sys.executable, "-m", "bench.wait", "defer", *(["floor"] if floor else [])],
            env=airflow.env() | {"PYTHONPATH": str(REPO)},
            capture_output=True,
            text=True,
            timeout=1800,
        )
        assert deferred.returncode == 0, deferred.stderr[-3000:]
    marker.write_text(json.dumps(shape))
    return airflow


def defer(floor: bool = False) -> None:
    """``python -m bench.wait defer [floor]`` (in the Airflow home's environment): one run
    of the bench DAG, every task deferred on the trigger its sensor's ``defer()`` would
    store; with ``floor`` on Airflow's ``DateTimeTrigger`` a year ahead instead, which sleeps
    an hour at a time: what Airflow itself spends on holding that many triggers."""
    from airflow.models.serialized_dag import SerializedDagModel
    from airflow.models.trigger import Trigger
    from airflow.providers.standard.triggers.temporal import DateTimeTrigger
    from airflow.utils.session import create_session
    from airflow.utils.state import DagRunState, TaskInstanceState
    from airflow.utils.types import DagRunTriggeredByType, DagRunType

    from airflow_provider_fscommit.triggers.watermark import PartitionWatermarkTrigger

    dags = Path(os.environ["AIRFLOW__CORE__DAGS_FOLDER"])
    shape = json.loads((dags / f"{DAG_ID}.json").read_text())
    with create_session() as session:
        dag = SerializedDagModel.get_dag(DAG_ID, session=session)
        assert dag is not None, "the bench DAG was not serialized"
        run = dag.create_dagrun(
            run_id="wait-bench",
            run_after=datetime.now(UTC),
            run_type=DagRunType.MANUAL,
            triggered_by=DagRunTriggeredByType.TEST,
            state=DagRunState.RUNNING,
            session=session,
        )
        for ti in run.get_task_instances(session=session):
            table, partition = shape[ti.task_id]
            trigger = Trigger.from_object(
                DateTimeTrigger(datetime.now(UTC) + timedelta(days=365))  # the home is reused
                if floor
                else PartitionWatermarkTrigger(
                    table=table,
                    partition=partition,
                    poll_interval=POLL_S,
                    stall_timeout=STALL_TIMEOUT.total_seconds(),
                )
            )
            session.add(trigger)
            session.flush()
            ti.state = TaskInstanceState.DEFERRED
            ti.trigger_id = trigger.id
            ti.next_method = "execute_complete"
    print(f"deferred {len(shape)} task instances")


def _code_before(target: Path, revision: str) -> Path:
    """The package as it was at ``revision``, for ``PYTHONPATH``, with a ``sitecustomize``
    that sets the editable install aside (checked)."""
    if not (target / "sitecustomize.py").exists():
        archive = subprocess.run(
            ["git", "-C", str(REPO), "archive", revision, "airflow_provider_fscommit"],
            capture_output=True,
            check=True,
        ).stdout
        target.mkdir(parents=True, exist_ok=True)
        with tarfile.open(fileobj=BytesIO(archive)) as tar:
            tar.extractall(target, filter="data")
    # The editable install's import hook would otherwise find this checkout's package
    # before PYTHONPATH is looked at; sitecustomize runs after it is installed.
    (target / "sitecustomize.py").write_text(
        "import sys\n"
        "sys.meta_path[:] = [f for f in sys.meta_path\n"
        "                    if not getattr(f, '__module__', '').startswith('__editable__')]\n"
    )
    found = subprocess.run(
        [sys.executable, "-c", "import airflow_provider_fscommit as p; print(p.__file__)"],
        env=os.environ | {"PYTHONPATH": str(target)},
        cwd=target,  # not this checkout, which `python -c` would put first on sys.path
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert found.startswith(str(target)), found
    return target


def _place(root: Path, current: Path, size: str, entries: int, partitions: int) -> SyntheticLog:
    """The log of ``size`` generated at ``current`` (its entries name that path), its
    checkpoint files touched: the watermark moved just now, so no trigger calls it stalled."""
    if current.exists():
        shape = json.loads((current / "synthetic.json").read_text())
        current.rename(root / f"parked-{shape['entries']}-{shape['partitions']}")
    parked = root / f"parked-{entries}-{partitions}"
    if parked.exists():
        parked.rename(current)
    log = SyntheticLog(current, entries, partitions)
    log.write()
    now = time.time()
    for batch_file in (current / "checkpoint").rglob("*"):
        os.utime(batch_file, (now, now))
    return log


def _measure(
    airflow: AirflowEnv, pythonpath: Path | None, warmup_s: int, window_s: int, name: str
) -> dict[str, Any]:
    """One triggerer run: CPU share over the window after the warm-up, peak RSS overall."""
    env = airflow.env()
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    log = airflow.home / f"triggerer-{name}.log"
    lines_before = _waiting_lines(airflow.home)
    with log.open("w") as out:
        process = subprocess.Popen(
            [str(airflow.bin / "airflow"), "triggerer", "--skip-serve-logs"],
            env=env,
            cwd=airflow.home,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    sampler = TreeSampler(process.pid, interval_s=1.0)
    sampler.start()
    try:
        time.sleep(warmup_s)
        start_cpu, start = sampler.cpu_s(), time.monotonic()
        time.sleep(window_s)
        cpu_s, elapsed = sampler.cpu_s() - start_cpu, time.monotonic() - start
        alive = process.poll() is None
    finally:
        sampler.done.set()
        os.killpg(process.pid, 15)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, 9)
            process.wait()
    lines = _waiting_lines(airflow.home) - lines_before
    fired = log.read_text(errors="replace").count("TriggerEvent")
    result = {
        "cpu_share": cpu_s / elapsed,
        "peak_rss": sampler.peak_tree,
        "window_s": elapsed,
        "waiting_lines": lines,
        "events": fired,
        "alive": alive,
    }
    print(
        f"  {name:<13} {100 * result['cpu_share']:6.1f} % of a core, "
        f"peak RSS {sampler.peak_tree / 2**20:7.0f} MiB, {lines} waiting lines logged",
        flush=True,
    )
    return result


def _waiting_lines(home: Path) -> int:
    """How many "waiting" lines the triggers have logged (their task logs) until now: one
    per poll before issue #32, one per change of what a trigger sees since."""
    return sum(
        path.read_text(errors="replace").count(": waiting: ")
        for path in (home / "logs").rglob("*.log.trigger.*")
    )


if __name__ == "__main__":
    if sys.argv[1:2] == ["defer"] and sys.argv[2:] in ([], ["floor"]):
        defer(floor=sys.argv[2:] == ["floor"])
    else:
        sys.exit("usage: python -m bench.wait defer [floor]")
