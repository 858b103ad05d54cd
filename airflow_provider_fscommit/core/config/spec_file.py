"""A folder of spec files: each one table's options and the settings of the DAG that commits it.

One decision in one place for the DAG factory (``airflow_provider_fscommit.factory``) and
``fscommit validate``: both read a spec file here, so what the CLI accepts in a user's CI
is what Airflow will load. The table options are read exactly as
:meth:`TableSpec.from_file` reads them; the ``dag`` section beside them holds the DAG's
settings (``DagSettings``). Nothing but the spec files is read: no checkpoint, sink log
or network, since Airflow re-parses the DAG file every 30 seconds.

Problems are collected, not raised: one :class:`SpecProblem` per bad option, each naming
the file and the option, so one broken file never hides the others and a user sees every
problem of a file at once.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

from airflow_provider_fscommit.core.config import option_values
from airflow_provider_fscommit.core.config import options as o
from airflow_provider_fscommit.core.config.prefixed_keys import fold_prefixed_keys
from airflow_provider_fscommit.core.config.quantities import format_duration, parse_duration
from airflow_provider_fscommit.core.config.table_spec import DAG_SECTION, TableSpec
from airflow_provider_fscommit.core.errors import ConfigError
from airflow_provider_fscommit.core.partition.time_partitions import (
    IntervalError,
    TimePartitioning,
    time_partitioning,
)

#: The files of a folder that are spec files.
SPEC_SUFFIXES = (".yaml", ".yml", ".json")
_DAG_ID = re.compile(r"[A-Za-z0-9_.-]{1,250}")
#: How often a table's sweep publishes late data and finishes unfinished policies: the
#: span of an hourly table's partitions, so late rows are published within the hour.
DEFAULT_SWEEP = timedelta(hours=1)
#: How often the maintenance DAG runs when it only expires or cleans (no sweep).
MAINTENANCE_WITHOUT_SWEEP = timedelta(days=1)
#: The suffix of a table's maintenance DAG id (``<dag_id>_maintenance``).
MAINTENANCE_SUFFIX = "_maintenance"


@dataclass(frozen=True)
class SpecProblem:
    """One thing wrong in one spec file: ``FILE: option: message``."""

    file: str
    option: str
    message: str

    def __str__(self) -> str:
        """One line, whatever the message holds (a YAML error names its line on the next)."""
        return f"{self.file}: {self.option}: {' '.join(self.message.split())}"


def _text(value: Any, name: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"expected a non-empty string, got {value!r}")
    return value.strip()


def _optional_text(value: Any, name: str) -> str | None:
    return None if value is None or value == "" else _text(value, name)


def _dag_id(value: Any, name: str) -> str:
    text = _text(value, name)
    if not _DAG_ID.fullmatch(text):
        raise ConfigError(
            f"{text!r} is not a DAG id: use letters, digits, '_', '.' and '-' (at most 250)"
        )
    return text


def _count(minimum: int) -> Callable[[Any, str], int]:
    def parse(value: Any, name: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise ConfigError(f"expected a whole number of at least {minimum}, got {value!r}")
        return value

    return parse


def _duration(value: Any, name: str) -> timedelta:
    return parse_duration(value, f"{DAG_SECTION}.{name}")


def _optional_duration(value: Any, name: str) -> timedelta | None:
    return None if value is None or value == "" else _duration(value, name)


def _start_date(value: Any, name: str) -> datetime:
    """A date or a date-time, on the partitions' wall clock unless it names its offset."""
    if isinstance(value, datetime):
        return value
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day)
    try:
        return datetime.fromisoformat(_text(value, name))
    except ValueError:
        raise ConfigError(f"expected a date such as 2026-11-20, got {value!r}") from None


def _tags(value: Any, name: str) -> tuple[str, ...]:
    return option_values.names(value, f"{DAG_SECTION}.{name}")  # the table options' list form


def _boolean(value: Any, name: str) -> bool:
    return option_values.boolean(value, f"{DAG_SECTION}.{name}")


