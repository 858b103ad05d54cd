"""Every table option in one place: its Flink key, Python name, default and meaning.

Mirrors Flink's ``FileSystemConnectorOptions``. A user coming from Flink can paste the
table options verbatim (``sink.partition-commit.delay = '1 h'``); Python code, the CLI and
DAG Params use the Python names. The CLI help, the DAG Params and the docs read the
descriptions from here, so they never disagree. How each value is read is
:mod:`.option_values`; Spark's per-column and pyiceberg's per-property keys are folded into
their options by :mod:`.prefixed_keys`.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from airflow_provider_fscommit.core.compat import StrEnum
from airflow_provider_fscommit.core.config import option_values as v
from airflow_provider_fscommit.core.config.quantities import parse_duration, parse_memory_size
from airflow_provider_fscommit.core.errors import ConfigError
from airflow_provider_fscommit.core.formats.file_format import parse_format
from airflow_provider_fscommit.core.partition.partition_spec import DEFAULT_PARTITION_NAME


class TriggerKind(StrEnum):
    """When a partition is complete (``sink.partition-commit.trigger``)."""

    PARTITION_TIME = "partition-time"
    PROCESS_TIME = "process-time"
    IDLE_TIME = "idle-time"


class ExpirationStrategy(StrEnum):
    """What a partition's age counts from (``partition.expiration-strategy``)."""

    VALUES_TIME = "values-time"
    UPDATE_TIME = "update-time"


class PolicyKind(StrEnum):
    """The commit policies a chain may name (``sink.partition-commit.policy.kind``)."""

    METASTORE = "metastore"
    GLUE = "glue"
    MARK_EVENT = "mark-event"
    DONE_PARTITION = "done-partition"
    SUCCESS_FILE = "success-file"
    HTTP_REPORT = "http-report"
    ICEBERG = "iceberg"
    CUSTOM = "custom"

    @property
    def catalog(self) -> bool:
        """Whether it adds partitions to a table catalog (a Hive metastore, AWS Glue, an
        Iceberg table)."""
        return self in (PolicyKind.METASTORE, PolicyKind.GLUE, PolicyKind.ICEBERG)

    @property
    def announces(self) -> bool:
        """Whether it announces a partition, so it must follow the catalog policies."""
        return self in (
            PolicyKind.MARK_EVENT,
            PolicyKind.DONE_PARTITION,
            PolicyKind.SUCCESS_FILE,
            PolicyKind.HTTP_REPORT,
        )

    @property
    def needs_catalog_table(self) -> bool:
        """Whether it commits to the table named by ``metastore_database.metastore_table``."""
        return self.catalog or self in (PolicyKind.MARK_EVENT, PolicyKind.DONE_PARTITION)


def policy_kinds(
    value: Any, option: str = "sink.partition-commit.policy.kind"
) -> tuple[PolicyKind, ...]:
    """Policy kinds in any case, as Flink's ``PartitionCommitPolicyFactory`` reads them."""
    names = v.names(tuple(name.lower() for name in v.names(value, option)), option)
    known = [kind.value for kind in PolicyKind]
    unknown = sorted(set(names) - set(known))
    if unknown:
        raise ConfigError(f"{option} names unknown policies {unknown}; use {', '.join(known)}")
    return tuple(PolicyKind(name) for name in names)


@dataclass(frozen=True)
class ConfigOption:
    """One table option. ``key`` is its key in a spec file: Flink's name, or the system's
    named by ``origin`` (None when only the Python name is read)."""

    name: str
    key: str | None
    default: Any
    parse: Callable[[Any, str], Any]
    description: str
    required: bool = False
    aliases: tuple[str, ...] = ()  # other systems' keys meaning the same (Paimon's)
    #: Whose key ``key`` is: Flink's filesystem connector's, or else Paimon's, Spark's,
    #: ORC's, or fscommit's own (no other system has the option).
    origin: str = "Flink"
    #: The keys of a per-property or per-column option, as a spec file writes them.
    key_forms: tuple[str, ...] = ()

    def convert(self, value: Any) -> Any:
        return self.parse(value, self.key or self.name)


