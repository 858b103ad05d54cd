"""The flags the ``fscommit`` commands share: the table, ``--json``, the metastore.

A table is named the same way for every command (a spec file, ``--option`` pairs, flags
for the common options), so the commands' modules add these groups rather than define
their own.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import Any

from airflow_provider_fscommit.core.catalogs.glue_table import GlueClientFactory
from airflow_provider_fscommit.core.catalogs.metastore_table import ClientFactory
from airflow_provider_fscommit.core.commit.policy_factory import IcebergCatalogFactory
from airflow_provider_fscommit.core.config import option_values as v
from airflow_provider_fscommit.core.config import options as o
from airflow_provider_fscommit.core.config.quantities import (
    format_duration,
    format_size,
    parse_duration,
)
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.errors import ConfigError, FsCommitError

# The groups of table flags, in the order help lists them. Each is cut so that a command
# reads all of a group or none of it (the table below): a command offers the groups it
# reads, in its help and usage; another group's flags are still accepted, hidden, and set
# the spec as for any command, since a table is named the same way for every command (one
# table's flags serve them all, and a spec is checked whole: a metastore policy needs its
# table whoever reads it).
TABLE = "table"
PARTITION_TIME = "partition time"
PARTITION_COMMIT = "partition commit"
COMPACTION = "compaction"
POLICIES = "commit policies"
HTTP_REPORT = "http report"
EXPIRATION = "expiration"
TABLE_GROUPS = (
    TABLE,
    PARTITION_TIME,
    PARTITION_COMMIT,
    COMPACTION,
    POLICIES,
    HTTP_REPORT,
    EXPIRATION,
)
_GROUP_TITLES = {
    TABLE: "the table (or --spec FILE; flags override it)",
    PARTITION_TIME: "a partition's time, read from its values",
    PARTITION_COMMIT: "when a partition is complete",
    COMPACTION: "the staged files, and how partitions are compacted",
    POLICIES: "how a committed partition becomes visible, and in which catalog table",
    HTTP_REPORT: "the http-report policy",
    EXPIRATION: "when published partitions expire",
}

#: The groups of table flags each table command reads, so offers: the one table its help,
#: its parser and the tests go by. What each reads of the spec, and where:
#:
#: - init writes every option it is given into the spec (and infers the others): all.
#: - status judges each partition (its time, the trigger), shows fragmented ones (the
#:   compacted file size, the sort columns), expired ones (the expiration) and the
#:   partitions whose policies are unfinished (--policy, which names a catalog policy's
#:   table with it); not the http-report's endpoint.
#: - compact, and plan (its dry run), compact committable partitions (the time, the
#:   trigger, the compaction), refuse expired ones, and compact a fragmented partition
#:   again only when a catalog policy switches its location (--policy); they run no policy.
#: - commit: compact, then every policy, with its catalog and endpoint: all.
#: - expire: the partitions' age (their time, or their last commit) and the catalog
#:   tables of the policies it drops them from; no trigger, compaction or http-report.
#: - clean-staging and quarantine: the staged partitions (the table), by the ledger's
#:   records; neither a partition's time nor when it is complete.
COMMAND_GROUPS: dict[str, tuple[str, ...]] = {
    "init": TABLE_GROUPS,
    "status": (TABLE, PARTITION_TIME, PARTITION_COMMIT, COMPACTION, POLICIES, EXPIRATION),
    "compact": (TABLE, PARTITION_TIME, PARTITION_COMMIT, COMPACTION, POLICIES, EXPIRATION),
    "commit": TABLE_GROUPS,
    "plan": (TABLE, PARTITION_TIME, PARTITION_COMMIT, COMPACTION, POLICIES, EXPIRATION),
    "clean-staging": (TABLE,),
    "expire": (TABLE, PARTITION_TIME, POLICIES, EXPIRATION),
    "quarantine": (TABLE,),
}

# Flags that set a table option directly: (flag, option, group), each flag named after the
# spec key it sets. Public: tests build flags from it.
TABLE_FLAGS: tuple[tuple[str, o.ConfigOption, str], ...] = (
    ("--staging-path", o.STAGING_PATH, TABLE),
    ("--checkpoint-path", o.CHECKPOINT_PATH, TABLE),
    ("--table-path", o.TABLE_PATH, TABLE),
    ("--partition-keys", o.PARTITION_KEYS, TABLE),
    ("--timestamp-pattern", o.PARTITION_TIME_EXTRACTOR_TIMESTAMP_PATTERN, PARTITION_TIME),
    ("--timestamp-formatter", o.PARTITION_TIME_EXTRACTOR_TIMESTAMP_FORMATTER, PARTITION_TIME),
    ("--time-zone", o.SINK_PARTITION_COMMIT_WATERMARK_TIME_ZONE, PARTITION_TIME),
    ("--trigger", o.SINK_PARTITION_COMMIT_TRIGGER, PARTITION_COMMIT),
    ("--delay", o.SINK_PARTITION_COMMIT_DELAY, PARTITION_COMMIT),
    ("--format", o.FORMAT, COMPACTION),
    ("--csv-header", o.CSV_HEADER, COMPACTION),
    ("--compaction-file-size", o.COMPACTION_FILE_SIZE, COMPACTION),
    ("--sort-by", o.COMPACTION_SORT_BY, COMPACTION),
    ("--z-order-by", o.COMPACTION_Z_ORDER_BY, COMPACTION),
    ("--policy", o.SINK_PARTITION_COMMIT_POLICY_KIND, POLICIES),
    ("--metastore-database", o.METASTORE_DATABASE, POLICIES),
    ("--metastore-table", o.METASTORE_TABLE, POLICIES),
    ("--glue-catalog-id", o.GLUE_CATALOG_ID, POLICIES),
    ("--http-report-url", o.HTTP_REPORT_URL, HTTP_REPORT),
    ("--http-report-params", o.HTTP_REPORT_PARAMS, HTTP_REPORT),
    ("--http-report-timeout", o.HTTP_REPORT_TIMEOUT, HTTP_REPORT),
    ("--expiration-time", o.PARTITION_EXPIRATION_TIME, EXPIRATION),
    ("--expiration-strategy", o.PARTITION_EXPIRATION_STRATEGY, EXPIRATION),
)
#: The flag that is not an option's value: the query has stopped (its group's, like theirs).
END_OF_INPUT = ("--end-of-input", o.SINK_PARTITION_COMMIT_END_INPUT, PARTITION_COMMIT)

#: The old names, still accepted: each says, when used, which flag replaces it.
DEPRECATED_FLAGS = {
    "--staging": "--staging-path",
    "--checkpoint": "--checkpoint-path",
    "--table": "--table-path",
    "--target-file-size": "--compaction-file-size",
    "--database": "--metastore-database",
    "--table-name": "--metastore-table",
}

Commands = argparse._SubParsersAction  # what add_subparsers returns (argparse names it so)


_DURATION_PARSERS = (parse_duration, v.positive_duration, v.optional_positive_duration)


def duration_type(flag: str) -> Callable[[str], str]:
    """An argparse ``type`` for a duration flag: a value without a unit (``5``, which
    Flink's options read as 5 ms) or one that does not parse is a usage error naming the
    units. The text is kept: the option reads it as a spec file's value."""

    def check(text: str) -> str:
        try:
            parse_duration(text, flag, unit_required=True)
        except ConfigError as exc:
            raise argparse.ArgumentTypeError(str(exc).removeprefix(f"{flag}: ")) from None
        return text

    return check


def add_metastore_uri(parser: argparse.ArgumentParser) -> None:
    """The metastore of the commands that change it (``commit``, ``expire``)."""
    parser.add_argument(
        "--metastore-uri", metavar="THRIFT_URI", help="e.g. thrift://127.0.0.1:9083"
    )


def metastore_client_factory(uri: str | None) -> ClientFactory | None:
    """The metastore clients of ``--metastore-uri`` (None: not given)."""
    if uri is None:
        return None
    # The hook brings Airflow (seconds of import), which no other command needs.
    from airflow_provider_fscommit.hooks.metastore import MetastoreHook

    return MetastoreHook.from_uri(uri).get_conn


def glue_client_factory() -> GlueClientFactory:
    """Glue clients of boto3's standard chain (``AWS_DEFAULT_REGION``, ``AWS_ENDPOINT_URL``,
    a profile, a role), made only if the chain names the ``glue`` policy."""

    def client() -> object:
        from airflow_provider_fscommit.hooks.glue import GlueHook

        return GlueHook().get_conn()

    return client


def iceberg_catalog_factory(spec: TableSpec, metastore_uri: str | None) -> IcebergCatalogFactory:
    """The spec's Iceberg catalog (``iceberg.catalog.*``), loaded when the iceberg policy
    first needs it; a ``hive`` catalog without a ``uri`` takes ``--metastore-uri``."""

    def catalog() -> object:
        from airflow_provider_fscommit.core.catalogs.iceberg_table import (
            load_catalog,
            wants_metastore_uri,
        )

        properties = dict(spec.iceberg_catalog)
        if metastore_uri and wants_metastore_uri(properties):
            properties["uri"] = metastore_uri
        return load_catalog(properties)

    return catalog


def add_json_flag(parser: argparse.ArgumentParser) -> None:
    """Every command prints one JSON object on request, for scripts."""
    parser.add_argument("--json", action="store_true", help="print one JSON object")


class _DeprecatedFlag(argparse.Action):
    """An old flag's name: stores as the new one does, and says it is deprecated."""

    def __init__(self, *args: Any, replacement: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.replacement = replacement

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        if option_string == "--table" and "/" not in values and "." in values:
            parser.error(
                f"--table {values!r} looks like a catalog table (database.table), but "
                "--table (deprecated) is the published table's directory, --table-path; "
                "name the catalog table with --metastore-database and --metastore-table"
            )
        print(
            f"fscommit: warning: {option_string} is deprecated and will be removed; use "
            f"{self.replacement}, named after the spec key it sets",
            file=sys.stderr,
        )
        setattr(namespace, self.dest, values)


def _shown_default(option: o.ConfigOption) -> str | None:
    """An option's default in the user's units (``128 MB``, ``1 h``), None without one."""
    default = option.default
    if default in (None, (), {}) or isinstance(default, bool):
        return None
    if isinstance(default, timedelta):
        return format_duration(default)
    if option is o.COMPACTION_FILE_SIZE:
        return format_size(default).replace(".0 ", " ")
    return str(default)


def _help(option: o.ConfigOption) -> str:
    text = option.description
    if option is o.SINK_PARTITION_COMMIT_POLICY_KIND:
        text = (
            "Commit policies applied in order, comma-separated: "
            + ", ".join(map(str, o.PolicyKind))
            + " (fscommit init writes what each needs)."
        )
    shown = _shown_default(option)
    key = option.key or option.name
    return f"{text} Spec key {key}" + (f"; default: {shown}." if shown else ".")


def add_table_arguments(
    parser: argparse.ArgumentParser, groups: Sequence[str] = TABLE_GROUPS
) -> None:
    """The table flags, in their groups; ``groups`` are the ones the command reads
    (:data:`COMMAND_GROUPS`) and offers (the others' flags are accepted, hidden: they name
    the same table)."""
    shown = {name: parser.add_argument_group(_GROUP_TITLES[name]) for name in groups}
    hidden = parser.add_argument_group()
    renamed = {new: old for old, new in DEPRECATED_FLAGS.items()}
    for flag, option, name in TABLE_FLAGS:
        group = shown.get(name, hidden)
        checked = duration_type(flag) if option.parse in _DURATION_PARSERS else None
        group.add_argument(
            flag,
            dest=option.name,
            metavar=flag[2:].upper().replace("-", "_"),
            type=checked,
            help=_help(option) if name in shown else argparse.SUPPRESS,
        )
        if flag in renamed:
            hidden.add_argument(
                renamed[flag],
                dest=option.name,
                type=checked,
                action=_DeprecatedFlag,
                replacement=flag,
                help=argparse.SUPPRESS,
            )
    flag, option, name = END_OF_INPUT
    shown.get(name, hidden).add_argument(
        flag,
        dest=option.name,
        action="store_const",
        const=True,
        help=option.description if name in shown else argparse.SUPPRESS,
    )
    group = shown[TABLE]
    group.add_argument(
        "--spec",
        metavar="FILE",
        help="a table spec file (YAML or JSON options, as the DAGs read); flags override it",
    )
    group.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="any table option by its Flink key or Python name, e.g. "
        "'sink.partition-commit.delay=1 h' (repeatable)",
    )


def spec_from_args(args: argparse.Namespace) -> TableSpec:
    """The table spec of ``--spec``, overridden by ``--option`` pairs, then by flags."""
    return TableSpec.from_options(table_options(args))


def table_options(args: argparse.Namespace) -> dict[str, Any]:
    """The options of ``--spec``, ``--option`` pairs and flags, unchecked (later ones win)."""
    values: dict[str, Any] = TableSpec.options_from_file(args.spec) if args.spec else {}
    overrides = pairs(args.option, "--option")
    ordering = (o.COMPACTION_SORT_BY, o.COMPACTION_Z_ORDER_BY)
    if getattr(args, o.SINK_PARTITION_COMMIT_END_INPUT.name, None):
        overrides[o.SINK_PARTITION_COMMIT_END_INPUT.name] = True
    for _, option, _ in TABLE_FLAGS:
        value = getattr(args, option.name)
        if value is not None and option not in ordering:
            overrides[option.name] = value
    order = [getattr(args, option.name) for option in ordering]
    return TableSpec.with_overrides(values, overrides | TableSpec.order_overrides(*order))


def missing_table_flags(args: argparse.Namespace, optional: Sequence[str] = ()) -> list[str]:
    """Required table flags absent with no ``--spec`` to supply them (a usage error);
    ``optional`` flags are ones the command can do without (it infers them). None with
    ``status --specs``, which names its tables by their spec files."""
    if args.spec or getattr(args, "specs", None):
        return []
    given = {o.lookup(k).name for k in pairs(args.option, "--option")}
    return [
        flag
        for flag, option, _ in TABLE_FLAGS
        if option.required
        and getattr(args, option.name) is None
        and option.name not in given
        and flag not in optional
    ]


def pairs(items: list[str], flag: str) -> dict[str, str]:
    """``KEY=VALUE`` flags (``--option``, ``--conf``) as a mapping."""
    found = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise FsCommitError(f"{flag} {item!r} is not KEY=VALUE")
        found[key.strip()] = value.strip()
    return found