def _sweep(value: Any, name: str) -> timedelta | None:
    """``true`` (the default interval), ``false`` (no sweep) or the interval, e.g. ``30 min``."""
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        value = value.strip().lower() == "true"
    if isinstance(value, bool):
        return DEFAULT_SWEEP if value else None
    interval = _duration(value, name)
    if interval < timedelta(minutes=1):
        raise ConfigError(f"a sweep at most once a minute, got {value!r}; or false for none")
    return interval


def _spark_conf(value: Any, name: str) -> dict[str, str]:
    if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
        raise ConfigError("expected a mapping of Spark settings, e.g. {spark.executor.memory: 4g}")
    bad = [k for k, v in value.items() if isinstance(v, (Mapping, list)) or v is None]
    if bad:
        raise ConfigError(f"{bad[0]}: a Spark setting is one value, got {value[bad[0]]!r}")
    return {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in value.items()}


@dataclass(frozen=True)
class DagSettings:
    """The ``dag`` section of a spec file: how Airflow runs the table's DAGs.

    One field per :data:`DAG_SETTINGS` entry, which holds its default, how it is read and
    what it does (the docs' reference of ``dag:`` keys is generated from there). Every
    setting has the default of ``dags/fscommit_hourly.py`` except ``start_date``, which a
    table must give: with catch-up on, it is where its commits begin. ``sweep`` (on,
    hourly, by default) and ``clean_staging`` (off unless given: the age of the published
    staged files to delete) are the maintenance DAG's; a setting may be written with
    ``-`` or ``_`` (``clean-staging``).
    """

    start_date: datetime
    dag_id: str
    interval: timedelta | None  # the partition span when the keys name minutes
    catchup: bool
    max_active_runs: int
    retries: int
    retry_delay: timedelta
    owner: str | None
    pool: str | None
    tags: tuple[str, ...]
    spark_conn_id: str
    metastore_conn_id: str
    aws_conn_id: str | None
    http_conn_id: str | None
    iceberg_conn_id: str | None
    spark_conf: Mapping[str, str]
    stall_timeout: timedelta
    wait_timeout: timedelta
    poke_interval: timedelta
    deferrable: bool
    commit_empty_partitions: bool
    sweep: timedelta | None
    clean_staging: timedelta | None


@dataclass(frozen=True)
class DagSetting:
    """One key of a spec file's ``dag`` section: its name (``_`` or ``-`` in the file),
    how its value is read (``parse``, and ``reads`` in words), its default and what it
    does."""

    name: str
    parse: Callable[[Any, str], Any]
    reads: str
    default: Any
    description: str
    #: The default in words when the value alone does not say it (None: the value's).
    default_text: str | None = None


_DURATION = "a duration such as `30 min` (a bare number: milliseconds, as Flink reads it)"
_OPTIONAL_DURATION = _DURATION + ", or empty for none"
_CONN_ID = "an Airflow connection id"
_OPTIONAL_CONN_ID = "an Airflow connection id, or empty for none"

