"""The table spec accepts Flink's option keys verbatim and survives JSON round trips."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from airflow_provider_fscommit.core import options
from airflow_provider_fscommit.core.commit_trigger import (
    PartitionTimeCommitTrigger,
    ProcTimeCommitTrigger,
)
from airflow_provider_fscommit.core.errors import ConfigError
from airflow_provider_fscommit.core.table_spec import TableSpec

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


@pytest.mark.parametrize("extra", [{}, FLINK_OPTIONS, {"trigger": "process-time", "delay": "90 s"}])
def test_json_round_trip(extra):
    spec = TableSpec.from_options(BASE | extra)
    text = spec.to_json()
    assert json.loads(text) == spec.to_dict()
    assert TableSpec.from_json(text) == spec


def test_process_time_trigger():
    spec = TableSpec.from_options(BASE | {"sink.partition-commit.trigger": "process-time"})
    assert isinstance(spec.commit_trigger, ProcTimeCommitTrigger)


def test_every_option_has_a_description_and_flink_keys_are_unique():
    keys = [o.key for o in options.OPTIONS if o.key]
    assert len(keys) == len(set(keys))
    assert all(o.description for o in options.OPTIONS)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"sink.partition-commit.dealy": "1 h"}, "did you mean sink.partition-commit.delay"),
        ({"sink.partition-commit.delay": "soon"}, "cannot parse duration 'soon'"),
        ({"delay": "1 h", "sink.partition-commit.delay": "2 h"}, "given twice"),
        ({"sink.partition-commit.trigger": "event-time"}, "not one of partition-time"),
        ({"sink.partition-commit.watermark-time-zone": "Moon/Base"}, "not a known time zone"),
        ({"partition.time-extractor.timestamp-pattern": "$day"}, r"references '\$day'"),
        ({"sink.partition-commit.policy.kind": "metastore,email"}, r"unknown policies \['email'\]"),
        ({"sink.partition-commit.policy.kind": "custom"}, "policy.class is not set"),
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