STAGING_PATH = ConfigOption(
    "staging_path",
    None,
    None,
    v.text,
    required=True,
    description="The streaming query's file sink directory (holds _spark_metadata). "
    "Read-only for fscommit.",
)
CHECKPOINT_PATH = ConfigOption(
    "checkpoint_path",
    None,
    None,
    v.text,
    required=True,
    description="The streaming query's checkpointLocation (holds offsets/ and commits/).",
)
TABLE_PATH = ConfigOption(
    "table_path",
    None,
    None,
    v.optional_text,
    description="The published table directory that compaction and commit write into.",
)
PARTITION_KEYS = ConfigOption(
    "partition_keys",
    None,
    (),
    v.names,
    required=True,
    description="The partition columns in path order, e.g. dt,hour (Spark's partitionBy).",
)
SINK_PARTITION_COMMIT_TRIGGER = ConfigOption(
    "trigger",
    "sink.partition-commit.trigger",
    TriggerKind.PARTITION_TIME,
    v.member(TriggerKind),
    description="partition-time: commit when the watermark passes the partition time plus "
    "the delay; process-time: when the wall clock passes the partition's creation plus the "
    "delay; idle-time: when no file has been committed to it for "
    "partition.idle-time-to-done and its partition.time-interval has ended (the default "
    "when those are set). Flink's default is process-time; a Spark stream's partition time "
    "is what readers wait for, so fscommit's is partition-time.",
)
SINK_PARTITION_COMMIT_DELAY = ConfigOption(
    "delay",
    "sink.partition-commit.delay",
    timedelta(0),
    parse_duration,
    description="How long after its time a partition is complete, e.g. '1 h' for hourly "
    "partitions.",
)
SINK_PARTITION_COMMIT_WATERMARK_TIME_ZONE = ConfigOption(
    "watermark_time_zone",
    "sink.partition-commit.watermark-time-zone",
    "UTC",
    v.text,
    description="The time zone of the partition values' wall clock, as Flink accepts it: a "
    "TZDB id such as 'Asia/Shanghai' (with its daylight saving time), a fixed offset such "
    "as 'GMT+08:00', or 'UTC'; not '+08:00', 'UTC+8', 'Z' or 'EST'.",
)
SINK_PARTITION_COMMIT_END_INPUT = ConfigOption(
    "end_of_input",
    "sink.partition-commit.end-input",
    False,
    v.boolean,
    description="The query has stopped for good (trigger availableNow or once, or stopped): "
    "every partition in its sink log is complete, whatever the watermark (Paimon's "
    "partition.end-input-to-done). Refused while the query is still writing a batch.",
    aliases=("partition.end-input-to-done",),
)
PARTITION_IDLE_TIME_TO_DONE = ConfigOption(
    "idle_time_to_done",
    "partition.idle-time-to-done",
    None,
    v.optional_positive_duration,
    description="The idle-time trigger's wait: a partition is done when no new file has "
    "been committed to it for this long, e.g. '30 min'. Setting it makes idle-time the "
    "default trigger.",
    origin="Paimon",
)
PARTITION_TIME_INTERVAL = ConfigOption(
    "time_interval",
    "partition.time-interval",
    None,
    v.optional_positive_duration,
    description="The idle-time trigger's span of one partition, e.g. '1 h' for hourly "
    "partitions: as in Paimon, a partition is done only once the idle time has passed "
    "after both its newest file and its partition time plus this interval. Required by "
    "idle-time, refused with another trigger.",
    origin="Paimon",
)
SINK_PARTITION_COMMIT_POLICY_KIND = ConfigOption(
    "policy_kind",
    "sink.partition-commit.policy.kind",
    (),
    policy_kinds,
    description="Commit policies applied in order: metastore, glue, iceberg, mark-event, "
    "done-partition, success-file, http-report, custom; the announcing ones (mark-event, "
    "done-partition, success-file, http-report) follow the catalog ones. Paimon's "
    "partition.mark-done-action is read as this key, and its success-file, mark-event, "
    "done-partition, http-report and custom are these policies: done-partition adds, to "
    "every catalog the chain commits to (metastore, glue), the partition with its last "
    "value suffixed .done (dt=2026-11-20/hour=03.done), as Paimon's "
    "AddDonePartitionAction does. Unset: no policy is applied.",
    aliases=("partition.mark-done-action",),
)
SINK_PARTITION_COMMIT_POLICY_CLASS = ConfigOption(
    "policy_class",
    "sink.partition-commit.policy.class",
    None,
    v.optional_text,
    description="Dotted Python path of the custom commit policy class.",
    aliases=("partition.mark-done-action.custom.class",),
)
SINK_PARTITION_COMMIT_POLICY_CLASS_PARAMETERS = ConfigOption(
    "policy_class_parameters",
    "sink.partition-commit.policy.class.parameters",
    (),
    v.parameters,
    description="';'-separated string parameters passed to the custom policy's constructor.",
)
METASTORE_DATABASE = ConfigOption(
    "metastore_database",
    None,
    "default",
    v.text,
    description="Database of the table the metastore and glue policies commit to (the "
    "iceberg policy: its namespace).",
)
METASTORE_TABLE = ConfigOption(
    "metastore_table",
    None,
    None,
    v.optional_text,
    description="Table the metastore, glue and iceberg policies add partitions to (it must "
    "exist, unless iceberg.create-table).",
)
GLUE_CATALOG_ID = ConfigOption(
    "glue_catalog_id",
    "glue.catalog-id",
    None,
    v.optional_text,
    description="AWS account id of the Glue Data Catalog the glue policy commits to, for a "
    "catalog shared from another account; default: the caller's own catalog.",
    origin="fscommit",
)
ICEBERG_CATALOG = ConfigOption(
    "iceberg_catalog",
    None,
    {},
    v.iceberg_catalog_properties,
    description="The iceberg policy's catalog, as pyiceberg's load_catalog takes it: one key "
    "'iceberg.catalog.<property>' per property (type, uri, warehouse, ...); credentials come "
    "from Airflow connections and are refused here; 'name' picks an entry of "
    ".pyiceberg.yaml. Unset: pyiceberg's own configuration of its catalog 'default'. The "
    "namespace and table are metastore_database and metastore_table.",
    origin="fscommit",
    key_forms=(f"{v.ICEBERG_CATALOG_PREFIX}<property>",),
)
ICEBERG_CREATE_TABLE = ConfigOption(
    "iceberg_create_table",
    "iceberg.create-table",
    False,
    v.boolean,
    description="Create the Iceberg table on the first commit: the files' Spark schema in "
    "Iceberg types, the partition keys as string columns with identity partitioning; a "
    "column the stream adds later is added to the table (optional).",
    origin="fscommit",
)
SINK_PARTITION_COMMIT_SUCCESS_FILE_NAME = ConfigOption(
    "success_file_name",
    "sink.partition-commit.success-file.name",
    "_SUCCESS",
    v.text,
    description="Name of the success-file policy's marker file.",
)
HTTP_REPORT_URL = ConfigOption(
    "http_report_url",
    "partition.mark-done-action.http.url",
    None,
    v.optional_text,
    description="The http-report policy's endpoint: each committed partition is POSTed "
    "there as JSON (in DAGs, an HTTP connection may give it instead).",
    origin="Paimon",
)
HTTP_REPORT_PARAMS = ConfigOption(
    "http_report_params",
    "partition.mark-done-action.http.params",
    None,
    v.report_params,
    description="Sent as written as 'params' in every http-report document (Paimon's "
    "text, e.g. 'team=ads'); text holding a JSON object is also sent parsed as "
    "'params_object'. A YAML mapping given here is sent as its JSON.",
    origin="Paimon",
)
HTTP_REPORT_TIMEOUT = ConfigOption(
    "http_report_timeout",
    "partition.mark-done-action.http.timeout",
    timedelta(seconds=5),
    v.positive_duration,
    description="How long the http-report policy waits for an answer; past it the "
    "partition is not committed and the next run reports it again.",
    origin="Paimon",
)