#: Every key of the ``dag`` section, in the order the reference lists them.
DAG_SETTINGS: tuple[DagSetting, ...] = (
    DagSetting(
        "dag_id",
        _dag_id,
        "letters, digits, `_`, `.` and `-` (at most 250)",
        None,
        "The commit DAG's id; the maintenance DAG is `<dag_id>_maintenance`, and no two spec "
        "files may claim one id.",
        default_text="`fscommit_<file name>`",
    ),
    DagSetting(
        "start_date",
        _start_date,
        "a date (`2026-11-20`) or an ISO date-time, on the partitions' wall clock unless "
        "it names its offset",
        None,
        "The first partition the commit DAG commits: with catch-up on, its runs begin there.",
        default_text="required",
    ),
    DagSetting(
        "interval",
        _optional_duration,
        _OPTIONAL_DURATION,
        None,
        "The span of one partition, and so of one commit run, when the partition keys name "
        "minutes (e.g. `15 min`); for days and hours the keys give it, and this must agree.",
        default_text="from the keys, or `partition.time-interval`",
    ),
    DagSetting(
        "catchup",
        _boolean,
        "`true` or `false`",
        True,
        "Run the commit DAG for every partition since `start_date` that has no run yet.",
    ),
    DagSetting(
        "max_active_runs",
        _count(1),
        "a whole number, 1 or more",
        3,
        "How many partitions' commit runs may run at once.",
    ),
    DagSetting(
        "retries",
        _count(0),
        "a whole number, 0 or more",
        2,
        "How many times Airflow retries a failed task of the table's DAGs.",
    ),
    DagSetting(
        "retry_delay",
        _duration,
        _DURATION,
        timedelta(minutes=1),
        "How long Airflow waits before retrying a failed task.",
    ),
    DagSetting(
        "owner",
        _optional_text,
        "text, or empty for none",
        None,
        "The tasks' owner shown in the Airflow UI.",
        default_text="none: Airflow's default owner",
    ),
    DagSetting(
        "pool",
        _optional_text,
        "an Airflow pool's name, or empty for none",
        None,
        "The Airflow pool the tasks run in, e.g. a pool of one slot for a table that must "
        "have one writer at a time (`single_writer`).",
        default_text="none: Airflow's default pool",
    ),
    DagSetting(
        "tags",
        _tags,
        "a list of names, or one comma-separated string",
        (),
        "Tags of both DAGs in the Airflow UI, beside `fscommit`.",
    ),
    DagSetting(
        "spark_conn_id",
        _text,
        _CONN_ID,
        "spark_default",
        "The compaction's Spark connection: a `spark` one submits an application, a "
        "`spark_connect` one runs the compaction on that Spark Connect server.",
    ),
    DagSetting(
        "metastore_conn_id",
        _text,
        _CONN_ID,
        "metastore_default",
        "The Hive metastore connection of the metastore and mark-event policies (and of a "
        "Hive Iceberg catalog).",
    ),
    DagSetting(
        "aws_conn_id",
        _optional_text,
        _OPTIONAL_CONN_ID,
        None,
        "The AWS connection of a table on S3 and of the glue policy.",
        default_text="none: boto3's own credentials",
    ),
    DagSetting(
        "http_conn_id",
        _optional_text,
        _OPTIONAL_CONN_ID,
        None,
        "An HTTP connection giving the http-report policy its endpoint (instead of "
        "`partition.mark-done-action.http.url`).",
    ),
    DagSetting(
        "iceberg_conn_id",
        _optional_text,
        _OPTIONAL_CONN_ID,
        None,
        "An Iceberg connection (the Iceberg provider's) giving the iceberg policy its catalog.",
    ),
    DagSetting(
        "spark_conf",
        _spark_conf,
        "a mapping of Spark settings, e.g. `{spark.executor.memory: 4g}`",
        {},
        "Spark settings of the compaction application.",
    ),
    DagSetting(
        "stall_timeout",
        _duration,
        _DURATION,
        timedelta(hours=2),
        "The wait fails when the stream's watermark has not moved for this long (a stalled "
        "stream).",
    ),
    DagSetting(
        "wait_timeout",
        _duration,
        _DURATION,
        timedelta(hours=6),
        "The wait for a partition to be committable fails after this long.",
    ),
    DagSetting(
        "poke_interval",
        _duration,
        _DURATION,
        timedelta(minutes=1),
        "How often the wait checks whether its partition is committable.",
    ),
    DagSetting(
        "deferrable",
        _boolean,
        "`true` or `false`",
        True,
        "The wait defers to Airflow's triggerer instead of holding a worker slot.",
    ),
    DagSetting(
        "commit_empty_partitions",
        _boolean,
        "`true` or `false`",
        True,
        "A partition the stream wrote nothing to is committed as empty (directory, catalog "
        "partition, success file), so downstream waits on every hour end.",
    ),
    DagSetting(
        "sweep",
        _sweep,
        "`true` (every hour), `false` (no sweep) or a duration of 1 min or more",
        DEFAULT_SWEEP,
        "How often the maintenance DAG's `sweep` publishes late data and finishes "
        "unfinished commits of every committable partition.",
        default_text="`1 h`",
    ),
    DagSetting(
        "clean_staging",
        _optional_duration,
        _OPTIONAL_DURATION,
        None,
        "The maintenance DAG's `clean` task deletes published staged files older than this.",
        default_text="none: staging is never cleaned",
    ),
)

