"""write a table spec inferred from the stream itself, each option with its evidence

Read the staged directories, the sink log and the checkpoint, and write a commented YAML
table spec: the partition keys, the time pattern and formatter, the trigger, the delay and
the format, each with what it was read from. Options given as flags win and are copied
as given. Where two readings fit, nothing is written: the error names both and the option
to set. Without -o the spec goes to stdout and the evidence to stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import textwrap
from collections.abc import Iterable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from airflow_provider_fscommit.cli.arguments import table_options
from airflow_provider_fscommit.core.config import options as o
from airflow_provider_fscommit.core.config.quantities import format_duration
from airflow_provider_fscommit.core.config.spec_file import DAG_SECTION, default_dag_id
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.errors import (
    FsCommitError,
    PartitionPathError,
    PartitionTimeError,
)
from airflow_provider_fscommit.core.status.spec_inference import (
    Finding,
    SpecInference,
    given_options,
    infer_spec,
)

_WIDTH = 88  # a spec file's comment lines wrap here
_GIVEN = "given"  # the evidence of an option given rather than inferred
_POLICY = "policy"  # the evidence of the commit policies: the section says it

#: What each commit policy does and needs, for the spec's policy section: every kind.
POLICY_NEEDS: dict[o.PolicyKind, str] = {
    o.PolicyKind.METASTORE: "adds the partition to a Hive metastore table; needs "
    "metastore_database, metastore_table and the Airflow connection metastore_default "
    "(fscommit: --metastore-uri); the [hive] extra",
    o.PolicyKind.GLUE: "adds it to an AWS Glue Data Catalog table; needs metastore_database, "
    "metastore_table and the connection aws_default (fscommit: boto3's chain); [glue]",
    o.PolicyKind.ICEBERG: "registers its files in an Iceberg table; needs iceberg.catalog.* "
    "(type, uri, warehouse...), metastore_database (the namespace), metastore_table; "
    "[iceberg]",
    o.PolicyKind.MARK_EVENT: "the metastore's LOAD_DONE event, after metastore; as metastore",
    o.PolicyKind.DONE_PARTITION: "Paimon's '<partition>.done' partition, after a catalog "
    "policy; as that catalog",
    o.PolicyKind.SUCCESS_FILE: "writes _SUCCESS (sink.partition-commit.success-file.name) "
    "into the published partition; needs nothing",
    o.PolicyKind.HTTP_REPORT: "POSTs the partition as JSON; needs "
    "partition.mark-done-action.http.url, or the connection http_default in DAGs",
    o.PolicyKind.CUSTOM: "your class; needs sink.partition-commit.policy.class",
}
#: The policies a spec init writes uses when none is given: one that needs nothing.
DEFAULT_POLICIES = (o.PolicyKind.SUCCESS_FILE,)

EXAMPLES = """\
  fscommit init --staging-path s3a://lake/events/staging \\
      --checkpoint-path s3a://lake/events/ckpt --table-path s3a://lake/events/table \\
      -o specs/events.yaml
  fscommit init --staging-path staging --checkpoint-path checkpoint \\
      --policy metastore,success-file --metastore-database analytics \\
      --metastore-table events      # the spec on stdout, its relative paths made absolute"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Where the spec goes; the table flags (main adds them) are what is not inferred."""
    parser.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="write the spec to FILE (never over an existing one); default: stdout",
    )


def inferred_spec(
    args: argparse.Namespace, *, whole: bool
) -> tuple[TableSpec, SpecInference | None]:
    """The table of the flags, with what they leave out read off the stream, the same
    way for every command.

    ``whole`` (``init``) always infers; every other command infers only when the
    partition keys are not given, so a table named in full (a spec file, as the DAGs read
    it) is read exactly as named. Either infers every option it can that is not given:
    the keys, the time, the trigger, the delay and the format.
    """
    given = table_options(args)
    if whole:
        given = absolute_paths(given)
    elif o.PARTITION_KEYS.name in given_options(given):
        return TableSpec.from_options(given), None
    inference = infer_spec(given)
    return TableSpec.from_options(inference.options | given), inference


# The options that name a place: a spec init writes names each by an absolute URI, so it
# reads the same table from any directory (a worker's, the DAG processor's).
_PATHS = (o.STAGING_PATH, o.CHECKPOINT_PATH, o.TABLE_PATH)


def absolute_uri(path: str) -> str:
    """A local path as an absolute ``file://`` URI, a relative one resolved against the
    current directory (where ``init`` runs); a URI (``s3://…``, ``hdfs://…``) as given."""
    if len(urlsplit(path).scheme) > 1:  # one letter would be a Windows drive
        return path
    return Path(os.path.abspath(path)).as_uri()


def absolute_paths(given: Mapping[str, Any]) -> dict[str, Any]:
    """``given`` with its paths made absolute URIs (:func:`absolute_uri`)."""
    paths = {key for option in _PATHS for key in (option.name, option.key) if key}
    return {
        name: absolute_uri(value) if name in paths and isinstance(value, str) and value else value
        for name, value in given.items()
    }


