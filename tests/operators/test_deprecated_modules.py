"""The operator modules' old paths (before they were named after their operators) still
import the same classes, and warn as Airflow's providers warn of a moved module."""

from __future__ import annotations

import importlib
import sys

import pytest
from airflow.exceptions import AirflowProviderDeprecationWarning

from airflow_provider_fscommit.get_provider_info import get_provider_info

PACKAGE = "airflow_provider_fscommit.operators"


@pytest.mark.parametrize(
    ("old", "new", "name"),
    [
        ("expiration", "partition_expire", "PartitionExpireOperator"),
        ("retention", "clean_staging", "CleanStagingOperator"),
        ("discover", "committable_partitions", "CommittablePartitionsOperator"),
    ],
)
def test_an_old_module_path_warns_and_gives_the_same_operator(monkeypatch, old, new, name):
    monkeypatch.delitem(sys.modules, f"{PACKAGE}.{old}", raising=False)  # warn on this import
    message = rf"{PACKAGE}\.{old} is deprecated; import {name} from {PACKAGE}\.{new}"
    with pytest.warns(AirflowProviderDeprecationWarning, match=message):
        moved = importlib.import_module(f"{PACKAGE}.{old}")
    assert getattr(moved, name) is getattr(importlib.import_module(f"{PACKAGE}.{new}"), name)
    listed = {m for entry in get_provider_info()["operators"] for m in entry["python-modules"]}
    assert f"{PACKAGE}.{new}" in listed and f"{PACKAGE}.{old}" not in listed