_SETTINGS: dict[str, DagSetting] = {setting.name: setting for setting in DAG_SETTINGS}


@dataclass(frozen=True)
class SpecFile:
    """A spec file read without a problem: its table, its DAG and the DAG's schedule."""

    path: str
    table: TableSpec
    dag: DagSettings
    partitioning: TimePartitioning

    @property
    def expires(self) -> bool:
        """Expiry runs when, and only when, the spec sets ``partition.expiration-time``."""
        return self.table.expiration_time is not None

    @property
    def maintenance_interval(self) -> timedelta | None:
        """How often the maintenance DAG runs: the sweep's interval, else daily when it
        only expires or cleans; None when it has nothing to do (no such DAG)."""
        if self.dag.sweep is not None:
            return self.dag.sweep
        if self.expires or self.dag.clean_staging is not None:
            return MAINTENANCE_WITHOUT_SWEEP
        return None

    @property
    def maintenance_dag_id(self) -> str | None:
        """``<dag_id>_maintenance``: the DAG that sweeps, expires and cleans the table."""
        if self.maintenance_interval is None:
            return None
        return self.dag.dag_id + MAINTENANCE_SUFFIX

    @property
    def dag_ids(self) -> tuple[str, ...]:
        """Every DAG id the table's DAGs take."""
        return (self.dag.dag_id,) + ((self.maintenance_dag_id,) if self.maintenance_dag_id else ())

    def warnings(self) -> list[str]:
        """What the spec will do that a user may not mean (``fscommit validate`` says it,
        nothing refuses it): a chain that publishes to no catalog, whose readers find a
        committed partition only by its success file."""
        if set(self.table.policy_kind) != {o.PolicyKind.SUCCESS_FILE}:
            return []
        return [
            "sink.partition-commit.policy.kind is success-file alone: a committed partition "
            "is in no catalog, and only readers that wait for its _SUCCESS file see it; name "
            "a catalog policy (metastore, glue or iceberg) before success-file if the table "
            "is queried through one"
        ]

    def plan(self) -> dict[str, Any]:
        """What the table's DAGs run: each DAG's tasks and schedule, and the maintenance
        switches (``fscommit validate`` prints it; the factory builds exactly this)."""
        keys = self.partitioning.other_keys
        commit_tasks = (
            ["wait", "discover", "compact", "commit"] if keys else ["wait", "compact", "commit"]
        )
        dags: dict[str, Any] = {
            self.dag.dag_id: {
                "schedule": f"{self.partitioning.cron} ({self.table.watermark_time_zone})",
                "tasks": [f"partition_commit.{task}" for task in commit_tasks],
                "catchup": self.dag.catchup,
            }
        }
        interval = self.maintenance_interval
        if interval is not None:
            tasks = ["sweep.discover", "sweep.compact", "sweep.commit"] if self.dag.sweep else []
            tasks += ["expire"] if self.expires else []
            tasks += ["clean"] if self.dag.clean_staging is not None else []
            dags[self.dag.dag_id + MAINTENANCE_SUFFIX] = {
                "schedule": f"every {format_duration(interval)}",
                "tasks": tasks,
                "catchup": False,
            }
        expiration = self.table.expiration_time
        return {
            "file": self.path,
            "table_path": self.table.table_path,
            "policies": [str(kind) for kind in self.table.policy_kind],
            "warnings": self.warnings(),
            "dags": dags,
            "sweep": format_duration(self.dag.sweep) if self.dag.sweep else None,
            "expire": (
                f"after {format_duration(expiration)} ({self.table.expiration_strategy})"
                if expiration is not None
                else None
            ),
            "clean_staging": (
                f"published staged files older than {format_duration(self.dag.clean_staging)}"
                if self.dag.clean_staging is not None
                else None
            ),
        }