PARTITION_EXPIRATION_TIME = ConfigOption(
    "expiration_time",
    "partition.expiration-time",
    None,
    v.optional_positive_duration,
    description="Published partitions older than this are expired (fscommit expire, "
    "PartitionExpireOperator): dropped from the metastore, their files deleted, and late "
    "data for them never published again, e.g. '30 d'. Unset: partitions never expire "
    "(the factory's maintenance DAG expires only when it is set).",
    origin="Paimon",
)
PARTITION_EXPIRATION_STRATEGY = ConfigOption(
    "expiration_strategy",
    "partition.expiration-strategy",
    ExpirationStrategy.VALUES_TIME,
    v.member(ExpirationStrategy),
    description="What a partition's age is measured from: values-time, its partition time "
    "(the time extractor's, in the watermark time zone); update-time, its last commit.",
    origin="Paimon",
)
PARTITION_EXPIRATION_CHECK_INTERVAL = ConfigOption(
    "expiration_check_interval",
    "partition.expiration-check-interval",
    timedelta(hours=1),
    v.positive_duration,
    description="An applied expiration runs at most once per this interval (a more frequent "
    "schedule finds nothing to do; --force checks anyway).",
    origin="Paimon",
)
METASTORE_COLUMN_STATISTICS = ConfigOption(
    "metastore_column_statistics",
    "metastore.column-statistics",
    False,
    v.boolean,
    description="The metastore policy also writes each partition's column statistics "
    "(min, max, null count from the published files' footers) for Hive's and Spark's "
    "cost-based optimizers.",
    origin="fscommit",
)
PARTITION_TIME_EXTRACTOR_KIND = ConfigOption(
    "time_extractor_kind",
    "partition.time-extractor.kind",
    "default",
    v.choice("default", "custom"),
    description="default: timestamp pattern and formatter; custom: a user class.",
)
PARTITION_TIME_EXTRACTOR_CLASS = ConfigOption(
    "time_extractor_class",
    "partition.time-extractor.class",
    None,
    v.optional_text,
    description="Dotted Python path of a PartitionTimeExtractor subclass (kind custom).",
)
PARTITION_TIME_EXTRACTOR_TIMESTAMP_PATTERN = ConfigOption(
    "timestamp_pattern",
    "partition.time-extractor.timestamp-pattern",
    None,
    v.optional_text,
    description="How to build the partition time from values, e.g. '$dt $hour:00:00'; "
    "default: the first partition value.",
)
PARTITION_TIME_EXTRACTOR_TIMESTAMP_FORMATTER = ConfigOption(
    "timestamp_formatter",
    "partition.time-extractor.timestamp-formatter",
    None,
    v.optional_text,
    description="Java DateTimeFormatter pattern for the filled timestamp, e.g. 'yyyyMMdd'; "
    "default: lenient y-M-d[ H:m:s[.f]].",
)
AUTO_COMPACTION = ConfigOption(
    "auto_compaction",
    "auto-compaction",
    True,
    v.boolean,
    description="Compact a partition's small files before committing it. Flink's default "
    "is false; compacting is what fscommit is for, so its default is true.",
)
COMPACTION_FILE_SIZE = ConfigOption(
    "compaction_file_size",
    "compaction.file-size",
    128 * 1024 * 1024,
    parse_memory_size,
    description="Target size of compacted files, e.g. '128MB'.",
)
COMPACTION_SORT_BY = ConfigOption(
    "compaction_sort_by",
    "compaction.sort-by",
    (),
    v.names,
    description="Columns to sort each compacted partition by, e.g. 'user_id,ts' (ascending, "
    "nulls first, as Spark's ORDER BY): its files and row groups then cover disjoint ranges "
    "of the first column, so a reader's filter on it skips the rest. Parquet and ORC.",
    origin="fscommit",
)
COMPACTION_Z_ORDER_BY = ConfigOption(
    "compaction_z_order_by",
    "compaction.z-order-by",
    (),
    v.names,
    description="2 to 4 columns to cluster each compacted partition by in Z-order, e.g. "
    "'user_id,event_type': a filter on any of them skips most row groups (instead of "
    "compaction.sort-by, which favours its first column). Parquet and ORC.",
    origin="fscommit",
)
COMPACTION_REWRITE_FRAGMENTED = ConfigOption(
    "compaction_rewrite_fragmented",
    "compaction.rewrite-fragmented",
    True,
    v.boolean,
    description="Compact a published partition again, with its late data, once its files "
    "are more than one compaction of all its rows would make (⌈bytes / compaction.file-size⌉ "
    "+ 1), or, in a sorted table, no longer sorted across its files. The new files go to a "
    "directory of their own that the catalog switches to atomically, so it needs a catalog "
    "policy that switches a partition's location (metastore, glue) or swaps its files in one "
    "snapshot (iceberg); Parquet and ORC.",
    origin="fscommit",
)
COMPACTION_SORT_MEMORY = ConfigOption(
    "compaction_sort_memory",
    "compaction.sort-memory",
    256 * 1024 * 1024,
    parse_memory_size,
    description="Rows a sorting compaction holds in a task's memory (Arrow bytes); a larger "
    "partition is sorted in ranges spilled to the executor's local disk.",
    origin="fscommit",
)
PARQUET_BLOCK_SIZE = ConfigOption(
    "parquet_block_size",
    "parquet.block.size",
    128 * 1024 * 1024,
    parse_memory_size,
    description="Row group size of Parquet outputs, as Spark's key (estimated from the "
    "inputs' bytes per row; a row group is held in memory while it is written).",
    origin="Spark",
)
PARQUET_BLOOM_FILTERS = ConfigOption(
    "parquet_bloom_filters",
    None,
    {},
    v.bloom_filters,
    description="Parquet bloom filters per column: Spark's keys "
    "'parquet.bloom.filter.enabled#<column>: true' and, optionally, "
    "'parquet.bloom.filter.expected.ndv#<column>: <distinct values>' (default: the "
    "partition's rows). Needs pyarrow 24 on the executors.",
    origin="Spark",
    key_forms=(f"{v.BLOOM_ENABLED_PREFIX}<column>", f"{v.BLOOM_NDV_PREFIX}<column>"),
)
ORC_STRIPE_SIZE = ConfigOption(
    "orc_stripe_size",
    "orc.stripe.size",
    64 * 1024 * 1024,
    parse_memory_size,
    description="Stripe size of ORC outputs, as ORC's key.",
    origin="ORC",
)
ORC_ROW_INDEX_STRIDE = ConfigOption(
    "orc_row_index_stride",
    "orc.row.index.stride",
    10000,
    v.positive_int,
    description="Rows per entry of an ORC output's row index (its min/max per stride).",
    origin="ORC",
)
ORC_BLOOM_FILTER_COLUMNS = ConfigOption(
    "orc_bloom_filter_columns",
    "orc.bloom.filter.columns",
    (),
    v.names,
    description="Columns an ORC output keeps bloom filters for, e.g. 'user_id' (ORC's key).",
    origin="ORC",
)
ORC_BLOOM_FILTER_FPP = ConfigOption(
    "orc_bloom_filter_fpp",
    "orc.bloom.filter.fpp",
    0.05,
    v.probability,
    description="False positive probability of the ORC bloom filters (ORC's key).",
    origin="ORC",
)
PARTITION_DEFAULT_NAME = ConfigOption(
    "partition_default_name",
    "partition.default-name",
    DEFAULT_PARTITION_NAME,
    v.text,
    description="Directory value Spark writes for a null partition value. Flink's default "
    "is __DEFAULT_PARTITION__; Spark names a null value's directory "
    "__HIVE_DEFAULT_PARTITION__, and the stream here is Spark's.",
)
FORMAT = ConfigOption(
    "format",
    "format",
    None,
    lambda value, option: None if value in (None, "") else parse_format(value, option),
    description="The staged files' format as Spark names it (parquet, orc, json, csv, "
    "text); unset: detected from the files. A spec that disagrees with the files is refused.",
)
CSV_HEADER = ConfigOption(
    "csv_header",
    "csv.header",
    None,
    v.optional_boolean,
    description="true: the stream writes CSV with header=true (every staged file starts with "
    "the header line; a merged file keeps the first one only); false: no header. Unset: a "
    "partition whose CSV files all begin with the same line is refused until it is set.",
)
SINGLE_WRITER = ConfigOption(
    "single_writer",
    None,
    False,
    v.boolean,
    description="Declare that one run at a time changes this table (e.g. the DAG's "
    "max_active_runs=1 and an Airflow pool of one slot): needed on object stores without "
    "conditional writes (If-None-Match), where fscommit cannot keep two runs from "
    "publishing a partition twice by itself.",
)

