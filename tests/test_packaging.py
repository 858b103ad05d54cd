"""The built wheel works on its own: installed into a fresh venv as users and the Docker image
install it (scripts/install.sh, with the constraints), away from the source tree.

The venv has the base package with the ``glue`` extra (and ``spark``'s local mode), no other
catalog's: it commits to Glue, imports no Hive, Thrift, boto or pyiceberg module with the
package, and the metastore policy used there says which extra to install (one venv for
all three: a pip install costs tens of seconds).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from fscommit_dev.tables import table_flags
from tests.support.compaction import compact_command
from tests.support.extras import IMPORT_EVERY_MODULE
from tests.support.glue import create_glue_table, glue_partitions
from tests.support.pythons import installed_venv
from tests.support.wheel import ROOT, run_wheel

pytestmark = pytest.mark.slow

# Local mode (a full pyspark for spark-submit) and one catalog's extra: not the hive one.
EXTRAS = "spark,glue"
HIVE_EXTRA = "pip install 'airflow-provider-fscommit[hive]'"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    return run_wheel(tmp_path_factory)


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory) -> Path:
    """A new venv with the wheel and :data:`EXTRAS` installed exactly as scripts/install.sh
    installs them.

    Kept (tests/support/pythons.py) under what decides its content: the wheel's files,
    ``constraints.txt``, ``install.sh`` and this Python; a change to any of them builds a
    new one, so the test still sees what a fresh install of this tree makes."""

    def install(path: Path) -> None:
        subprocess.run([sys.executable, "-m", "venv", str(path)], check=True)
        installed = subprocess.run(
            [
                str(ROOT / "scripts" / "install.sh"),
                str(path / "bin" / "python"),
                f"{wheel}[{EXTRAS}]",
            ],
            capture_output=True,
            text=True,
            timeout=1200,
        )
        assert installed.returncode == 0, installed.stdout[-3000:] + installed.stderr[-3000:]

    files = sorted((i.filename, i.CRC) for i in zipfile.ZipFile(wheel).infolist())
    inputs = [
        "packaging",
        EXTRAS,
        files,
        *((ROOT / name).read_text() for name in ("constraints.txt", "scripts/install.sh")),
    ]
    scratch = tmp_path_factory.mktemp("venv") / "venv"
    return installed_venv(Path(sys.executable), inputs, install, scratch, kind="packaging").parent


def run(venv: Path, *command: str, cwd: Path, **env: str) -> subprocess.CompletedProcess:
    """``command`` from the venv, in ``cwd`` (not the source tree), without this venv's path."""
    environ = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    environ["PATH"] = f"{venv}:{environ['PATH']}"
    return subprocess.run(
        [str(venv / command[0]), *command[1:]],
        cwd=cwd,
        env=environ | env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_the_wheel_ships_the_provider_and_no_development_tooling(wheel):
    """A user's Airflow gets the provider alone: the demo, the loopback metastore launcher
    and its Java source, the tests, the benchmarks and ``fscommit_dev`` stay in the checkout."""
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/", 1)[0] for name in names}
    assert {top for top in tops if not top.endswith(".dist-info")} == {"airflow_provider_fscommit"}
    tooling = [
        name
        for name in names
        if name.endswith((".java", "/demo.py"))
        or name.startswith("airflow_provider_fscommit/metastore/")
    ]
    assert not tooling, tooling


def test_the_installed_wheel_runs_the_cli_airflow_and_commits_to_glue(
    venv, spark, hourly_stream, s3_env, tmp_path
):
    """The base package and the ``glue`` extra: the CLI, Airflow's provider list, and a
    compaction (a spark-submit of the venv's pyspark) committed to Glue (moto's server,
    through boto3's standard chain: the environment ``s3_env`` sets)."""
    where = run(
        venv, "python", "-c", "import airflow_provider_fscommit as p; print(p.__file__)",
        cwd=tmp_path,
    )  # fmt: skip
    assert where.stdout.startswith(str(venv.parent)), where.stdout + where.stderr

    help_text = run(venv, "fscommit", "--help", cwd=tmp_path)
    assert help_text.returncode == 0, help_text.stderr
    assert "compact" in help_text.stdout and "expire" in help_text.stdout

    providers = run(
        venv, "airflow", "providers", "list", "--output", "plain", cwd=tmp_path,
        AIRFLOW_HOME=str(tmp_path / "airflow"),
    )  # fmt: skip
    assert providers.returncode == 0, providers.stderr
    assert "airflow-provider-fscommit" in providers.stdout

    table = tmp_path / "table"
    create_glue_table(s3_env.client("glue"), "fscommit", "packaged", table)
    glue = {
        "policy_kind": "glue,success-file",
        "metastore_database": "fscommit",
        "metastore_table": "packaged",
    }
    command = compact_command(
        hourly_stream.staging, hourly_stream.checkpoint, str(table), *table_flags(glue),
        "--spark-master", "local[2]", command="commit",
    )  # fmt: skip
    committed = run(venv, "fscommit", *command[1:], cwd=tmp_path)
    assert committed.returncode == 0, committed.stderr
    report = json.loads(committed.stdout)
    # The watermark is 03:10, the delay 1 h: hours 00 to 02 (from 02:00 + 1 h), late rows too.
    hours = [("2026-11-20", f"{hour:02d}") for hour in range(3)]
    outcomes = report["compaction"]["partitions"]
    published = [p["partition"] for p in outcomes if p["state"] == "published"]
    assert sorted(published) == [f"dt={dt}/hour={hour}" for dt, hour in hours]
    assert {c["state"] for c in report["commits"]} == {"committed"}
    assert spark.read.parquet(str(table)).count() == 3 * 3 + 2
    partitions = glue_partitions(s3_env.client("glue"), "fscommit", "packaged")
    assert sorted(partitions) == hours
    for dt, hour in hours:
        location = partitions[(dt, hour)]["StorageDescriptor"]["Location"]
        assert location == f"{table}/dt={dt}/hour={hour}"


# Run in the venv: import every module (what it loaded of the extras' packages), what of
# Hive is installed, and what the metastore hook says when asked for a client and for a
# table's parameters.
PROBE = (
    IMPORT_EVERY_MODULE
    + """
installed = [
    name for name in ("hmsclient", "thrift", "airflow.providers.apache.hive", "pyiceberg")
    if importlib.util.find_spec(name) is not None
]
from airflow_provider_fscommit.core.errors import MissingExtraError
from airflow_provider_fscommit.hooks.metastore import MetastoreHook

said = []
for ask in (MetastoreHook().get_conn, lambda: MetastoreHook().get_table_parameters("d", "t")):
    try:
        ask()
    except MissingExtraError as exc:
        said.append(str(exc))
print(json.dumps({"failures": failures, "loaded": loaded, "installed": installed, "said": said}))
"""
)


def test_without_the_hive_extra_nothing_imports_hive_and_the_metastore_policy_names_it(
    venv, hourly_stream, tmp_path
):
    """The base package imports no catalog's client (the ``glue`` extra's boto3 is there and
    stays unimported too); the metastore policy, from the CLI or through its hook, fails
    before any work with the one message that names the ``hive`` extra."""
    probe = run(venv, "python", "-c", PROBE, cwd=tmp_path, AIRFLOW_HOME=str(tmp_path / "af"))
    assert probe.returncode == 0, probe.stderr[-3000:]
    found = json.loads(probe.stdout.splitlines()[-1])
    assert found["failures"] == {}
    assert found["loaded"] == []
    assert found["installed"] == []  # the venv is what a user without the extra has
    assert len(found["said"]) == 2
    assert all(said.endswith(HIVE_EXTRA) for said in found["said"]), found["said"]

    metastore = {
        "policy_kind": "metastore,success-file",
        "metastore_database": "fscommit",
        "metastore_table": "events",
    }
    table = tmp_path / "table"
    command = compact_command(
        hourly_stream.staging, hourly_stream.checkpoint, str(table), *table_flags(metastore),
        "--metastore-uri", "thrift://127.0.0.1:9", "--spark-master", "local[2]",
        command="commit",
    )  # fmt: skip
    refused = run(venv, "fscommit", *command[1:], cwd=tmp_path)
    assert refused.returncode == 1, refused.stdout + refused.stderr
    (message,) = [line for line in refused.stderr.splitlines() if line.strip()]
    assert "the metastore policy needs the 'hive' extra" in message
    assert message.endswith(HIVE_EXTRA)
    assert not table.exists()  # refused before compacting anything
