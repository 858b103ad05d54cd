"""Airflow discovers the package as a provider: its entry point and what it lists."""

import importlib
import inspect
import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import airflow
import jsonschema
import pytest
from airflow.sdk import BaseOperator, BaseSensorOperator
from airflow.triggers.base import BaseTrigger

import airflow_provider_fscommit
from airflow_provider_fscommit.get_provider_info import get_provider_info
from airflow_provider_fscommit.hooks.aws import AwsStorageHook
from airflow_provider_fscommit.hooks.commit import PartitionCommitHook
from airflow_provider_fscommit.hooks.compaction import CompactionHook
from airflow_provider_fscommit.hooks.http_report import HttpReportHook
from airflow_provider_fscommit.hooks.metastore import MetastoreHook
from airflow_provider_fscommit.version_compat import BaseHook

ROOT = Path(__file__).resolve().parents[1]


def test_provider_info_names_the_package():
    info = get_provider_info()
    assert info["package-name"] == "airflow-provider-fscommit"
    assert info["versions"]


# Importing every module imports the moved operators' old paths too (test_deprecated_modules).
@pytest.mark.filterwarnings(r"ignore:airflow_provider_fscommit\.operators\.\w+ is deprecated")
def test_provider_info_is_valid_for_airflow_and_lists_every_hook_operator_sensor_and_trigger():
    info = get_provider_info()
    schema = json.loads((Path(airflow.__file__).parent / "provider_info.schema.json").read_text())
    jsonschema.validate(info, schema)

    integrations = {i["integration-name"] for i in info["integrations"]}
    listed = {}
    for section in ("hooks", "operators", "sensors", "triggers"):
        assert {entry["integration-name"] for entry in info[section]} <= integrations
        listed[section] = {m for entry in info[section] for m in entry["python-modules"]}
    # What the package's modules define, by base class: nothing missing, nothing stale.
    defined: dict[str, set[str]] = {section: set() for section in listed}
    for module in pkgutil.walk_packages(
        airflow_provider_fscommit.__path__, "airflow_provider_fscommit."
    ):
        loaded = importlib.import_module(module.name)
        for _, cls in inspect.getmembers(loaded, inspect.isclass):
            if cls.__module__ != module.name:
                continue
            if issubclass(cls, BaseHook):
                defined["hooks"].add(module.name)
            elif issubclass(cls, BaseTrigger):
                defined["triggers"].add(module.name)
            elif issubclass(cls, BaseSensorOperator):
                defined["sensors"].add(module.name)
            elif issubclass(cls, BaseOperator):
                defined["operators"].add(module.name)
    assert listed == defined


@pytest.mark.parametrize(
    "hook", [AwsStorageHook, CompactionHook, HttpReportHook, MetastoreHook, PartitionCommitHook]
)
def test_a_hook_declares_its_connection_of_a_type_its_own_provider_registers(hook):
    """Airflow's hook attributes, for a connection type the provider of that system defines
    (this one registers none: ``connection-types`` would claim them)."""
    from airflow.providers_manager import ProvidersManager

    registered = {
        connection_type["connection-type"]: name
        for name, provider in ProvidersManager().providers.items()
        for connection_type in provider.data.get("connection-types", [])
    }
    attributes = ("conn_name_attr", "default_conn_name", "conn_type", "hook_name")
    assert all(vars(hook).get(attribute) for attribute in attributes)
    assert hook.conn_name_attr in inspect.signature(hook).parameters
    assert registered.get(hook.conn_type) not in (None, "airflow-provider-fscommit")
    assert "connection-types" not in get_provider_info()


def test_airflow_providers_list_shows_it(tmp_path):
    airflow = str(Path(sys.executable).parent / "airflow")
    result = subprocess.run(
        [airflow, "providers", "list", "--output", "plain"],
        capture_output=True,
        text=True,
        env={"AIRFLOW_HOME": str(tmp_path), "PATH": str(Path(sys.executable).parent)},
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "airflow-provider-fscommit" in result.stdout
