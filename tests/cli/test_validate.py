"""``fscommit validate``: a folder of spec files checked as the DAG factory reads them,
one line per problem naming file and option, exit 0 or 1 for a deployment's CI."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from airflow_provider_fscommit.cli.main import main
from tests.support.documents import code_blocks

EXAMPLE_SPECS = Path(__file__).resolve().parents[2] / "dags" / "specs"


@pytest.fixture
def specs(tmp_path) -> Path:
    folder = tmp_path / "specs"
    shutil.copytree(EXAMPLE_SPECS, folder)
    return folder


def test_the_example_folder_is_good_and_says_what_each_table_runs(specs, capsys):
    assert main(["validate", str(specs)]) == 0
    out = capsys.readouterr().out
    assert out.strip().splitlines()[:4] == [
        f"{specs / 'clicks.yaml'}: table /data/warehouse/clicks (metastore, success-file)",
        "  clicks: 0 * * * * (UTC), catch-up: "
        "partition_commit.wait -> partition_commit.compact -> partition_commit.commit",
        "  clicks_maintenance: every 1 h: sweep.discover -> sweep.compact -> sweep.commit",
        "  sweep every 1 h; expire off (no partition.expiration-time); "
        "clean off (no dag.clean-staging)",
    ]
    assert out.strip().splitlines()[-1] == "2 spec file(s) good, 0 with 0 problem(s)"


def test_a_table_that_publishes_to_no_catalog_is_warned_about_not_refused(specs, capsys):
    assert main(["validate", str(specs / "orders.yaml")]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].endswith("(success-file)")
    assert lines[1].startswith("  warning: sink.partition-commit.policy.kind is success-file ")
    assert "name a catalog policy (metastore, glue or iceberg)" in lines[1]
    assert main(["validate", "--json", str(specs / "clicks.yaml")]) == 0
    (table,) = json.loads(capsys.readouterr().out)["tables"]
    assert table["policies"] == ["metastore", "success-file"] and table["warnings"] == []


def test_expiry_and_clean_up_show_only_when_the_spec_asks(specs, capsys):
    path = _break(
        specs,
        "zz_kept.yaml",
        **{
            "dag.dag_id": "kept",
            "table_path": "/t/kept",
            "dag.sweep": "30 min",
            "dag.clean-staging": "7 d",
            "partition.expiration-time": "90 d",
        },
    )
    assert main(["validate", "--json", str(path)]) == 0
    (table,) = json.loads(capsys.readouterr().out)["tables"]
    assert table["dags"]["kept_maintenance"] == {
        "schedule": "every 30 min",
        "tasks": ["sweep.discover", "sweep.compact", "sweep.commit", "expire", "clean"],
        "catchup": False,
    }
    assert table["sweep"] == "30 min" and table["expire"] == "after 90 d (values-time)"
    assert main(["validate", str(path)]) == 0
    assert (
        "  sweep every 30 min; expire after 90 d (values-time); "
        "clean published staged files older than 7 d"
    ) in capsys.readouterr().out.splitlines()


def _break(folder: Path, name: str, **changes) -> Path:
    spec = yaml.safe_load((folder / "clicks.yaml").read_text())
    for key, value in changes.items():
        if key.startswith("dag."):
            spec["dag"][key[4:]] = value
        else:
            spec[key] = value
    path = folder / name
    path.write_text(yaml.safe_dump(spec))
    return path


@pytest.mark.parametrize(
    ("changes", "option"),
    [
        ({"sink.partition-commit.delay": "soon"}, "sink.partition-commit.delay"),
        ({"sink.partition-commit.delya": "1 h"}, "sink.partition-commit.delya"),
        ({"metastore_table": None}, "sink.partition-commit.policy.kind"),
        (  # no key holds the time: no run can name its partitions
            {"partition.time-extractor.timestamp-pattern": "2026-11-20"},
            "partition.time-extractor.timestamp-pattern",
        ),
        ({"dag.start_date": "last tuesday"}, "dag.start_date"),
        ({"dag.retries": "three"}, "dag.retries"),
        ({"dag.schedule": "@daily"}, "dag.schedule"),
        ({"dag.interval": "1 d"}, "dag.interval"),
    ],
)
def test_each_problem_is_one_line_naming_file_and_option(specs, capsys, changes, option):
    path = _break(
        specs, "zz_broken.yaml", **{"dag.dag_id": "zz_broken", "table_path": "/t/zz"}, **changes
    )
    assert main(["validate", str(specs)]) == 1
    lines = capsys.readouterr().out.strip().splitlines()
    # What the two good files run (a line naming the table, then indented lines: four for
    # clicks, five for orders with its warning) first.
    problems = [line for line in lines[:-1] if not line.startswith("  ") and ": table " not in line]
    assert problems == lines[9:-1] and len(problems) == 1, lines
    assert problems[0].startswith(f"{path}: {option}: "), lines
    assert lines[-1] == "2 spec file(s) good, 1 with 1 problem(s)"


def test_files_and_folders_together_and_json(specs, capsys):
    _break(specs, "zz_twin.yaml")  # the clicks table again: same DAG id and table
    bad_yaml = specs.parent / "bad.yml"
    bad_yaml.write_text("staging_path: /s\n  x: [\n")
    assert main(["validate", "--json", str(specs), str(bad_yaml)]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is False
    assert report["dags"] == {
        "clicks": str(specs / "clicks.yaml"),
        "clicks_maintenance": str(specs / "clicks.yaml"),
        "fscommit_orders": str(specs / "orders.yaml"),
        "fscommit_orders_maintenance": str(specs / "orders.yaml"),
    }
    assert [(p["file"], p["option"]) for p in report["problems"]] == [
        (str(specs / "zz_twin.yaml"), "dag.dag_id"),
        (str(specs / "zz_twin.yaml"), "table_path"),
        (str(bad_yaml), "file"),
    ]


def test_a_missing_folder_is_an_error_and_no_folder_a_usage_error(tmp_path, capsys):
    assert main(["validate", str(tmp_path / "nope")]) == 1
    assert "neither a spec file nor a folder" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_info:
        main(["validate"])
    assert exit_info.value.code == 2


def test_validate_loads_no_airflow(specs):
    """A deployment's CI checks its specs without an Airflow to configure."""
    code = (
        "import sys; from airflow_provider_fscommit.cli.main import main; "
        f"code = main(['validate', {str(specs)!r}]); print(code, 'airflow' in sys.modules)"
    )
    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert ran.stdout.strip().splitlines()[-1] == "0 False", ran.stderr[-2000:]


@pytest.mark.parametrize(
    "example",
    [b for b in code_blocks("yaml") if "staging_path:" in b.code and "\ndag:" in b.code],
    ids=lambda block: block.name,
)
def test_every_spec_the_docs_show_validates(example, tmp_path, capsys):
    """A spec copied from the README or a guide is one the factory takes as it is."""
    (tmp_path / "table.yaml").write_text(example.code)
    assert main(["validate", str(tmp_path / "table.yaml")]) == 0, capsys.readouterr().out