OPTIONS: tuple[ConfigOption, ...] = (
    STAGING_PATH,
    CHECKPOINT_PATH,
    TABLE_PATH,
    PARTITION_KEYS,
    SINK_PARTITION_COMMIT_TRIGGER,
    SINK_PARTITION_COMMIT_DELAY,
    SINK_PARTITION_COMMIT_WATERMARK_TIME_ZONE,
    SINK_PARTITION_COMMIT_END_INPUT,
    PARTITION_IDLE_TIME_TO_DONE,
    PARTITION_TIME_INTERVAL,
    PARTITION_EXPIRATION_TIME,
    PARTITION_EXPIRATION_STRATEGY,
    PARTITION_EXPIRATION_CHECK_INTERVAL,
    SINK_PARTITION_COMMIT_POLICY_KIND,
    SINK_PARTITION_COMMIT_POLICY_CLASS,
    SINK_PARTITION_COMMIT_POLICY_CLASS_PARAMETERS,
    METASTORE_DATABASE,
    METASTORE_TABLE,
    GLUE_CATALOG_ID,
    ICEBERG_CATALOG,
    ICEBERG_CREATE_TABLE,
    METASTORE_COLUMN_STATISTICS,
    SINK_PARTITION_COMMIT_SUCCESS_FILE_NAME,
    HTTP_REPORT_URL,
    HTTP_REPORT_PARAMS,
    HTTP_REPORT_TIMEOUT,
    PARTITION_TIME_EXTRACTOR_KIND,
    PARTITION_TIME_EXTRACTOR_CLASS,
    PARTITION_TIME_EXTRACTOR_TIMESTAMP_PATTERN,
    PARTITION_TIME_EXTRACTOR_TIMESTAMP_FORMATTER,
    AUTO_COMPACTION,
    COMPACTION_FILE_SIZE,
    COMPACTION_SORT_BY,
    COMPACTION_Z_ORDER_BY,
    COMPACTION_SORT_MEMORY,
    COMPACTION_REWRITE_FRAGMENTED,
    PARQUET_BLOCK_SIZE,
    PARQUET_BLOOM_FILTERS,
    ORC_STRIPE_SIZE,
    ORC_ROW_INDEX_STRIDE,
    ORC_BLOOM_FILTER_COLUMNS,
    ORC_BLOOM_FILTER_FPP,
    PARTITION_DEFAULT_NAME,
    FORMAT,
    CSV_HEADER,
    SINGLE_WRITER,
)