def run(spec: TableSpec, args: argparse.Namespace) -> int:
    inference: SpecInference = args.inference
    given = table_options(args)
    text = render_spec(spec, inference, given, args.output)
    if args.output:
        _write(args.output, text)
    if args.json:
        first = first_partition(spec, inference.partitions)
        document = {
            "options": {
                f.option: f.value for f in _written(spec, inference, given) if f.value is not None
            },
            "dag": None if first is None else _dag_settings(first[0], args.output),
            "inference": inference.to_dict(),
            "output": args.output,
        }
        print(json.dumps(document, indent=2))
        return 0
    evidence = render_evidence(spec, inference)
    if args.output:
        print(f"{evidence}\nWrote {args.output}")
    else:
        print(evidence, file=sys.stderr)
        print(text, end="")
    return 0


def _write(path: str, text: str) -> None:
    """Create the spec file; an existing file is a spec someone may have edited: kept."""
    try:
        with open(path, "x", encoding="utf-8") as handle:
            handle.write(text)
    except FileExistsError:
        raise FsCommitError(
            f"{path} exists; fscommit init does not overwrite a spec: remove it or write "
            "elsewhere (-o)"
        ) from None
    except OSError as exc:
        raise FsCommitError(f"cannot write the spec file {path}: {exc.strerror}") from None


def render_evidence(spec: TableSpec, inference: SpecInference) -> str:
    """What was inferred from what, one option a line, for the person who ran init."""
    lines = [f"Inferred from {spec.staging_path} and {spec.checkpoint_path}:"]
    for finding in inference.findings:
        if finding.inferred:
            value = "(none)" if finding.value is None else finding.value
            lines.append(f"  {finding.option}: {value}")
            lines += _wrap(finding.evidence, "      ")
    return "\n".join(lines)


def _written(spec: TableSpec, inference: SpecInference, given: Mapping[str, Any]) -> list[Finding]:
    """Every option the file sets, in its order: the paths, the inferred, the time zone,
    then what was given."""
    shown = {
        o.STAGING_PATH.name,
        o.CHECKPOINT_PATH.name,
        o.TABLE_PATH.name,
        o.SINK_PARTITION_COMMIT_POLICY_KIND.name,
    }
    written = [
        Finding(o.STAGING_PATH.name, spec.staging_path, "", inferred=False),
        Finding(o.CHECKPOINT_PATH.name, spec.checkpoint_path, "", inferred=False),
    ]
    if spec.table_path:
        written.append(Finding(o.TABLE_PATH.name, spec.table_path, "", inferred=False))
    written += [f for f in inference.findings if f.inferred]
    named = given_options(given)
    if o.SINK_PARTITION_COMMIT_WATERMARK_TIME_ZONE.name not in named:
        written.append(
            Finding(
                o.SINK_PARTITION_COMMIT_WATERMARK_TIME_ZONE.key or "watermark_time_zone",
                spec.watermark_time_zone,
                "the wall clock the partition values are on: the stream does not record it "
                "(Spark derives them on the query's spark.sql.session.timeZone); UTC unless "
                "set here",
            )
        )
    for name, value in given.items():
        option = None if name in o.flink_only(given) else o.lookup(name)
        if option is not None and option.name not in shown:
            written.append(Finding(option.key or option.name, value, _GIVEN, inferred=False))
    policies = spec.policy_kind or DEFAULT_POLICIES
    written.append(
        Finding(
            o.SINK_PARTITION_COMMIT_POLICY_KIND.key or "policy_kind",
            ",".join(map(str, policies)),
            _POLICY,
            inferred=False,
        )
    )
    return written


def _policy_section(spec: TableSpec) -> list[str]:
    """The comment above the policies: every kind, what it needs, what init chose."""
    lines = [
        "",
        *_comment(
            "How a committed partition becomes visible: the commit policies, applied in the "
            "order named (comma-separated). Each, and what it needs:"
        ),
    ]
    width = max(len(str(kind)) for kind in POLICY_NEEDS)
    for kind, needs in POLICY_NEEDS.items():
        head = f"#   {kind!s:<{width}}  "
        first, *rest = _wrap(needs, "#" + " " * (len(head) - 1))
        lines += [head + first[len(head) :], *rest]
    if spec.policy_kind:
        chosen = "Given (--policy); a catalog first, then the announcing policies."
    else:
        chosen = (
            "Left alone, init writes success-file, which needs nothing: readers of the table "
            "directory see each complete partition. For readers that look in a catalog, name "
            "it first, e.g. 'metastore,success-file'."
        )
    return [*lines, *_comment(chosen)]


