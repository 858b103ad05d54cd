"""The table spec: everything fscommit needs to know about one streaming table.

It travels: the CLI builds it from flags or a file, DAGs from a file or Variable, and it
crosses process boundaries through XCom and trigger kwargs, so it round-trips through
plain JSON (:meth:`TableSpec.to_dict` / :meth:`TableSpec.from_options`).
"""

from __future__ import annotations

import enum
import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from datetime import datetime, timedelta, tzinfo
from functools import cached_property
from typing import Any

from airflow_provider_fscommit.core.config import options as o
from airflow_provider_fscommit.core.config.catalog_capabilities import (
    CatalogCapability,
    catalogs_with,
)
from airflow_provider_fscommit.core.config.option_values import iceberg_catalog_properties
from airflow_provider_fscommit.core.config.prefixed_keys import fold_prefixed_keys
from airflow_provider_fscommit.core.config.quantities import format_duration
from airflow_provider_fscommit.core.errors import (
    ConfigError,
    PartitionPathError,
    PartitionTimeError,
)
from airflow_provider_fscommit.core.formats.file_format import FileFormat
from airflow_provider_fscommit.core.partition.commit_trigger import (
    EndOfInputTrigger,
    IdleTimeCommitTrigger,
    PartitionCommitTrigger,
    PartitionTimeCommitTrigger,
    ProcTimeCommitTrigger,
    at_zone_epoch_ms,
    parse_time_zone,
)
from airflow_provider_fscommit.core.partition.partition_key import partition_key
from airflow_provider_fscommit.core.partition.partition_spec import PartitionSpec
from airflow_provider_fscommit.core.partition.time_extractor import (
    PartitionTimeExtractor,
    create_time_extractor,
)
from airflow_provider_fscommit.core.storage.filesystem import is_within, normalize_uri

log = logging.getLogger(__name__)

#: The section of a spec file that holds the settings of the table's DAG, not table options.
DAG_SECTION = "dag"

_PATH_HINT = (
    " (Flink's 'path' is where the sink writes and readers read; here those are "
    "staging_path and table_path)"
)


