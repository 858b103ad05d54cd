"""Airflow discovers the package as a provider through its entry point."""

import importlib
import inspect
import json
import pkgutil
import re
import subprocess
import sys
from glob import glob
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


def test_the_options_reference_lists_every_flink_option_and_the_readme_both_set_up_commands():
    from airflow_provider_fscommit.core.config.options import OPTIONS

    reference = (ROOT / "docs" / "options.md").read_text()
    for option in OPTIONS:
        if option.key:
            assert f"`{option.key}`" in reference, option.key
    readme = (ROOT / "README.md").read_text()
    commands = [line for line in readme.split("```")[1].splitlines()[1:] if line.strip()]
    assert [c.split("#")[0].strip() for c in commands] == ["make demo", "make test"]


def test_the_readme_dag_parses_and_templates_the_partition():
    from airflow_provider_fscommit.operators.compact import PartitionCompactOperator

    readme = (ROOT / "README.md").read_text()
    (snippet,) = [
        block.removeprefix("python\n")
        for block in readme.split("```")
        if block.startswith("python\n") and "PartitionCompactOperator(" in block
    ]
    namespace: dict = {}
    exec(compile(snippet, "README.md", "exec"), namespace)
    (task,) = namespace["dag"].tasks
    assert isinstance(task, PartitionCompactOperator)
    assert "partitions" in task.template_fields
    assert task.table["table_path"] == "s3://lake/tables/events"


def readme_section(readme: str, heading: str) -> str:
    start = readme.index(f"\n## {heading}\n")
    return readme[start : readme.index("\n## ", start + 1)]


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as dashes."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@pytest.mark.parametrize(
    "document",
    ["README.md", "DEVELOPERS.md", "bench/README.md", *sorted(glob("docs/*.md", root_dir=ROOT))],
)
def test_relative_links_reach_a_file_and_a_heading(document):
    """Moving reference material between the README and docs/ must not leave dead links."""
    source = ROOT / document
    for target in re.findall(r"\]\(([^)\s]+)\)", source.read_text()):
        if re.match(r"[a-z]+:", target):
            continue  # an external address
        path, _, fragment = target.partition("#")
        linked = (source.parent / path).resolve() if path else source
        assert linked.exists(), f"{document}: {target}"
        if fragment:
            headings = re.findall(r"^#+ (.+)$", linked.read_text(), re.M)
            assert fragment in {anchor(h) for h in headings}, f"{document}: {target}"


def test_readme_contents_link_every_section():
    readme = (ROOT / "README.md").read_text()
    headings = [line[3:] for line in readme.splitlines() if line.startswith("## ")]
    contents = readme_section(readme, "Contents").splitlines()
    linked = [line[3 : line.index("](")] for line in contents if line.startswith("- [")]
    assert linked == [h for h in headings if h != "Contents"]


def core_layout(layout: str) -> dict[str, set[str]]:
    """The README's core listing: each package (``*.py`` for the core's own modules) and
    its modules; comments in parentheses are left out."""
    listing: dict[str, set[str]] = {}
    block = layout[layout.index("core/") : layout.index("cli/")].splitlines()[1:]
    for line in block:
        heading = re.match(r" {4}(\S+?)/?\s{2,}(.*)", line)
        if heading:
            package, line = heading.groups()
        names = re.sub(r"\([^)]*\)", "", line)
        listing.setdefault(package, set()).update(n for n in re.split(r"[\s,]+", names) if n)
    return listing


def test_readme_layout_names_every_module_and_package():
    root = Path(__file__).resolve().parents[1]
    layout = readme_section((root / "README.md").read_text(), "Layout")
    package = root / "airflow_provider_fscommit"
    assert core_layout(layout) == {
        directory.name if directory.name != "core" else "*.py": {
            module.stem for module in directory.glob("*.py") if module.name != "__init__.py"
        }
        for directory in [package / "core", *(package / "core").glob("*/")]
        if (directory / "__init__.py").exists()
    }
    for entry in package.iterdir():
        if entry.is_dir() and (entry / "__init__.py").exists():
            assert f"{entry.name}/" in layout, entry.name
        elif entry.suffix == ".py" and entry.name not in ("__init__.py", "get_provider_info.py"):
            assert entry.name in layout, entry.name