# The rest of Flink's filesystem connector keys (FileSystemTableFactory's required and
# optional options, FileSystemConnectorOptions' Hive streaming-source ones, and
# FactoryUtil's 'connector'): they mean nothing for a Spark stream, but are accepted so
# that a whole WITH (...) clause pastes in; the table spec names them in one warning.
FLINK_ONLY_KEYS = frozenset(
    {
        "connector",
        "path",
        "source.monitor-interval",
        "source.report-statistics",
        "source.path.regex-pattern",
        "sink.rolling-policy.file-size",
        "sink.rolling-policy.rollover-interval",
        "sink.rolling-policy.inactivity-interval",
        "sink.rolling-policy.check-interval",
        "sink.shuffle-by-partition.enable",
        "sink.parallelism",
        "compaction.parallelism",
        "streaming-source.enable",
        "streaming-source.partition.include",
        "streaming-source.monitor-interval",
        "streaming-source.partition-order",
        "streaming-source.consume-order",
        "streaming-source.consume-start-offset",
        "lookup.join.cache.ttl",
    }
)


def flink_only(options: Mapping[str, Any]) -> list[str]:
    """The keys of ``options`` that only Flink uses, in the order given.

    As Flink, a key under the format's prefix (``parquet.compression`` with format
    ``parquet``) is the format's own, unless it is one of ours (``csv.header``).
    """
    fmt = options.get("format")
    fmt = fmt.strip().lower() if isinstance(fmt, str) else None
    return [
        key
        for key in options
        if key in FLINK_ONLY_KEYS or (fmt and key.startswith(f"{fmt}.") and key not in _BY_ANY_NAME)
    ]


_BY_ANY_NAME: dict[str, ConfigOption] = (
    {o.name: o for o in OPTIONS}
    | {o.key: o for o in OPTIONS if o.key}
    | {alias: o for o in OPTIONS for alias in o.aliases}
)


def lookup(name: str) -> ConfigOption:
    """Find an option by its Python name or its Flink key (Spark's per-column bloom filter
    keys, ``parquet.bloom.filter.enabled#<column>``, are ``parquet_bloom_filters``;
    ``iceberg.catalog.<property>`` is ``iceberg_catalog``)."""
    if name.startswith((v.BLOOM_ENABLED_PREFIX, v.BLOOM_NDV_PREFIX)):
        return PARQUET_BLOOM_FILTERS
    if name.startswith(v.ICEBERG_CATALOG_PREFIX):
        return ICEBERG_CATALOG
    try:
        return _BY_ANY_NAME[name]
    except KeyError:
        close = difflib.get_close_matches(name, [*_BY_ANY_NAME, *FLINK_ONLY_KEYS], n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise ConfigError(f"unknown table option {name!r}{hint}") from None
