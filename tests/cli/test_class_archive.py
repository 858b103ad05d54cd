"""``fscommit class-archive``: what it wrote or kept, and a clear refusal where no archive
can be written (the archive its application writes: tests/jobs/test_warm_up.py)."""

from __future__ import annotations

import json

import pytest

from airflow_provider_fscommit.cli.main import main
from airflow_provider_fscommit.jobs.class_archive import DIR_ENV, located
from airflow_provider_fscommit.jobs.launch import SparkInstallation


def test_an_archive_already_there_is_kept_and_nothing_is_run(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(DIR_ENV, str(tmp_path / "jvm"))
    archive = located(SparkInstallation.locate())
    archive.parent.mkdir()
    archive.write_bytes(b"an archive an earlier call wrote")
    stamp = archive.stat().st_mtime_ns
    assert main(["class-archive"]) == 0
    assert capsys.readouterr().out == f"Kept {archive}\n"
    assert main(["class-archive", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"archive": str(archive), "written": False}
    assert archive.stat().st_mtime_ns == stamp
    assert sorted(p.name for p in archive.parent.iterdir()) == [archive.name]


@pytest.mark.parametrize(
    ("setting", "flags", "named"),
    [
        ("off", [], f"{DIR_ENV} is 'off'"),
        (None, ["--spark-submit", "/bin/false"], "/bin/false has no Spark jars folder"),
    ],
)
def test_where_no_archive_can_be_written_the_command_says_why(
    setting, flags, named, tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv(DIR_ENV, setting or str(tmp_path / "jvm"))
    assert main(["class-archive", *flags]) == 1
    assert named in capsys.readouterr().err
    assert not (tmp_path / "jvm").exists()