def first_partition(spec: TableSpec, partitions: Iterable[str]) -> tuple[datetime, str] | None:
    """The earliest partition the stream holds, by its time on the partitions' wall clock
    (None: no partition has a time the spec reads)."""
    timed = []
    for partition in partitions:
        try:
            timed.append((spec.partition_local_time(partition), partition))
        except (PartitionPathError, PartitionTimeError):
            continue  # a null value's partition (no time), or none of this table's keys
    return min(timed, default=None)


def _dag_settings(start: datetime, output: str | None) -> dict[str, str]:
    """The ``dag`` section's settings init sets: where the runs begin, and the DAG id."""
    settings = {"start_date": start.isoformat()}
    if output:
        settings["dag_id"] = default_dag_id(output)
    return settings


def _dag_section(spec: TableSpec, inference: SpecInference, output: str | None) -> list[str]:
    """The ``dag`` section the DAG factory reads, with the first partition as evidence."""
    first = first_partition(spec, inference.partitions)
    if first is None:
        return [
            "",
            *_comment(
                "No DAG: no staged partition has a time this spec reads, and the DAG "
                "factory's runs commit the partitions of their hour (or day). Commit the "
                "table with `fscommit commit`, or set the time pattern and add a "
                f"`{DAG_SECTION}:` section with its start_date."
            ),
        ]
    start, partition = first
    count = len(inference.partitions)
    zone = spec.watermark_time_zone
    lines = [
        "",
        "# How the DAG factory (dags/fscommit_tables.py) runs this table.",
        f"{DAG_SECTION}:",
        *_wrap(
            f"The first partition the stream holds, {partition} (of {count} staged), on the "
            f"partitions' wall clock ({zone}): the runs start there and catch up to now. "
            "Set it later to leave older partitions uncommitted.",
            "  # ",
        ),
    ]
    settings = _dag_settings(start, output)
    lines.append(f"  start_date: {settings['start_date']}")
    if "dag_id" in settings:
        lines += [
            "  # The file name's default; ids must differ across the folder the factory reads.",
            f"  dag_id: {settings['dag_id']}",
        ]
    else:
        lines.append("  # dag_id: fscommit_<this file's name> unless set")
    return lines


def render_spec(
    spec: TableSpec,
    inference: SpecInference,
    given: Mapping[str, Any],
    output: str | None = None,
) -> str:
    """The commented YAML spec: each inferred option under the evidence it rests on, then
    the ``dag`` section (``output``: the file it goes to, which names the DAG)."""
    import yaml  # only init writes YAML: the other commands start without it

    lines = [
        *_comment(
            f"Table spec written by `fscommit init` from what the stream wrote: "
            f"{inference.partitioning.summary}. Each inferred option says its evidence "
            "above it; check them. `fscommit status --spec FILE` shows the table as they "
            "read it, and the provider's DAGs read the same file."
        ),
        "",
        "# The streaming query's file sink output and its checkpoint.",
    ]
    given_yet = False
    for finding in _written(spec, inference, given):
        if finding.option == o.TABLE_PATH.name:
            lines.append("# The published table: compacted files, visible partitions.")
        elif finding.evidence == _POLICY:
            lines += _policy_section(spec)
        elif finding.evidence == _GIVEN:
            if not given_yet:
                lines += ["", "# Given (flags, --option, --spec), not inferred."]
            given_yet = True
        elif finding.evidence:
            lines += _comment(finding.evidence[0].upper() + finding.evidence[1:] + ".")
        if finding.value is None:  # nothing to set: the comment says why
            lines.append(f"# {finding.option}: (none)")
        else:
            lines.append(
                yaml.safe_dump(
                    {finding.option: finding.value}, allow_unicode=True, width=1000
                ).rstrip("\n")
            )
        if finding.option == o.CHECKPOINT_PATH.name and not spec.table_path:
            lines += [
                "# The published table, which compact and commit write (--table-path):",
                "# table_path: /path/to/the/published/table",
            ]
        if finding.option == o.SINK_PARTITION_COMMIT_DELAY.key:
            lines += _time_interval(inference)
    lines += _dag_section(spec, inference, output)
    return "\n".join(lines) + "\n"


def _time_interval(inference: SpecInference) -> list[str]:
    """``partition.time-interval``, commented out: only the idle-time trigger takes it."""
    interval = inference.partitioning.time_interval
    if interval is None:
        return []
    return [
        *_comment(
            "The same span is partition.time-interval of the idle-time trigger (which "
            "refuses it with any other trigger): uncomment it with that trigger."
        ),
        f"# {o.PARTITION_TIME_INTERVAL.key}: {format_duration(interval)}",
    ]


def _comment(text: str) -> list[str]:
    return _wrap(text, "# ")


def _wrap(text: str, indent: str) -> list[str]:
    """Lines of ``text`` under ``indent``; a file name or path is never split."""
    return textwrap.wrap(
        text,
        _WIDTH,
        initial_indent=indent,
        subsequent_indent=indent,
        break_on_hyphens=False,
        break_long_words=False,
    )
