"""The table spec accepts Flink's option keys verbatim and survives JSON round trips."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.errors import ConfigError
from airflow_provider_fscommit.core.partition.commit_trigger import (
    PartitionTimeCommitTrigger,
    ProcTimeCommitTrigger,
)
from fscommit_dev.metastore.client import metastore_table_spec

BASE = {
    "staging_path": "/data/staging",
    "checkpoint_path": "/data/ckpt",
    "partition_keys": "dt,hour",
}

FLINK_OPTIONS = {
    "sink.partition-commit.trigger": "partition-time",
    "sink.partition-commit.delay": "1 h",
    "sink.partition-commit.watermark-time-zone": "Asia/Shanghai",
    "sink.partition-commit.policy.kind": "metastore,success-file,custom",
    "metastore_table": "events",
    "sink.partition-commit.policy.class": "my.policies.Notify",
    "sink.partition-commit.policy.class.parameters": "a;b;c=d",
    "sink.partition-commit.success-file.name": "_DONE",
    "partition.time-extractor.kind": "default",
    "partition.time-extractor.timestamp-pattern": "$dt $hour:00:00",
    "partition.time-extractor.timestamp-formatter": "yyyy-MM-dd HH:mm:ss",
    "auto-compaction": "false",
    "compaction.file-size": "64MB",
    "partition.default-name": "__NULL__",
}


def test_flink_options_pasted_verbatim_mean_what_they_mean_in_flink():
    spec = TableSpec.from_options(BASE | FLINK_OPTIONS)
    assert spec.partition_keys == ("dt", "hour")
    assert spec.delay == timedelta(hours=1)
    assert spec.watermark_time_zone == "Asia/Shanghai"
    assert spec.policy_kind == ("metastore", "success-file", "custom")
    assert spec.policy_class_parameters == ("a", "b", "c=d")
    assert spec.success_file_name == "_DONE"
    assert spec.auto_compaction is False
    assert spec.compaction_file_size == 64 * 1024 * 1024
    assert spec.partition_default_name == "__NULL__"
    assert isinstance(spec.commit_trigger, PartitionTimeCommitTrigger)


def test_defaults_are_flinks_unless_the_spec_says_otherwise():
    spec = TableSpec.from_options(BASE)
    assert spec.trigger == "partition-time"
    assert spec.delay == timedelta(0)
    assert spec.watermark_time_zone == "UTC"
    assert spec.success_file_name == "_SUCCESS"
    assert spec.auto_compaction is True
    assert spec.compaction_file_size == 128 * 1024 * 1024
    assert spec.partition_default_name == "__HIVE_DEFAULT_PARTITION__"


@pytest.mark.parametrize(
    "extra",
    [
        {},
        FLINK_OPTIONS,
        {"trigger": "process-time", "delay": "90 s"},
        {"partition.idle-time-to-done": "15 min", "partition.time-interval": "1 h"},
    ],
)
def test_json_round_trip(extra):
    spec = TableSpec.from_options(BASE | extra)
    text = spec.to_json()
    assert json.loads(text) == spec.to_dict()
    assert TableSpec.from_json(text) == spec


def test_process_time_trigger():
    spec = TableSpec.from_options(BASE | {"sink.partition-commit.trigger": "process-time"})
    assert isinstance(spec.commit_trigger, ProcTimeCommitTrigger)


def test_kinds_are_read_in_any_case_and_kept_lower_case():
    # Flink reads sink.partition-commit.trigger as an enum and policy kinds with
    # toLowerCase (PartitionCommitPolicyFactory), so 'PROCESS-TIME' and 'Metastore' work.
    spec = TableSpec.from_options(
        BASE
        | {
            "sink.partition-commit.trigger": "PROCESS-TIME",
            "sink.partition-commit.policy.kind": "Metastore,SUCCESS-FILE",
            "metastore_table": "events",
            "partition.time-extractor.kind": "Default",
        }
    )
    assert spec.trigger == "process-time"
    assert isinstance(spec.commit_trigger, ProcTimeCommitTrigger)
    assert spec.policy_kind == ("metastore", "success-file")
    assert spec.time_extractor_kind == "default"
    assert TableSpec.from_json(spec.to_json()) == spec


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"sink.partition-commit.dealy": "1 h"}, "did you mean sink.partition-commit.delay"),
        ({"sink.partition-commit.delay": "soon"}, "cannot parse duration 'soon'"),
        ({"delay": "1 h", "sink.partition-commit.delay": "2 h"}, "given twice"),
        ({"sink.partition-commit.trigger": "event-time"}, "not one of partition-time"),
        ({"sink.partition-commit.watermark-time-zone": "Moon/Base"}, "not a valid time zone"),
        ({"partition.time-extractor.timestamp-pattern": "$day"}, r"references '\$day'"),
        ({"sink.partition-commit.policy.kind": "metastore,email"}, r"unknown policies \['email'\]"),
        ({"sink.partition-commit.policy.kind": "custom"}, "policy.class is not set"),
        ({"sink.partition-commit.policy.kind": "metastore,METASTORE"}, "names an entry twice"),
        ({"auto-compaction": "yes"}, "expected true or false"),
        ({"partition_keys": "dt,dt"}, "names an entry twice"),
        ({"partition_keys": ""}, "lacks required option"),
        ({"table_path": "/data/staging/published"}, "overlap"),
        ({"table_path": "/data"}, "overlap"),
    ],
)
def test_bad_options_get_one_clear_message(extra, message):
    with pytest.raises(ConfigError, match=message):
        TableSpec.from_options(BASE | extra)


def test_missing_required_options_are_listed():
    with pytest.raises(ConfigError, match=r"lacks required option.*checkpoint_path"):
        TableSpec.from_options({"staging_path": "/s", "partition_keys": "dt"})


def test_a_spec_file_in_yaml_or_json_gives_the_same_spec(tmp_path):
    yaml_file = tmp_path / "table.yaml"
    yaml_file.write_text(
        "staging_path: /data/staging\n"
        "checkpoint_path: /data/ckpt\n"
        "partition_keys: dt,hour\n"
        "sink.partition-commit.delay: 1 h\n"
        "partition.time-extractor.timestamp-pattern: $dt $hour:00:00\n"
    )
    json_file = tmp_path / "table.json"
    json_file.write_text(
        json.dumps(
            BASE
            | {
                "sink.partition-commit.delay": "1 h",
                "partition.time-extractor.timestamp-pattern": "$dt $hour:00:00",
            }
        )
    )
    from_yaml = TableSpec.from_file(str(yaml_file))
    assert from_yaml == TableSpec.from_file(str(json_file))
    assert from_yaml.delay == timedelta(hours=1)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read the table spec file"),
        ("staging_path: [unclosed", "is not valid YAML/JSON"),
        ("- a list\n- of things\n", "must hold a mapping of table options"),
        ("staging_path: /s\ncheckpoint_path: /c\nstaging: /x\n", "staging"),
    ],
)
def test_a_bad_spec_file_is_refused_with_its_name(tmp_path, content, message):
    path = tmp_path / "table.yaml"
    if content is not None:
        path.write_text(content)
    with pytest.raises(ConfigError, match=message) as error:
        TableSpec.from_file(str(path))
    if content is None or "list" in content or "unclosed" in content:
        assert str(path) in str(error.value)


def test_partitions_given_as_values_are_escaped_like_spark_names_directories():
    spec = TableSpec.from_options(BASE)
    assert spec.partition_path({"dt": "2026-11-20", "hour": "03"}) == "dt=2026-11-20/hour=03"
    assert spec.partition_path({"dt": "../..", "hour": "a/b"}) == "dt=..%2F../hour=a%2Fb"
    assert spec.partition_path({"hour": 3, "dt": None}) == ("dt=__HIVE_DEFAULT_PARTITION__/hour=3")
    assert spec.partition_paths(["dt=x/hour=1", {"dt": "y", "hour": "2"}]) == [
        "dt=x/hour=1",
        "dt=y/hour=2",
    ]


@pytest.mark.parametrize(
    "partition",
    [
        {"dt": "2026-11-20"},
        {"dt": "2026-11-20", "hour": "03", "minute": "00"},
        "dt=2026-11-20",
        "hour=03/dt=2026-11-20",
    ],
)
def test_partitions_that_do_not_match_the_keys_are_refused(partition):
    from airflow_provider_fscommit.core.errors import PartitionPathError

    with pytest.raises(PartitionPathError, match=r"partition keys (are )?\['dt', 'hour'\]"):
        TableSpec.from_options(BASE).partition_paths(partition)


# The WITH clause of the Flink filesystem connector page's streaming sink example, with
# the connector's other sink options around it.
FLINK_DDL_WITH = {
    "connector": "filesystem",
    "path": "s3://bucket/fs_table",
    "format": "parquet",
    "parquet.compression": "SNAPPY",
    "partition.time-extractor.timestamp-pattern": "$dt $hour:00:00",
    "sink.partition-commit.delay": "1 h",
    "sink.partition-commit.trigger": "partition-time",
    "sink.partition-commit.watermark-time-zone": "Asia/Shanghai",
    "sink.partition-commit.policy.kind": "success-file",
    "sink.rolling-policy.file-size": "128MB",
    "sink.rolling-policy.rollover-interval": "30 min",
    "sink.rolling-policy.inactivity-interval": "30 min",
    "sink.rolling-policy.check-interval": "1 min",
    "sink.shuffle-by-partition.enable": "true",
    "sink.parallelism": "4",
    "auto-compaction": "true",
    "compaction.file-size": "256MB",
    "compaction.parallelism": "2",
}


def test_a_whole_flink_with_clause_pastes_in_with_one_warning(caplog):
    spec = TableSpec.from_options(BASE | FLINK_DDL_WITH)
    assert spec.delay == timedelta(hours=1)
    assert spec.policy_kind == ("success-file",)
    assert spec.compaction_file_size == 256 * 1024 * 1024
    [warning] = [r for r in caplog.records if r.levelname == "WARNING"]
    assert warning.getMessage() == (
        "ignoring Flink option(s) that do not apply to a Spark stream: connector, path, "
        "parquet.compression, sink.rolling-policy.file-size, "
        "sink.rolling-policy.rollover-interval, sink.rolling-policy.inactivity-interval, "
        "sink.rolling-policy.check-interval, sink.shuffle-by-partition.enable, "
        "sink.parallelism, compaction.parallelism (Flink's 'path' is where the sink writes "
        "and readers read; here those are staging_path and table_path)"
    )
    caplog.clear()
    assert TableSpec.from_json(spec.to_json()) == spec  # nothing of them carried over
    assert "connector" not in spec.to_dict()
    assert not caplog.records


def test_the_format_is_kept_and_only_the_formats_own_flink_keys_are_ignored(caplog):
    spec = TableSpec.from_options(
        BASE | {"format": "CSV", "csv.field-delimiter": ";", "csv.header": "true"}
    )
    assert spec.format == "csv" and spec.csv_header is True
    [warning] = caplog.records
    assert warning.getMessage().endswith("Spark stream: csv.field-delimiter")
    assert TableSpec.from_json(spec.to_json()) == spec
    assert TableSpec.from_options(BASE).format is None  # detected from the files


def test_a_csv_header_on_another_format_is_refused():
    with pytest.raises(ConfigError, match=r"csv.header is set but the format is orc"):
        TableSpec.from_options(BASE | {"format": "orc", "csv_header": True})


def test_a_format_spark_does_not_write_is_refused_naming_those_it_does():
    with pytest.raises(
        ConfigError,
        match=r"format: 'avro' is not a format Spark's file sink writes; use "
        r"one of parquet, orc, json, csv, text",
    ):
        TableSpec.from_options(BASE | {"format": "avro"})


def test_a_key_neither_ours_nor_flinks_is_still_an_error():
    with pytest.raises(
        ConfigError,
        match=r"'sink.rolling-policy.file-sise'; did you mean sink.rolling-policy.file-size",
    ):
        TableSpec.from_options(BASE | FLINK_DDL_WITH | {"sink.rolling-policy.file-sise": "1MB"})
    with pytest.raises(ConfigError, match=r"'json.fail-on-missing-field'"):
        TableSpec.from_options(BASE | {"json.fail-on-missing-field": "true"})


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"trigger": "idle-time"}, "needs partition.idle-time-to-done"),
        (
            {"trigger": "partition-time", "partition.idle-time-to-done": "5 min"},
            "only applies to the idle-time trigger",
        ),
        ({"partition.idle-time-to-done": "5 min"}, r"needs partition.time-interval.*'1 h'"),
        (
            {"trigger": "process-time", "partition.time-interval": "1 h"},
            "partition.time-interval is set but the trigger is process-time",
        ),
        (
            {"partition.idle-time-to-done": "5 min", "partition.time-interval": "0 s"},
            "expected a positive duration",
        ),
        (
            {
                "partition.idle-time-to-done": "5 min",
                "partition.time-interval": "1 h",
                "timestamp_pattern": "$day",
            },
            "day",
        ),
        (
            {
                "partition.idle-time-to-done": "5 min",
                "partition.time-interval": "1 h",
                "delay": "1 h",
            },
            "drop the delay",
        ),
        ({"partition.idle-time-to-done": "-5 min"}, "expected a positive duration"),
        ({"partition.idle-time-to-done": "0 s"}, "expected a positive duration"),
    ],
)
def test_idle_time_settings_that_cannot_work_are_refused(extra, message):
    with pytest.raises(ConfigError, match=message):
        TableSpec.from_options(BASE | extra)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"sink.partition-commit.policy.kind": "success-file,metastore"}, "success-file before"),
        ({"sink.partition-commit.policy.kind": "mark-event,metastore"}, "mark-event before"),
        (
            {"sink.partition-commit.policy.kind": "mark-event", "metastore_table": None},
            "includes 'mark-event' but no metastore table",
        ),
        ({"sink.partition-commit.policy.kind": "metastore,hive-event"}, "unknown policies"),
        (
            {"sink.partition-commit.policy.kind": "metastore", "metastore_table": None},
            "no metastore table",
        ),
    ],
)
def test_policy_configuration_errors(tmp_path, options, message):
    with pytest.raises(ConfigError, match=message):
        metastore_table_spec(tmp_path / "t", "x", **options)


def test_overrides_replace_an_option_under_either_name_and_keep_flink_only_keys():
    options = BASE | {"connector": "filesystem", "compaction.sort-by": "k"}
    overridden = TableSpec.with_overrides(options, TableSpec.order_overrides(z_order_by="a,b"))
    assert "compaction.sort-by" not in overridden and overridden["connector"] == "filesystem"
    spec = TableSpec.from_options(overridden)
    assert (spec.compaction_sort_by, spec.compaction_z_order_by) == ((), ("a", "b"))
    assert TableSpec.options_of(options, end_of_input=True)["end_of_input"] is True
    bloom = {"parquet.bloom.filter.enabled#k": "true", "parquet.bloom.filter.expected.ndv#k": "9"}
    assert TableSpec.from_options(BASE | bloom).parquet_bloom_filters == {"k": 9}
    with pytest.raises(ConfigError, match=r"expected.ndv#v is set but .*enabled#v is not true"):
        TableSpec.from_options(BASE | {"parquet.bloom.filter.expected.ndv#v": 5})
    # An Iceberg catalog property overridden alone keeps the spec's other properties.
    iceberg = {"iceberg.catalog.type": "sql", "iceberg.catalog.uri": "sqlite:///a.db"}
    overridden = TableSpec.with_overrides(BASE | iceberg, {"iceberg.catalog.uri": "sqlite:///b"})
    assert TableSpec.from_options(overridden).iceberg_catalog == {
        "type": "sql",
        "uri": "sqlite:///b",
    }