@dataclass(frozen=True)
class TableSpec:
    """A validated table configuration; build it with :meth:`from_options`."""

    staging_path: str
    checkpoint_path: str
    partition_keys: tuple[str, ...]
    table_path: str | None = o.TABLE_PATH.default
    trigger: o.TriggerKind = o.SINK_PARTITION_COMMIT_TRIGGER.default
    idle_time_to_done: timedelta | None = o.PARTITION_IDLE_TIME_TO_DONE.default
    time_interval: timedelta | None = o.PARTITION_TIME_INTERVAL.default
    delay: timedelta = o.SINK_PARTITION_COMMIT_DELAY.default
    expiration_time: timedelta | None = o.PARTITION_EXPIRATION_TIME.default
    expiration_strategy: o.ExpirationStrategy = o.PARTITION_EXPIRATION_STRATEGY.default
    expiration_check_interval: timedelta = o.PARTITION_EXPIRATION_CHECK_INTERVAL.default
    watermark_time_zone: str = o.SINK_PARTITION_COMMIT_WATERMARK_TIME_ZONE.default
    end_of_input: bool = o.SINK_PARTITION_COMMIT_END_INPUT.default
    policy_kind: tuple[o.PolicyKind, ...] = o.SINK_PARTITION_COMMIT_POLICY_KIND.default
    policy_class: str | None = o.SINK_PARTITION_COMMIT_POLICY_CLASS.default
    policy_class_parameters: tuple[str, ...] = (
        o.SINK_PARTITION_COMMIT_POLICY_CLASS_PARAMETERS.default
    )
    metastore_database: str = o.METASTORE_DATABASE.default
    metastore_table: str | None = o.METASTORE_TABLE.default
    glue_catalog_id: str | None = o.GLUE_CATALOG_ID.default
    # pyiceberg catalog properties; compared, not hashed.
    iceberg_catalog: Mapping[str, str] = field(default_factory=dict, hash=False)
    iceberg_create_table: bool = o.ICEBERG_CREATE_TABLE.default
    metastore_column_statistics: bool = o.METASTORE_COLUMN_STATISTICS.default
    success_file_name: str = o.SINK_PARTITION_COMMIT_SUCCESS_FILE_NAME.default
    http_report_url: str | None = o.HTTP_REPORT_URL.default
    http_report_params: str | None = o.HTTP_REPORT_PARAMS.default
    http_report_timeout: timedelta = o.HTTP_REPORT_TIMEOUT.default
    time_extractor_kind: str = o.PARTITION_TIME_EXTRACTOR_KIND.default
    time_extractor_class: str | None = o.PARTITION_TIME_EXTRACTOR_CLASS.default
    timestamp_pattern: str | None = o.PARTITION_TIME_EXTRACTOR_TIMESTAMP_PATTERN.default
    timestamp_formatter: str | None = o.PARTITION_TIME_EXTRACTOR_TIMESTAMP_FORMATTER.default
    auto_compaction: bool = o.AUTO_COMPACTION.default
    compaction_file_size: int = o.COMPACTION_FILE_SIZE.default
    compaction_sort_by: tuple[str, ...] = o.COMPACTION_SORT_BY.default
    compaction_z_order_by: tuple[str, ...] = o.COMPACTION_Z_ORDER_BY.default
    compaction_sort_memory: int = o.COMPACTION_SORT_MEMORY.default
    compaction_rewrite_fragmented: bool = o.COMPACTION_REWRITE_FRAGMENTED.default
    parquet_block_size: int = o.PARQUET_BLOCK_SIZE.default
    # Column -> expected distinct values (None: the partition's rows); compared, not hashed.
    parquet_bloom_filters: Mapping[str, int | None] = field(default_factory=dict, hash=False)
    orc_stripe_size: int = o.ORC_STRIPE_SIZE.default
    orc_row_index_stride: int = o.ORC_ROW_INDEX_STRIDE.default
    orc_bloom_filter_columns: tuple[str, ...] = o.ORC_BLOOM_FILTER_COLUMNS.default
    orc_bloom_filter_fpp: float = o.ORC_BLOOM_FILTER_FPP.default
    partition_default_name: str = o.PARTITION_DEFAULT_NAME.default
    format: FileFormat | None = o.FORMAT.default
    csv_header: bool | None = o.CSV_HEADER.default
    single_writer: bool = o.SINGLE_WRITER.default

    def __post_init__(self) -> None:
        # Built directly rather than from options, the kinds may still be plain names.
        for option in (
            o.SINK_PARTITION_COMMIT_POLICY_KIND,
            o.SINK_PARTITION_COMMIT_TRIGGER,
            o.PARTITION_EXPIRATION_STRATEGY,
        ):
            object.__setattr__(self, option.name, option.convert(getattr(self, option.name)))

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> TableSpec:
        """Build from Python names and/or Flink keys; every value is parsed and checked.

        Flink keys that mean nothing here (``connector``, ``sink.rolling-policy.*``, ...)
        are left out with one warning naming them; :meth:`to_dict` does not carry them.
        """
        options = fold_prefixed_keys(options)
        ignored = o.flink_only(options)
        if ignored:
            log.warning(
                "ignoring Flink option(s) that do not apply to a Spark stream: %s%s",
                ", ".join(ignored),
                _PATH_HINT if "path" in ignored else "",
            )
        values: dict[str, Any] = {}
        for name, raw in options.items():
            if name in ignored:
                continue
            option = o.lookup(name)
            if option.name in values:
                raise ConfigError(
                    f"table option {option.name!r} is given twice (as {name!r} and under "
                    "another name); keep one"
                )
            values[option.name] = option.convert(raw)
        missing = [
            opt.key or opt.name for opt in o.OPTIONS if opt.required and not values.get(opt.name)
        ]
        if missing:
            raise ConfigError(f"the table spec lacks required option(s) {', '.join(missing)}")
        if values.get("idle_time_to_done") and "trigger" not in values:
            values["trigger"] = o.TriggerKind.IDLE_TIME  # Paimon's key alone means this trigger
        spec = cls(**values)
        spec.validate()
        return spec

    @staticmethod
    def with_overrides(options: Mapping[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
        """``options`` with ``overrides`` applied (later ones win), unchecked: an option
        given under another name (Flink key vs Python name) is replaced, not doubled; so
        are a spec's bloom filter columns by the overrides' (Spark's per-column keys). The
        Iceberg catalog's properties are each their own: an override of one
        (``--option iceberg.catalog.uri=…``) keeps the spec's others."""
        values = fold_prefixed_keys(options)
        for name, value in fold_prefixed_keys(overrides).items():
            option = o.lookup(name)
            held = [v for k, v in values.items() if _names_option(k, option)]
            if option is o.ICEBERG_CATALOG and held:
                value = iceberg_catalog_properties(held[0], name) | (
                    iceberg_catalog_properties(value, name)
                )
            values = {k: v for k, v in values.items() if not _names_option(k, option)}
            values[name] = value
        return values

    @staticmethod
    def order_overrides(sort_by: Any = None, z_order_by: Any = None) -> dict[str, Any]:
        """Overrides of the rows' order (an operator's arguments, the CLI's flags): the one
        given replaces the spec's order of either kind; both given are refused later."""
        overrides: dict[str, Any] = {}
        if sort_by is not None:
            overrides[o.COMPACTION_SORT_BY.name] = sort_by
        if z_order_by is not None:
            overrides[o.COMPACTION_Z_ORDER_BY.name] = z_order_by
        if len(overrides) == 1:  # the other kind is cleared
            other = o.COMPACTION_Z_ORDER_BY if sort_by is not None else o.COMPACTION_SORT_BY
            overrides[other.name] = ()
        return overrides

    @classmethod
    def options_of(
        cls, table: Mapping[str, Any] | TableSpec, end_of_input: bool = False
    ) -> dict[str, Any]:
        """Plain options for a spec given either way (what operators keep and template);
        ``end_of_input`` (an operator's argument: the DAG ran the query to its end) sets
        ``sink.partition-commit.end-input``."""
        options = table.to_dict() if isinstance(table, TableSpec) else dict(table)
        if not end_of_input:
            return options
        return cls.with_overrides(options, {o.SINK_PARTITION_COMMIT_END_INPUT.name: True})

    @classmethod
    def from_json(cls, text: str) -> TableSpec:
        return cls.from_options(json.loads(text))

    @classmethod
    def from_file(cls, path: str) -> TableSpec:
        """Read a spec file: one YAML or JSON mapping of options (JSON is YAML too).

        The one place a table is described: the CLI (``--spec``) and DAGs read the same
        file, so what an operator runs is what ``fscommit status`` shows.
        """
        return cls.from_options(cls.options_from_file(path))

    @staticmethod
    def options_from_file(path: str) -> dict[str, Any]:
        """The raw options of a spec file, for callers that override some of them.

        A spec file may also hold the settings of the DAG that commits the table (its
        ``dag`` section, read by :mod:`~airflow_provider_fscommit.core.config.spec_file`);
        they are not table options, so the same file serves ``--spec`` too.
        """
        options = TableSpec.mapping_from_file(path)
        options.pop(DAG_SECTION, None)
        return options

    @staticmethod
    def mapping_from_file(path: str) -> dict[str, Any]:
        """The whole mapping a spec file holds, its ``dag`` section included."""
        import yaml

        try:
            with open(path, encoding="utf-8") as handle:
                options = yaml.safe_load(handle)
        except OSError as exc:
            raise ConfigError(f"cannot read the table spec file {path}: {exc.strerror}") from exc
        except yaml.YAMLError as exc:
            raise ConfigError(f"the table spec file {path} is not valid YAML/JSON: {exc}") from exc
        if not isinstance(options, Mapping):
            raise ConfigError(
                f"the table spec file {path} must hold a mapping of table options "
                "(e.g. staging_path: ..., partition_keys: dt,hour)"
            )
        return dict(options)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values under the Python names; :meth:`from_options` reads it back."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, tuple):  # plain strings, policy kinds included
                value = [str(item) for item in value]
            elif isinstance(value, timedelta):
                value = format_duration(value)
            elif isinstance(value, enum.Enum):  # a plain string for Airflow's serializers
                value = value.value
            out[f.name] = value
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    def _validate_trigger(self) -> None:
        """The idle-time trigger, its idle time and its interval come together, without a
        delay."""
        idle = self.trigger is o.TriggerKind.IDLE_TIME
        settings = (
            (
                "partition.idle-time-to-done",
                self.idle_time_to_done,
                "how long a partition must go without new files to be done, e.g. '30 min'",
            ),
            (
                "partition.time-interval",
                self.time_interval,
                "the time span of one partition (e.g. '1 h' for hourly partitions): as in "
                "Paimon, a partition is done only once partition.idle-time-to-done has passed "
                "after both its newest file and the end of its span, so a quiet stretch inside "
                "the span does not announce it",
            ),
        )
        for key, value, meaning in settings:
            if idle and value is None:
                raise ConfigError(f"the idle-time trigger needs {key}, {meaning}")
            if not idle and value is not None:
                raise ConfigError(
                    f"{key} is set but the trigger is {self.trigger}; it only applies to the "
                    "idle-time trigger: drop one of them"
                )
        if idle and self.delay:
            raise ConfigError(
                "sink.partition-commit.delay is set with the idle-time trigger, which waits "
                "partition.idle-time-to-done after the newest file instead: drop the delay"
            )

    def _validate_policies(self) -> None:
        """The chain names known policies, each with what it needs, in an order that holds.

        Whatever reads a catalog's partition (the event, the done partition, the success
        file, a report) must come after the catalog policies that add it.
        """
        kinds = self.policy_kind
        for kind in kinds:
            if kind.needs_catalog_table and not self.metastore_table:
                raise ConfigError(
                    f"sink.partition-commit.policy.kind includes '{kind}' but no metastore "
                    "table is set; give metastore_table (--metastore-table), the table it "
                    "commits to"
                )
        catalogs = [k for k in kinds if k.catalog]
        holders = catalogs_with(CatalogCapability.DONE_PARTITIONS)
        if o.PolicyKind.DONE_PARTITION in kinds and not set(catalogs) & set(holders):
            named = "".join(f" and '{k}'" for k in catalogs)
            order = ",".join([*catalogs, holders[0], *(k for k in kinds if not k.catalog)])
            raise ConfigError(
                f"sink.partition-commit.policy.kind includes 'done-partition'{named}, but no "
                f"catalog that {CatalogCapability.DONE_PARTITIONS} (Hive partitions: "
                f"{', '.join(holders)}; the others say how far a table is complete in its "
                f"properties, fscommit.complete-through); put {' or '.join(holders)} before "
                f"it, e.g. '{order}', or drop done-partition"
            )
        if catalogs:
            last = max(kinds.index(k) for k in catalogs)
            early = [k for k in kinds[:last] if k.announces]
            if early:
                order = ",".join([*catalogs, *(k for k in kinds if not k.catalog)])
                raise ConfigError(
                    f"sink.partition-commit.policy.kind lists {early[0]} before "
                    f"{kinds[last]}; {early[0]} must only happen once every catalog has the "
                    f"partition: write e.g. '{order}'"
                )
        if self.metastore_column_statistics and o.PolicyKind.METASTORE not in kinds:
            raise ConfigError(
                "metastore.column-statistics is set but the policy chain has no 'metastore' "
                "policy to write them with; add metastore to sink.partition-commit.policy.kind"
            )
        if o.PolicyKind.CUSTOM in kinds and not self.policy_class:
            raise ConfigError(
                "sink.partition-commit.policy.kind includes 'custom' but "
                "sink.partition-commit.policy.class is not set"
            )

    def _validate_layout(self) -> None:
        """A sorted layout names one order of plain column names, on compacted files."""
        if self.compaction_sort_by and self.compaction_z_order_by:
            raise ConfigError(
                "compaction.sort-by and compaction.z-order-by are both set; a partition is "
                "laid out in one order: keep one of them"
            )
        if self.compaction_z_order_by and not 2 <= len(self.compaction_z_order_by) <= 4:
            raise ConfigError(
                f"compaction.z-order-by names {len(self.compaction_z_order_by)} column(s); "
                "Z-order interleaves 2 to 4 (for one column, use compaction.sort-by)"
            )
        if self.sort_columns and not self.auto_compaction:
            raise ConfigError(
                "compaction.sort-by/z-order-by is set but auto-compaction is false: files "
                "published as they are cannot be sorted; drop one of them"
            )
        for key, names in (
            ("compaction.sort-by", self.compaction_sort_by),
            ("compaction.z-order-by", self.compaction_z_order_by),
        ):
            keys = [name for name in names if name in self.partition_keys]
            if keys:
                raise ConfigError(
                    f"{key} names the partition key {keys[0]!r}, which is the same in every "
                    "row of a partition; name data columns"
                )

    @cached_property
    def rewrites_fragmented(self) -> bool:
        """Whether fragmented partitions are compacted again: asked for, on compacted
        files, with a catalog whose location switch makes the new files visible at once."""
        return (
            self.compaction_rewrite_fragmented
            and self.auto_compaction
            and any(kind.catalog for kind in self.policy_kind)
        )

    @property
    def sort_columns(self) -> tuple[str, ...]:
        """The columns a compacted partition is laid out by (sorted or Z-ordered)."""
        return self.compaction_sort_by or self.compaction_z_order_by

    def validate(self) -> None:
        """Cross-option checks, done once so every later step can rely on them."""
        self.watermark_zone  # noqa: B018 - resolve the zone now to report a bad one early
        values_time_expiry = (
            self.expiration_time and self.expiration_strategy is o.ExpirationStrategy.VALUES_TIME
        )
        if self.trigger is not o.TriggerKind.PROCESS_TIME or values_time_expiry:
            self.time_extractor.validate(self.partition_keys)
        self._validate_trigger()
        self._validate_policies()
        self._validate_layout()
        if self.csv_header and self.format not in (None, "csv"):
            raise ConfigError(
                f"csv.header is set but the format is {self.format}; it only applies to CSV "
                "files (remove it, or set format to csv)"
            )
        if self.table_path is not None:
            table = normalize_uri(self.table_path)
            for name, path in (
                ("staging_path", self.staging_path),
                ("checkpoint_path", self.checkpoint_path),
            ):
                other = normalize_uri(path)
                if is_within(other, table) or is_within(table, other):
                    raise ConfigError(
                        f"table_path {self.table_path!r} and {name} {path!r} overlap; the "
                        "published table must be a directory of its own, apart from the "
                        "streaming query's output and checkpoint"
                    )

    def partition_path(self, partition: str | Mapping[str, str | None]) -> str:
        """The escaped path of a partition given as a path or as ``{key: value}``.

        Values are escaped the way Spark names directories, so a value can never become
        a path separator or a parent reference; a path is checked against the keys.
        """
        if isinstance(partition, str):
            PartitionSpec.parse(partition, self.partition_keys, self.partition_default_name)
            return partition
        values = {k: None if v is None else str(v) for k, v in partition.items()}
        return PartitionSpec.of(self.partition_keys, values).path(self.partition_default_name)

    def partition_paths(
        self, partitions: str | Mapping[str, str | None] | Sequence[Any]
    ) -> list[str]:
        """:meth:`partition_path` of one partition or of each of a list of them."""
        if isinstance(partitions, (str, Mapping)):
            return [self.partition_path(partitions)]
        return [self.partition_path(p) for p in partitions]

    def require_table_path(self) -> str:
        """The published table directory; compaction and commit cannot run without it."""
        if not self.table_path:
            raise ConfigError(
                "the table spec has no table_path: set the published table directory "
                "(--table-path, or the table_path option) to compact and publish into"
            )
        return self.table_path

    def partition_time_ms(self, partition: str) -> int:
        """A partition's time as an instant (epoch ms): its extracted local time on the
        wall clock of the watermark time zone, placed as ``partition-time`` places it.

        Raises ``PartitionTimeError`` for values the extractor cannot read.
        """
        local = self.partition_local_time(partition)
        return at_zone_epoch_ms(local, self.watermark_zone)

    def partition_local_time(self, partition: str) -> datetime:
        """A partition's extracted time, on the partitions' wall clock (naive).

        Raises ``PartitionPathError`` for a path of other keys, ``PartitionTimeError`` for
        values the extractor cannot read.
        """
        values = PartitionSpec.parse(partition, self.partition_keys, self.partition_default_name)
        return self.time_extractor.extract(values.keys, values.values)

    def partition_time_key(self, partition: str) -> str | None:
        """The key Airflow knows ``partition`` by (its time), or None when it has no time.

        Runs and asset events name partitions by time (``core.partition.partition_key``);
        a partition the time extractor cannot read (a custom extractor's failure, a path
        of other keys) has no such key.
        """
        try:
            return partition_key(self.partition_local_time(partition))
        except (PartitionPathError, PartitionTimeError):
            return None

    @cached_property
    def time_extractor(self) -> PartitionTimeExtractor:
        return create_time_extractor(
            self.time_extractor_kind,
            self.time_extractor_class,
            self.timestamp_pattern,
            self.timestamp_formatter,
        )

    @property
    def trigger_summary(self) -> str:
        """The trigger and the settings it uses, as the status views show it."""
        if self.trigger is o.TriggerKind.IDLE_TIME:
            idle = format_duration(self.idle_time_to_done or timedelta(0))
            interval = format_duration(self.time_interval or timedelta(0))
            return (
                f"idle-time, idle {idle} after both the newest file and the partition's end "
                f"(its time + {interval}), time zone {self.watermark_time_zone}"
            )
        summary = f"{self.trigger}, delay {format_duration(self.delay)}"
        if self.trigger is o.TriggerKind.PARTITION_TIME:
            summary += f", time zone {self.watermark_time_zone}"
        return summary

    @property
    def expiration_summary(self) -> str | None:
        """Partition expiration as the status views show it (None: partitions never expire)."""
        if self.expiration_time is None:
            return None
        since = (
            "partition time"
            if self.expiration_strategy is o.ExpirationStrategy.VALUES_TIME
            else "last commit"
        )
        expiration = format_duration(self.expiration_time)
        return f"{expiration} after the {since} ({self.expiration_strategy})"

    @cached_property
    def commit_trigger(self) -> PartitionCommitTrigger:
        """The trigger that judges this run's partitions: :attr:`clock_trigger`, wrapped
        in :class:`EndOfInputTrigger` once the query has stopped for good (end of input),
        decided here once for every reader."""
        if self.end_of_input:
            return EndOfInputTrigger(self.clock_trigger)
        return self.clock_trigger

    @cached_property
    def clock_trigger(self) -> PartitionCommitTrigger:
        """The trigger the options describe, judging by its clock (the watermark or the
        wall clock) whether the query has ended or not."""
        if self.trigger is o.TriggerKind.PROCESS_TIME:
            return ProcTimeCommitTrigger(self.delay)
        if self.trigger is o.TriggerKind.IDLE_TIME:
            assert self.idle_time_to_done and self.time_interval  # validate() checked
            return IdleTimeCommitTrigger(
                self.idle_time_to_done,
                self.time_interval,
                self.time_extractor,
                self.watermark_zone,
            )
        return PartitionTimeCommitTrigger(self.time_extractor, self.delay, self.watermark_zone)

    @cached_property
    def watermark_zone(self) -> tzinfo:
        """The watermark time zone, resolved once: every partition's time is placed in it."""
        return parse_time_zone(self.watermark_time_zone)


def _names_option(key: str, option: o.ConfigOption) -> bool:
    """Whether ``key`` names ``option``; Flink-only and unknown keys name none here (the
    spec's reading warns about the one and refuses the other)."""
    try:
        return o.lookup(key) is option
    except ConfigError:
        return False