@dataclass
class SpecFolder:
    """What a folder (or a list of files) holds: the good specs and every problem."""

    specs: list[SpecFile] = field(default_factory=list)
    problems: list[SpecProblem] = field(default_factory=list)

    def problem_files(self) -> dict[str, list[SpecProblem]]:
        """The problems by file, in the order the files were read."""
        by_file: dict[str, list[SpecProblem]] = {}
        for problem in self.problems:
            by_file.setdefault(problem.file, []).append(problem)
        return by_file


def spec_paths(sources: Iterable[str | Path]) -> list[Path]:
    """The spec files of folders (their ``*.yaml``, ``*.yml``, ``*.json``, sorted) and files.

    :raises ConfigError: when a source does not exist.
    """
    paths: list[Path] = []
    for source in map(Path, sources):
        if source.is_dir():
            paths += sorted(p for p in source.iterdir() if p.suffix in SPEC_SUFFIXES)
        elif source.is_file():
            paths.append(source)
        else:
            raise ConfigError(f"{source} is neither a spec file nor a folder of them")
    return paths


def read_spec_folder(sources: Iterable[str | Path]) -> SpecFolder:
    """Read every spec file of ``sources``; a DAG id two files claim is a problem of the
    later file (the earlier keeps its DAG), and so is a published table two files share."""
    folder = SpecFolder()
    dag_ids: dict[str, str] = {}
    tables: dict[str, str] = {}
    for path in spec_paths(sources):
        try:
            spec, problems = read_spec_file(path)
        except Exception as exc:  # one file's failure must not hide the others
            spec, problems = None, [_unexpected(path, exc)]
        if spec is not None:
            # The first of its DAG ids another file took (its maintenance DAG's included).
            taken = next((dag_id for dag_id in spec.dag_ids if dag_id in dag_ids), None)
            for option, value, seen in (
                (f"{DAG_SECTION}.dag_id", taken, dag_ids),
                ("table_path", spec.table.table_path, tables),
            ):
                if value is not None and value in seen:
                    problems.append(
                        SpecProblem(str(path), option, f"{value!r} is taken by {seen[value]}")
                    )
            if not problems:
                dag_ids.update(dict.fromkeys(spec.dag_ids, str(path)))
                if spec.table.table_path is not None:
                    tables[spec.table.table_path] = str(path)
        if problems:
            folder.problems += problems
        elif spec is not None:
            folder.specs.append(spec)
    return folder


def read_spec_file(path: str | Path) -> tuple[SpecFile | None, list[SpecProblem]]:
    """One spec file, or every problem found in it (each naming its option)."""
    name = str(path)

    def problem(option: str, exc: ConfigError) -> SpecProblem:
        message = str(exc)
        return SpecProblem(name, option, message.removeprefix(f"{option}: "))

    try:
        mapping = TableSpec.mapping_from_file(name)
    except ConfigError as exc:
        return None, [problem("file", exc)]
    section = mapping.pop(DAG_SECTION, None)
    table, problems = _read_table(mapping, problem)
    settings = _read_dag(Path(name), section, problems, problem)
    if table is None or settings is None:
        return None, problems
    try:
        partitioning = time_partitioning(
            table.partition_keys, table.time_extractor, settings.interval or table.time_interval
        )
    except IntervalError as exc:
        given = f"{DAG_SECTION}.interval" if settings.interval else "partition.time-interval"
        return None, [problem(given, exc)]
    except ConfigError as exc:
        return None, [problem(_option_named_in(str(exc), "partition_keys"), exc)]
    return SpecFile(name, table, settings, partitioning), []


