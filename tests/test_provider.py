"""Airflow discovers the package as a provider through its entry point."""

import subprocess
import sys
from pathlib import Path

from airflow_provider_fscommit.get_provider_info import get_provider_info


def test_provider_info_names_the_package():
    info = get_provider_info()
    assert info["package-name"] == "airflow-provider-fscommit"
    assert info["versions"]


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


def test_readme_lists_every_flink_option_and_both_set_up_commands():
    from airflow_provider_fscommit.core.options import OPTIONS

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    for option in OPTIONS:
        if option.key:
            assert f"`{option.key}`" in readme, option.key
    commands = [line for line in readme.split("```")[1].splitlines()[1:] if line.strip()]
    assert [c.split("#")[0].strip() for c in commands] == ["make demo", "make test"]


def test_the_readme_dag_parses_and_templates_the_partition():
    from airflow_provider_fscommit.operators.compact import PartitionCompactOperator

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
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