def _read_table(
    options: dict[str, Any], problem: Callable[[str, ConfigError], SpecProblem]
) -> tuple[TableSpec | None, list[SpecProblem]]:
    """The table as :meth:`TableSpec.from_options` reads it, each bad option its problem."""
    problems = []
    try:
        options = fold_prefixed_keys(options)
    except ConfigError as exc:
        return None, [problem(_option_named_in(str(exc), "table"), exc)]
    ignored = o.flink_only(options)
    for key, raw in options.items():
        if key in ignored:
            continue
        try:
            option = o.lookup(key)
        except ConfigError as exc:
            problems.append(problem(key, exc))
            continue
        try:
            option.convert(raw)
        except ConfigError as exc:
            # The message starts with the option's Flink key, the file may use its name.
            message = str(exc).removeprefix(f"{option.key or option.name}: ")
            problems.append(problem(key, ConfigError(message)))
    if problems:
        return None, problems
    try:
        table = TableSpec.from_options(options)
        table.require_table_path()  # the DAG compacts and publishes into it
    except ConfigError as exc:
        return None, [problem(_option_named_in(str(exc), "table"), exc)]
    return table, []


def _read_dag(
    path: Path,
    section: Any,
    problems: list[SpecProblem],
    problem: Callable[[str, ConfigError], SpecProblem],
) -> DagSettings | None:
    """The ``dag`` section's settings; its problems are appended to ``problems``."""
    if section is None:
        section = {}
    if not isinstance(section, Mapping):
        problems.append(problem(DAG_SECTION, ConfigError("expected a mapping of DAG settings")))
        return None
    values: dict[str, Any] = {"dag_id": default_dag_id(path)}
    found = len(problems)
    for given, raw in section.items():
        option = f"{DAG_SECTION}.{given}"
        key = given.replace("-", "_") if isinstance(given, str) else given
        setting = _SETTINGS.get(key)
        if setting is None:
            known = ", ".join(_SETTINGS)
            problems.append(problem(option, ConfigError(f"unknown DAG setting; known: {known}")))
            continue
        try:
            values[key] = setting.parse(raw, key)
        except ConfigError as exc:
            problems.append(problem(option, exc))
    if "start_date" not in values and "start_date" not in section:
        problems.append(
            problem(
                f"{DAG_SECTION}.start_date",
                ConfigError("is required: the first partition to commit, e.g. 2026-11-20"),
            )
        )
    if len(problems) > found:
        return None
    # A copy of each default: a mapping's is the registry's own.
    defaults = {setting.name: copy.copy(setting.default) for setting in DAG_SETTINGS}
    return DagSettings(**(defaults | values))


def _unexpected(path: Path, exc: Exception) -> SpecProblem:
    """A failure no check foresaw (a bug, or a user's class that raises while loaded): a
    problem of its file like any other, so the other files still make their DAGs."""
    return SpecProblem(str(path), "file", f"reading it failed: {type(exc).__name__}: {exc}")


def default_dag_id(path: str | Path) -> str:
    """``fscommit_<file name>``: the DAG id of a spec file whose ``dag`` section has none."""
    return "fscommit_" + re.sub(r"[^A-Za-z0-9_.-]", "_", Path(path).stem)


def claimed_dag_id(path: str | Path) -> str:
    """The DAG id a spec file asks for, read as far as the file can be read.

    For a broken file: its table keeps its DAG id, so what stands in for its DAG shows up
    where the table's DAG was.
    """
    try:
        section = TableSpec.mapping_from_file(str(path)).get(DAG_SECTION)
        return _dag_id(section["dag_id"], "dag_id")
    except (ConfigError, TypeError, KeyError, AttributeError):
        return default_dag_id(path)


def _option_named_in(message: str, fallback: str) -> str:
    """The option a cross-option message names first: a Flink key, else a Python name."""
    for names in ({opt.key for opt in o.OPTIONS if opt.key}, {opt.name for opt in o.OPTIONS}):
        at = {
            name: found.start()
            for name in names
            if (found := re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w-])", message))
        }
        if at:
            return min(at, key=lambda name: at[name])
    return fallback
